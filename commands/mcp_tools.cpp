// The MCP tools of mcp_tools.hpp: their descriptions and schemas, and each call — arguments
// checked (core/mcp/arguments), the index searched or read through the place the transport
// gives, the result as text for every client and as structured content.
#include "commands/mcp_tools.hpp"

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <utility>

#include "commands/embedder_setup.hpp"
#include "commands/open_index.hpp"
#include "commands/setup.hpp"
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

namespace {

constexpr std::int64_t k_default_range_lines = 400;  ///< read_file_range without end_line
constexpr std::int64_t k_max_range_lines = 2000;
constexpr int k_max_code_lines = 80;  ///< of one search result; the rest via read_file_range

JsonValue object(std::initializer_list<std::pair<const char*, JsonValue>> members) {
  JsonValue::Object result;
  for (const auto& [key, value] : members) result.push_back({key, value});
  return JsonValue(std::move(result));
}

JsonValue schema(const char* text) {
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

mcp::ToolOutcome search(Context& context, ToolPlace& place, mcp::Arguments& args) {
  search::SearchOptions options;
  options.query = args.required_string("query");
  options.limit = static_cast<int>(args.integer("limit", 10, 1, 100));
  options.path_glob = args.string("path");
  options.language = args.string("language");
  options.mode =
      *search::parse_mode(args.choice("mode", {"hybrid", "semantic", "lexical"}, "hybrid"));
  options.min_score = args.number("min_score", 0.0, 0.0, 1.0);
  if (!args.ok()) return mcp::ToolOutcome::error(args.error());

  const QueryTarget target = place.search_target();
  auto store = place.open_index(target);
  auto hits = run_search(context, *store, options);
  if (!hits) return mcp::ToolOutcome::error(hits.error().message);

  mcp::ToolOutcome outcome;
  JsonValue::Array results;
  for (const auto& hit : *hits) {
    const auto& chunk = hit.record.chunk;
    const auto [code, truncated] = first_lines(util::to_valid_utf8(chunk.text), k_max_code_lines);
    const std::string symbol = search::qualified_name(hit.record);
    char score[32];
    std::snprintf(score, sizeof score, "%.2f", hit.score);
    outcome.text += std::to_string(hit.rank) + ". " + hit.record.path + ":" +
                    std::to_string(chunk.start_line) + "-" + std::to_string(chunk.end_line) + "  " +
                    chunk.kind + (symbol.empty() ? "" : " " + symbol) + "  (score " + score + ")\n";
    outcome.text += "```" + hit.record.language + "\n" + code;
    if (!code.empty() && code.back() != '\n') outcome.text += '\n';
    if (truncated) outcome.text += "… (more lines: use read_file_range)\n";
    outcome.text += "```\n\n";
    results.push_back(object({{"rank", hit.rank},
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
                              {"truncated", truncated}}));
  }
  if (hits->empty()) outcome.text = "no results for '" + options.query + "'\n";
  outcome.structured =
      object({{"query", options.query}, {"results", JsonValue(std::move(results))}});
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

  mcp::ToolOutcome outcome;
  outcome.text = path + ":" + std::to_string(range->first) + "-" + std::to_string(range->last) +
                 " (of " + std::to_string(range->total) + " lines" +
                 (range->truncated ? "; cut at 2000 lines" : "") + ")\n" + range->text;
  outcome.structured = object({{"path", path},
                               {"start_line", range->first},
                               {"end_line", range->last},
                               {"total_lines", range->total},
                               {"truncated", range->truncated},
                               {"text", range->text}});
  return outcome;
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

std::vector<mcp::Tool> KasavaTools::tools() const {
  std::vector<mcp::Tool> tools(3);
  tools[0].name = "search";
  tools[0].title = "Search the code";
  tools[0].description =
      "Finds the places in the repository's code that answer a question (natural language or "
      "identifiers), best first: functions, methods, classes and other chunks with path, line "
      "range, symbol, kind, score and code." +
      std::string(m_place.refreshes()
                      ? " The index is refreshed first, so uncommitted edits are found."
                      : "");
  tools[0].input_schema = schema(R"({"type":"object","properties":{
    "query":{"type":"string","description":"The question, in words or identifiers"},
    "limit":{"type":"integer","minimum":1,"maximum":100,"default":10,"description":"Number of results"},
    "path":{"type":"string","description":"Only results whose path matches this glob, e.g. src/**/*.py"},
    "language":{"type":"string","description":"Only results in this language, e.g. python"},
    "mode":{"type":"string","enum":["hybrid","semantic","lexical"],"default":"hybrid"},
    "min_score":{"type":"number","minimum":0,"maximum":1,"description":"Drop results scoring below this"}},
    "required":["query"]})");
  tools[1].name = "read_file_range";
  tools[1].title = "Read lines of a file";
  tools[1].description =
      "Reads lines of a file of the indexed repository (1-based, inclusive), e.g. to see more "
      "around a search result. The path is relative to the repository root; paths leaving it, "
      "and files kasava does not index (ignored by git, secrets, binaries, very large files), "
      "are refused. At most 2000 lines per call.";
  tools[1].input_schema = schema(R"({"type":"object","properties":{
    "path":{"type":"string","description":"File path relative to the repository root"},
    "start_line":{"type":"integer","minimum":1,"default":1},
    "end_line":{"type":"integer","minimum":1,"description":"Last line (inclusive); default start_line + 399"}},
    "required":["path"]})");
  tools[2].name = "index_status";
  tools[2].title = "Index status";
  tools[2].description =
      "What the index holds: repository root, commit, files, chunks and languages.";
  tools[2].input_schema = schema(R"({"type":"object","properties":{}})");
  return tools;
}

mcp::ToolOutcome KasavaTools::call(const std::string& name, const JsonValue& arguments) {
  try {
    mcp::Arguments args(arguments);
    if (name == "search") return search(m_context, m_place, args);
    if (name == "read_file_range") return read_file_range(m_place, args);
    return index_status(m_place);
  } catch (const util::Failure& e) {
    return mcp::ToolOutcome::error(e.what());
  }
}

}  // namespace kasava::commands
