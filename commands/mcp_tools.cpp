// The MCP tools of mcp_tools.hpp: their descriptions and schemas, and each call — arguments
// checked (core/mcp/arguments), the index searched or read through the place the transport
// gives, the result as text for every client and as structured content.
#include "commands/mcp_tools.hpp"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <utility>

#include "commands/embedder_setup.hpp"
#include "commands/open_index.hpp"
#include "commands/setup.hpp"
#include "commands/store_search.hpp"
#include "core/index/indexable.hpp"
#include "core/mcp/arguments.hpp"
#include "core/mcp/files.hpp"
#include "core/repo/source.hpp"
#include "core/search/search.hpp"
#include "core/util/strings.hpp"

namespace kasava::commands {

using util::JsonValue;

const char* const k_mcp_instructions =
    "kasava searches the code of one git repository. Use `search` with a question in words or "
    "identifiers to find the relevant functions and classes (best first), then "
    "`read_file_range` to read more lines around a result. Paths are relative to the "
    "repository root.";

const char* const k_mcp_store_instructions =
    "kasava searches the code of the organisation's repositories in a shared store. Use `search` "
    "with a question in words or identifiers to find the relevant functions and classes (best "
    "first; each result names its repository and ref, and `repository` narrows the search), then "
    "`read_file_range` with a result's repository, ref and path to read more lines around it; "
    "`index_status` lists the repositories.";

namespace {

constexpr std::int64_t k_default_range_lines = 400;  ///< read_file_range without end_line
constexpr std::int64_t k_max_range_lines = 2000;
constexpr int k_max_code_lines = 80;  ///< of one search result; the rest via read_file_range

JsonValue object(std::initializer_list<std::pair<const char*, JsonValue>> members) {
  JsonValue::Object result;
  for (const auto& [key, value] : members) result.push_back({key, value});
  return JsonValue(std::move(result));
}

JsonValue schema(const std::string& text) {
  auto parsed = util::parse_json(text);
  if (!parsed) throw std::logic_error("bad built-in schema: " + parsed.error().message);
  return std::move(parsed).value();
}

// The first max_lines lines of text, and whether some were left out.
std::pair<std::string, bool> first_lines(const std::string& text, int max_lines) {
  std::size_t end = 0;
  for (int line = 0; line < max_lines; ++line) {
    end = text.find('\n', end);
    if (end == std::string::npos) return {text, false};
    ++end;
  }
  return {text.substr(0, end), end < text.size()};
}

// The search arguments common to both places (query, limit, path, language, mode, min_score).
search::SearchOptions search_arguments(mcp::Arguments& args) {
  search::SearchOptions options;
  options.query = args.required_string("query");
  options.limit = static_cast<int>(args.integer("limit", 10, 1, 100));
  options.path_glob = args.string("path");
  options.language = args.string("language");
  options.mode =
      *search::parse_mode(args.choice("mode", {"hybrid", "semantic", "lexical"}, "hybrid"));
  options.min_score = args.number("min_score", 0.0, 0.0, 1.0);
  return options;
}

// The hits as text and structured content; a shared store's hits name their repository and
// ref (and the others holding the same file).
mcp::ToolOutcome search_outcome(const std::string& query, const std::vector<search::SearchHit>& hits) {
  mcp::ToolOutcome outcome;
  JsonValue::Array results;
  for (const auto& hit : hits) {
    const auto& chunk = hit.record.chunk;
    const auto [code, truncated] = first_lines(util::to_valid_utf8(chunk.text), k_max_code_lines);
    const std::string symbol = search::qualified_name(hit.record);
    const bool shared = !hit.origin.repository.empty();
    char score[32];
    std::snprintf(score, sizeof score, "%.2f", hit.score);
    outcome.text += std::to_string(hit.rank) + ". " +
                    (shared ? hit.origin.repository + "@" + hit.origin.ref + ":" : "") + hit.record.path + ":" +
                    std::to_string(chunk.start_line) + "-" + std::to_string(chunk.end_line) + "  " +
                    chunk.kind + (symbol.empty() ? "" : " " + symbol) + "  (score " + score + ")\n";
    outcome.text += "```" + hit.record.language + "\n" + code;
    if (!code.empty() && code.back() != '\n') outcome.text += '\n';
    if (truncated) outcome.text += "… (more lines: use read_file_range)\n";
    outcome.text += "```\n\n";
    JsonValue::Object result = object({{"rank", hit.rank},
                              {"path", hit.record.path},
                              {"start_line", chunk.start_line},
                              {"end_line", chunk.end_line},
                              {"language", hit.record.language},
                              {"kind", chunk.kind},
                              {"symbol", chunk.symbol},
                              {"parent", chunk.parent},
                              {"score", hit.score},
                              {"mode", std::string(search::mode_name(hit.mode))},
                              {"code", code},
                              {"truncated", truncated}}).as_object();
    if (shared) {
      JsonValue::Array also_in;
      for (const auto& holder : hit.origin.also_in) also_in.emplace_back(holder);
      result.push_back({"repository", hit.origin.repository});
      result.push_back({"ref", hit.origin.ref});
      result.push_back({"also_in", JsonValue(std::move(also_in))});
    }
    results.emplace_back(std::move(result));
  }
  if (hits.empty()) outcome.text = "no results for '" + query + "'\n";
  outcome.structured = object({{"query", query}, {"results", JsonValue(std::move(results))}});
  return outcome;
}

mcp::ToolOutcome search(Context& context, ToolPlace& place, mcp::Arguments& args) {
  const search::SearchOptions options = search_arguments(args);
  if (!args.ok()) return mcp::ToolOutcome::error(args.error());
  const QueryTarget target = place.search_target();
  auto store = place.open_index(target);
  auto hits = run_search(context, *store, options);
  if (!hits) return mcp::ToolOutcome::error(hits.error().message);
  return search_outcome(options.query, *hits);
}

// The lines of a file read by read_file_range as text and structured content; `holder` is
// "repository@ref" for a file of a shared store, else "".
mcp::ToolOutcome range_outcome(const std::string& path, const mcp::LineRange& range,
                               const pgstore::RefInfo* holder = nullptr) {
  mcp::ToolOutcome outcome;
  outcome.text = (holder ? holder->repository + "@" + holder->ref + ":" : "") + path + ":" +
                 std::to_string(range.first) + "-" + std::to_string(range.last) + " (of " +
                 std::to_string(range.total) + " lines" + (range.truncated ? "; cut at 2000 lines" : "") +
                 ")\n" + range.text;
  JsonValue::Object structured = object({{"path", path},
                                         {"start_line", range.first},
                                         {"end_line", range.last},
                                         {"total_lines", range.total},
                                         {"truncated", range.truncated},
                                         {"text", range.text}}).as_object();
  if (holder) {
    structured.push_back({"repository", holder->repository});
    structured.push_back({"ref", holder->ref});
  }
  outcome.structured = JsonValue(std::move(structured));
  return outcome;
}

mcp::ToolOutcome read_file_range(ToolPlace& place, mcp::Arguments& args) {
  const std::string path = args.required_string("path");
  const std::int64_t start = args.integer("start_line", 1, 1, INT32_MAX);
  const std::int64_t end =
      args.integer("end_line", start + k_default_range_lines - 1, 1, INT32_MAX);
  if (!args.ok()) return mcp::ToolOutcome::error(args.error());

  // Only a file the index would index, read as the index reads it (what is never stored is
  // never served: not ignored files, secrets, binaries, files over the size limit), and only
  // from the repository the index was found in, never from a folder the index file names.
  const QueryTarget target = place.located_target();
  if (!target.root) {
    return mcp::ToolOutcome::error("files cannot be read: " + target.no_root_reason +
                                   "; search results carry the code");
  }
  auto source = repo::open_source(*target.root, {});
  if (!source) return mcp::ToolOutcome::error(source.error().message);
  // The cheap refusals first, with their own messages ('..', absolute paths, .git, escapes).
  auto file = mcp::confined_path((*source)->root(), path);
  if (!file) return mcp::ToolOutcome::error(file.error().message);
  const std::uint64_t max_file_size = std::filesystem::exists(target.index_path)
                                          ? max_file_size_for(*place.open_index(target))
                                          : index::IndexOptions{}.max_file_size;
  auto text = index::read_indexable_file(**source, path, max_file_size);
  if (!text) return mcp::ToolOutcome::error("refusing " + text.error().message);
  auto range = mcp::line_range(*text, start, end, k_max_range_lines);
  if (!range) return mcp::ToolOutcome::error("'" + path + "': " + range.error().message);

  return range_outcome(path, *range);
}

mcp::ToolOutcome index_status(ToolPlace& place) {
  const QueryTarget target = place.located_target();
  if (!std::filesystem::exists(target.index_path)) {
    return mcp::ToolOutcome::error("no index at '" + target.index_path +
                                   "' yet: the first search builds it");
  }
  auto store = place.open_index(target);
  const auto stats = store->stats();
  JsonValue::Object languages;
  std::string language_text;
  for (const auto& [language, count] : stats.files_per_language) {
    const std::string name = language.empty() ? "text" : language;
    languages.push_back({name, count});
    language_text += (language_text.empty() ? "" : ", ") + name + " " + std::to_string(count);
  }
  const std::string root = store->meta("root").value_or("");
  const std::string commit = store->meta("commit").value_or("");
  const std::string revision = store->meta("revision").value_or("");
  const std::string indexed_at = store->meta("indexed_at").value_or("");
  mcp::ToolOutcome outcome;
  outcome.text = "index " + target.index_path + "\nroot " + root + "\ncommit " +
                 (commit.empty() ? "(none)" : commit) + "\nindexed " + indexed_at + "\nfiles " +
                 std::to_string(stats.files) + " indexed, " + std::to_string(stats.skipped_files) +
                 " skipped\nchunks " + std::to_string(stats.chunks) + "\nlanguages " +
                 (language_text.empty() ? "(none)" : language_text) + "\n";
  outcome.structured = object({{"index", target.index_path},
                               {"root", root},
                               {"commit", commit},
                               {"revision", revision},
                               {"indexed_at", indexed_at},
                               {"files", stats.files},
                               {"skipped_files", stats.skipped_files},
                               {"chunks", stats.chunks},
                               {"languages", JsonValue(std::move(languages))},
                               {"source_available", target.root.has_value()}});
  return outcome;
}

// read_file_range over a shared store: the file's text from the snapshot of the named
// repository's ref (its latest publish unless `ref` names one). Only what was published is
// there, so the snapshot's paths are the whole confinement.
mcp::ToolOutcome read_store_file(pgstore::Reader& reader, mcp::Arguments& args, const Visible& visible) {
  const std::string path = args.required_string("path");
  const std::int64_t start = args.integer("start_line", 1, 1, INT32_MAX);
  const std::int64_t end = args.integer("end_line", start + k_default_range_lines - 1, 1, INT32_MAX);
  const std::string repository = args.string("repository");
  const std::string ref = args.string("ref");
  if (!args.ok()) return mcp::ToolOutcome::error(args.error());
  const pgstore::RefInfo chosen = choose_file_ref(reader, repository, ref, visible);
  const auto text = reader.file_text(chosen.id, path);
  if (!text) {
    return mcp::ToolOutcome::error("'" + path + "' is not a file of " + chosen.repository + "@" + chosen.ref +
                                   " in the store (only indexed files are held; paths are relative to "
                                   "the repository root)");
  }
  auto range = mcp::line_range(*text, start, end, k_max_range_lines);
  if (!range) return mcp::ToolOutcome::error("'" + path + "': " + range.error().message);
  return range_outcome(path, *range, &chosen);
}

// index_status over a shared store: its repositories and their published refs.
mcp::ToolOutcome store_status(pgstore::Reader& reader, const Visible& visible) {
  mcp::ToolOutcome outcome;
  JsonValue document = store_status_document(reader, visible);
  outcome.text = "store " + document["store"].as_string() + "\nrepositories " +
                 std::to_string(document["repositories"].as_integer()) + " (" +
                 std::to_string(document["refs"].size()) + " refs)\n";
  for (const auto& ref : document["refs"].as_array()) {
    outcome.text += "  " + ref["repository"].as_string() + " " + ref["ref"].as_string() + "  " +
                    ref["model"].as_string() + ", published " + ref["published_at"].as_string() + "\n";
  }
  outcome.structured = std::move(document);
  return outcome;
}

}  // namespace

std::shared_ptr<store::Store> ToolPlace::open_index(const QueryTarget& target) {
  return open_store(target.index_path, store::OpenMode::read_only);
}

QueryTarget PreparedPlace::search_target() {
  return prepare(m_context, Needs::fresh_index).target;
}

QueryTarget PreparedPlace::located_target() {
  return prepare(m_context, Needs::located_index).target;
}

namespace {

// The three tools as tools/list describes them: of one repository's index (refreshed first
// when `refreshes`), or of a shared store's repositories, chosen by a `repository` argument.
std::vector<mcp::Tool> tool_list(bool refreshes, bool shared_store) {
  std::vector<mcp::Tool> tools(3);
  tools[0].name = "search";
  tools[0].title = "Search the code";
  tools[0].description =
      std::string(shared_store ? "Finds the places in the code of the organisation's repositories"
                               : "Finds the places in the repository's code") +
      " that answer a question (natural language or identifiers), best first: functions, methods, "
      "classes and other chunks with path, line range, symbol, kind, score and code." +
      (shared_store ? " Each result names its repository and ref; every repository's latest "
                      "published ref is searched unless `repository` or `ref` narrows it."
                    : "") +
      (refreshes ? " The index is refreshed first, so uncommitted edits are found." : "");
  tools[0].input_schema = schema(std::string(R"json({"type":"object","properties":{
    "query":{"type":"string","description":"The question, in words or identifiers"},
    "limit":{"type":"integer","minimum":1,"maximum":100,"default":10,"description":"Number of results"},
    "path":{"type":"string","description":"Only results whose path matches this glob, e.g. src/**/*.py"},
    "language":{"type":"string","description":"Only results in this language, e.g. python"},
    "mode":{"type":"string","enum":["hybrid","semantic","lexical"],"default":"hybrid"},
    "min_score":{"type":"number","minimum":0,"maximum":1,"description":"Drop results scoring below this"})json") +
    (shared_store ? R"json(,
    "repository":{"type":"string","description":"Only repositories whose name matches this glob, e.g. acme/*"},
    "ref":{"type":"string","description":"This ref (branch) of each repository instead of its latest publish"})json"
                  : "") +
    R"json(},
    "required":["query"]})json");
  tools[1].name = "read_file_range";
  tools[1].title = "Read lines of a file";
  tools[1].description =
      shared_store
          ? "Reads lines of a file of a repository in the shared store (1-based, inclusive), e.g. to "
            "see more around a search result: give the result's repository (and ref) and path. "
            "Only indexed files are held. At most 2000 lines per call."
          : "Reads lines of a file of the indexed repository (1-based, inclusive), e.g. to see more "
            "around a search result. The path is relative to the repository root; paths leaving it, "
            "and files kasava does not index (ignored by git, secrets, binaries, very large files), "
            "are refused. At most 2000 lines per call.";
  tools[1].input_schema = schema(std::string(R"json({"type":"object","properties":{
    "path":{"type":"string","description":"File path relative to the repository root"},
    "start_line":{"type":"integer","minimum":1,"default":1},
    "end_line":{"type":"integer","minimum":1,"description":"Last line (inclusive); default start_line + 399"})json") +
    (shared_store ? R"json(,
    "repository":{"type":"string","description":"The repository's name, e.g. acme/app (needed when the store holds several)"},
    "ref":{"type":"string","description":"The ref (branch); default: the repository's latest publish"})json"
                  : "") +
    R"json(},
    "required":["path"]})json");
  tools[2].name = "index_status";
  tools[2].title = "Index status";
  tools[2].description =
      shared_store ? "What the shared store holds: its repositories and their published refs, models and times."
                   : "What the index holds: repository root, commit, files, chunks and languages.";
  tools[2].input_schema = schema(R"json({"type":"object","properties":{}})json");
  return tools;
}

