// `kasava ask QUERY`: refreshes the index if needed, ranks chunks for the query and prints
// the best places (path:lines, kind, symbol and a few numbered lines of code), or JSON. On a
// terminal the places are grouped under one heading per file, as ripgrep does; in a pipe each
// starts with its own `path:start-end`, so every line a script greps names its file.
#include <algorithm>
#include <cctype>
#include <cstdio>
#include <filesystem>
#include <future>
#include <optional>
#include <set>
#include <system_error>

#include "commands/answer.hpp"
#include "commands/commands.hpp"
#include "commands/store_search.hpp"
#include "core/pgstore/search.hpp"
#include "core/search/search.hpp"
#include "core/util/json.hpp"
#include "core/util/strings.hpp"
#include "core/util/tokenize.hpp"

namespace kasava::commands {

namespace fs = std::filesystem;

namespace {

constexpr int k_snippet_lines = 8;

// One result as the --json schema has it (and as each --jsonl line is).
void write_result(util::JsonWriter& json, const search::SearchHit& hit) {
  const auto& chunk = hit.record.chunk;
  json.begin_object();
  json.key("rank").value(hit.rank);
  json.key("path").value(hit.record.path);
  json.key("start_line").value(chunk.start_line);
  json.key("end_line").value(chunk.end_line);
  json.key("language").value(hit.record.language);
  json.key("kind").value(chunk.kind);
  json.key("symbol").value(chunk.symbol);
  json.key("parent").value(chunk.parent);
  json.key("signature").value(chunk.signature);
  json.key("score").value(hit.score);
  json.key("mode").value(search::mode_name(hit.mode));
  json.key("snippet").value(chunk.text);
  if (!hit.origin.repository.empty()) {  // a shared store's result
    json.key("repository").value(hit.origin.repository);
    json.key("ref").value(hit.origin.ref);
    if (!hit.origin.also_in.empty()) {
      json.key("also_in").begin_array();
      for (const auto& holder : hit.origin.also_in) json.value(holder);
      json.end_array();
    }
  }
  json.end_object();
}

} // namespace

std::string results_json(const std::string& query, const std::vector<search::SearchHit>& hits) {
  util::JsonWriter json;
  json.begin_object();
  json.key("query").value(query);
  json.key("results").begin_array();
  for (const auto& hit : hits) write_result(json, hit);
  json.end_array();
  json.end_object();
  return json.str() + "\n";
}

namespace {

bool is_word_byte(char c) {
  const auto u = static_cast<unsigned char>(c);
  return std::isalnum(u) || c == '_' || u >= 0x80;
}

// The line with the chunk's symbol and every word that matches a query term (whole or by one
// of its parts) painted.
std::string highlight(std::string_view line, const std::set<std::string>& terms,
                      std::string_view symbol, const Output& output) {
  if (!output.color()) return std::string(line);
  std::string result;
  std::size_t i = 0;
  while (i < line.size()) {
    if (!is_word_byte(line[i])) {
      result += line[i++];
      continue;
    }
    std::size_t end = i;
    while (end < line.size() && is_word_byte(line[end])) ++end;
    const std::string_view word = line.substr(i, end - i);
    bool matches = terms.count(util::to_lower(word)) > 0;
    for (const auto& part : util::split_identifier(word)) matches = matches || terms.count(part) > 0;
    result += !symbol.empty() && word == symbol ? output.paint(word, Style::symbol)
              : matches                         ? output.paint(word, Style::match)
                                                : std::string(word);
    i = end;
  }
  return result;
}

/// Whether each place names its file (`path:12-40`) or sits under a heading for the file.
enum class Heading { per_place, per_file };

// "repository@ref" of a shared store's result, "" for a local one.
std::string origin_name(const search::SearchHit& hit) {
  return hit.origin.repository.empty() ? std::string() : hit.origin.repository + "@" + hit.origin.ref;
}

std::string format_hit(const search::SearchHit& hit, const std::set<std::string>& terms,
                       const Output& output, Heading heading) {
  const auto& chunk = hit.record.chunk;
  // Paths, names and code come from the repository: their control characters are shown, not
  // sent to the terminal (JSON output escapes them its own way).
  std::string text;
  if (heading == Heading::per_place) {
    const std::string origin = origin_name(hit);
    if (!origin.empty()) text = output.paint(util::escape_controls(origin), Style::kind) + ":";
    text += output.paint(util::escape_controls(hit.record.path), Style::path) + ":";
  }
  text += output.paint(std::to_string(chunk.start_line) + "-" + std::to_string(chunk.end_line),
                       heading == Heading::per_file ? Style::line_number : Style::plain);
  text += "  ";
  text += output.paint(chunk.kind, Style::kind);
  if (!chunk.symbol.empty()) {
    const std::string name = search::qualified_name(hit.record);
    text += ' ';
    text += output.paint(util::escape_controls(name), Style::symbol);
  }
  char score[32];
  std::snprintf(score, sizeof score, "  (%.2f)", hit.score);
  text += output.paint(score, Style::score);
  if (!hit.origin.also_in.empty()) {
    std::string holders;
    for (const auto& holder : hit.origin.also_in) holders += (holders.empty() ? "" : ", ") + holder;
    text += output.paint("  also in " + util::escape_controls(holders), Style::dim);
  }
  text += "\n";

  const auto lines = util::split(util::to_valid_utf8(chunk.text), '\n');
  const int last_line = chunk.start_line + static_cast<int>(lines.size()) - 1;
  const int width = static_cast<int>(std::to_string(std::max(last_line, 1)).size());
  int shown = 0;
  for (std::size_t i = 0; i < lines.size() && shown < k_snippet_lines; ++i) {
    std::string_view line = lines[i];
    if (shown == 0 && util::trim(line).empty()) continue;  // no leading blank lines
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    char number[16];
    std::snprintf(number, sizeof number, "%*d", width, chunk.start_line + static_cast<int>(i));
    text += "  ";
    text += output.paint(number, Style::line_number);
    text += "  ";
    text += highlight(util::escape_controls(line), terms, chunk.symbol, output);
    text += '\n';
    ++shown;
  }
  if (lines.size() > static_cast<std::size_t>(shown) + 1) {
    text += "  ";
    text += output.paint(std::string(static_cast<std::size_t>(width), ' ') + "  …", Style::dim);
    text += '\n';
  }
  return text;
}

std::set<std::string> query_term_set(const std::string& query) {
  std::set<std::string> terms;
  for (const auto& term : search::parse_query(query).terms) terms.insert(term);
  return terms;
}

// Files in the order of their best place, each with its heading once and its places in rank
// order; a blank line between files. A shared store's results are first grouped by
// repository (in the order of each one's best place), under a heading of its own.
void print_grouped(const std::vector<search::SearchHit>& hits, const std::set<std::string>& terms,
                   Output& output) {
  std::vector<std::string> origins;
  for (const auto& hit : hits) {
    if (std::find(origins.begin(), origins.end(), origin_name(hit)) == origins.end()) {
      origins.push_back(origin_name(hit));
    }
  }
  bool first = true;
  for (const std::string& origin : origins) {
    if (!origin.empty()) {
      if (!first) output.out("\n");
      output.out(output.paint("== " + util::escape_controls(origin) + " ==", Style::kind) + "\n");
      first = true;
    }
    std::vector<std::string> files;
    for (const auto& hit : hits) {
      if (origin_name(hit) == origin &&
          std::find(files.begin(), files.end(), hit.record.path) == files.end()) {
        files.push_back(hit.record.path);
      }
    }
    for (const std::string& file : files) {
      if (!first) output.out("\n");
      first = false;
      output.out(output.paint(util::escape_controls(file), Style::path) + "\n");
      for (const auto& hit : hits) {
        if (origin_name(hit) == origin && hit.record.path == file) {
          output.out(format_hit(hit, terms, output, Heading::per_file));
        }
      }
    }
  }
}

// A search run on a second thread while the refresh checks the repository. Most asks find
// nothing to refresh, and then these results are the answer, found while the refresh waited
// on its system calls (on the 110k-chunk synthetic index, 2 cores: ask p50 96.5 -> 88.3 ms,
// same output). When the refresh wrote anything (or another process did), they are dropped
// and the search runs again on what was written.
struct EarlySearch {
  std::unique_ptr<store::Store> store;
  std::int64_t data_version = 0;
  std::vector<search::SearchHit> hits;
  bool partial = false;  ///< index_is_partial
};

// Whether the search may start before the refresh: there is an index to search and a
// repository to refresh it from, and the model is local (a remote one would send the query
// while the refresh may be sending chunks, and could warn from the search thread).
bool may_search_early(Context& context, const QueryTarget& target, bool refresh) {
  if (!refresh || !target.root || !fs::exists(target.index_path) || context.model_is_remote()) {
    return false;
  }
  // Made here, once, as the refresh would: the two threads then share it (encoding is const).
  context.embedder();
  return true;
}

std::future<std::optional<EarlySearch>> start_early_search(Context& context, const QueryTarget& target,
                                                           const search::SearchOptions& options) {
  return std::async(std::launch::async, [&context, path = target.index_path, options] {
    std::optional<EarlySearch> early;
    try {
      EarlySearch attempt;
      attempt.store = open_store(path, store::OpenMode::read_only);
      attempt.data_version = attempt.store->data_version();
      auto hits = run_search(context, *attempt.store, options);
      if (!hits) return early;  // the search after the refresh reports it
      attempt.hits = std::move(hits).value();
      attempt.partial = index_is_partial(*attempt.store);
      early = std::move(attempt);
    } catch (...) {  // the same: searched again, on the main thread
    }
    return early;
  });
}

// The early search's hits, when nothing was committed to the index since it began (and
// whether the index is partial).
std::optional<std::vector<search::SearchHit>> early_hits(std::future<std::optional<EarlySearch>>& future,
                                                         bool& partial) {
  std::optional<EarlySearch> early = future.get();
  try {
    if (!early || early->store->data_version() != early->data_version) return std::nullopt;
  } catch (const util::Failure&) {
    return std::nullopt;
  }
  partial = early->partial;
  return std::move(early->hits);
}

// What ask's setup hook leaves for its run: the chat model, and the search started early.
struct AskState : CommandState {
  std::optional<AnswerSettings> answer_settings;
  std::future<std::optional<EarlySearch>> early;
};

} // namespace

namespace {

// The shared store `ask` searches ("" = the local index).
std::string ask_store(const AskCommandOptions& options) { return chosen_store(options.store); }

// `ask --store`: the same search over the chosen refs of the shared store.
std::vector<search::SearchHit> search_store(const AskCommandOptions& options, Context& context,
                                            const search::SearchOptions& search_options) {
  // A lexical search runs on one reader; the others read codes and histories on a second.
  auto another = search_options.mode == search::Mode::lexical ? search::StoreSource::OpenReader{}
                                                              : another_reader(ask_store(options));
  auto opened = pgstore::Reader::open(ask_store(options));
  if (!opened) throw util::Failure(opened.error());
  pgstore::Reader& reader = **opened;
  return search_store(context, reader, choose_refs(reader, options.repositories, options.ref, "--repo", "--ref"),
                      search_options, std::move(another));
}

} // namespace

search::SearchOptions search_options_for(const AskCommandOptions& options) {
  const auto mode = search::parse_mode(options.mode);
  if (!mode) {
    throw util::Failure("invalid --mode '" + options.mode + "': expected hybrid, semantic or lexical");
  }
  search::SearchOptions search_options;
  search_options.query = options.query;
  search_options.limit = options.limit;
  search_options.language = options.language;
  search_options.path_glob = options.path_glob;
  search_options.mode = *mode;
  search_options.min_score = options.min_score;
  return search_options;
}

SetupHooks ask_setup(const AskCommandOptions& options) {
  SetupHooks hooks;
  if (!ask_store(options).empty()) {  // no repository, no local index
    hooks.needs = Needs::index_per_call;
    return hooks;
  }
  if (!options.repositories.empty() || !options.ref.empty()) {
    throw util::Failure("--repo and --ref choose what a shared store searches: add --store URL (or set KASAVA_STORE)");
  }
  hooks.refresh = !options.no_refresh;
  hooks.before_refresh = [&options](Context& context, Prepared& prepared) {
    const search::SearchOptions search_options = search_options_for(options);
    auto state = std::make_unique<AskState>();
    // Before indexing and searching (but once the repository's config is known), so a
    // missing chat model fails fast.
    if (options.answer) state->answer_settings = resolve_answer_settings(options, context);
    if (may_search_early(context, prepared.target, !options.no_refresh)) {
      try {
        state->early = start_early_search(context, prepared.target, search_options);
      } catch (const std::system_error&) {  // no thread to be had: search after the refresh
      }
    }
    prepared.state = std::move(state);
  };
  return hooks;
}

ExitStatus run_ask(const AskCommandOptions& options, Context& context, Prepared& prepared) {
  const search::SearchOptions search_options = search_options_for(options);
  std::optional<std::vector<search::SearchHit>> found;
  std::optional<AnswerSettings> answer_settings;
  if (!ask_store(options).empty()) {
    if (options.answer) answer_settings = resolve_answer_settings(options, context);
    found = search_store(options, context, search_options);
  } else {
    const QueryTarget& target = prepared.target;
    auto* state = dynamic_cast<AskState*>(prepared.state.get());
    if (state == nullptr) throw std::logic_error("ask runs after its setup hook");
    answer_settings = std::move(state->answer_settings);
    bool partial = false;
    if (state->early.valid()) found = early_hits(state->early, partial);
    if (!found) {
      auto store = prepared.store ? std::move(prepared.store)
                                  : open_store(target.index_path, store::OpenMode::read_only);
      found = run_search(context, *store, search_options).value_or_throw();
      partial = index_is_partial(*store);
    }
    if (partial) {
      context.output.warning("index '" + target.index_path + "' is " + k_partial_index +
                             ": some files may be missing from the results");
    }
  }
  const std::vector<search::SearchHit>& hits = *found;

  if (answer_settings) return stream_answer(options.query, hits, *answer_settings, context);
  if (options.json) {
    context.output.out(results_json(options.query, hits));
  } else if (options.jsonl) {
    for (const auto& hit : hits) {
      util::JsonWriter json;
      write_result(json, hit);
      context.output.out(json.str() + "\n");
    }
  } else if (context.output.stdout_is_terminal()) {
    print_grouped(hits, query_term_set(options.query), context.output);
  } else {
    const auto terms = query_term_set(options.query);
    for (std::size_t i = 0; i < hits.size(); ++i) {
      if (i > 0) context.output.out("\n");
      context.output.out(format_hit(hits[i], terms, context.output, Heading::per_place));
    }
  }
  return hits.empty() ? ExitStatus::no_result : ExitStatus::success;
}

} // namespace kasava::commands