// Runs one tool: search, read_file_range, else index_status; a util::Failure becomes the
// tool's error.
template <typename Search, typename Read, typename Status>
mcp::ToolOutcome dispatch(const std::string& name, const JsonValue& arguments, Search search_tool,
                          Read read_tool, Status status_tool) {
  try {
    mcp::Arguments args(arguments);
    if (name == "search") return search_tool(args);
    if (name == "read_file_range") return read_tool(args);
    return status_tool();
  } catch (const util::Failure& e) {
    return mcp::ToolOutcome::error(e.what());
  }
}

}  // namespace

std::vector<mcp::Tool> KasavaTools::tools() const { return tool_list(m_place.refreshes(), false); }

mcp::ToolOutcome KasavaTools::call(const std::string& name, const JsonValue& arguments) {
  return dispatch(
      name, arguments, [&](mcp::Arguments& args) { return search(m_context, m_place, args); },
      [&](mcp::Arguments& args) { return read_file_range(m_place, args); },
      [&] { return index_status(m_place); });
}

std::vector<mcp::Tool> StoreTools::tools() const { return tool_list(false, true); }

mcp::ToolOutcome StoreTools::call(const std::string& name, const JsonValue& arguments) {
  // A pooled connection, checked before use: a store restarted between calls is no error.
  const auto reader = [this] {
    auto lease = m_store.readers.acquire();
    if (!lease) throw util::Failure(lease.error());
    return std::move(lease).value();
  };
  return dispatch(
      name, arguments,
      [&](mcp::Arguments& args) {
        const search::SearchOptions options = search_arguments(args);
        const std::string repository = args.string("repository");
        const std::string ref = args.string("ref");
        if (!args.ok()) return mcp::ToolOutcome::error(args.error());
        auto store = reader();
        std::vector<std::string> globs;
        if (!repository.empty()) globs.push_back(repository);
        auto refs = choose_refs(*store, globs, ref, "repository", "ref", m_visible);
        return search_outcome(options.query,
                              search_store(m_context, *store, std::move(refs), options,
                                           pooled_reader(m_store.readers, true)));
      },
      [&](mcp::Arguments& args) { return read_store_file(*reader(), args, m_visible); },
      [&] { return store_status(*reader(), m_visible); });
}

}  // namespace kasava::commands
