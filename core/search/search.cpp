// Ranking for `kasava ask`. Lexical retrieval asks FTS5 for the best chunks by BM25 with
// field weights (a hit in a symbol name or path weighs more than one in body text), over a
// candidate pool larger than the answer so filters and grouping still fill the page. Scores
// are squashed into (0, 1) with s / (s + k) so --min-score means the same across queries of
// similar length. Grouping: at most max_per_file chunks of one file take places in the list
// before chunks of other files; the rest only fill places left over. Ties break by path and
// line, so identical inputs give identical output.
#include "core/search/search.hpp"

#include <algorithm>
#include <map>
#include <unordered_map>

#include "core/util/glob.hpp"
#include "core/util/tokenize.hpp"

namespace kasava::search {
namespace {

// BM25 score at which a result reads 0.5; typical good matches land around 5-20.
constexpr double k_score_half_point = 8.0;

double squash(double bm25) { return bm25 <= 0 ? 0.0 : bm25 / (bm25 + k_score_half_point); }

std::string quote_term(std::string_view term) {
  std::string quoted = "\"";
  for (char c : term) {
    if (c == '"') quoted += '"';
    quoted += c;
  }
  quoted += '"';
  return quoted;
}

} // namespace

std::optional<Mode> parse_mode(std::string_view name) {
  if (name == "hybrid") return Mode::hybrid;
  if (name == "semantic") return Mode::semantic;
  if (name == "lexical") return Mode::lexical;
  return std::nullopt;
}

std::string qualified_name(const store::ChunkRecord& record) {
  const auto& chunk = record.chunk;
  if (chunk.parent.empty() || chunk.symbol.empty()) return chunk.symbol;
  const auto& language = record.language;
  const bool colons = language == "cpp" || language == "c" || language == "rust" || language == "php";
  return chunk.parent + (colons ? "::" : ".") + chunk.symbol;
}

std::string match_expression(std::string_view query) {
  std::string expression;
  for (const auto& term : util::query_terms(query)) {
    if (!expression.empty()) expression += " OR ";
    expression += quote_term(term);
  }
  return expression;
}

util::Result<std::vector<SearchHit>> search(const store::Store& store, const SearchOptions& options,
                                            embed::Embedder* embedder) {
  if (options.mode == Mode::semantic && embedder == nullptr) {
    return util::Error{
        "semantic search needs an embedding model and this index has none: use --mode lexical"};
  }
  const std::string expression = match_expression(options.query);
  if (expression.empty() || options.limit <= 0) return std::vector<SearchHit>{};

  const bool filtered = !options.language.empty() || !options.path_glob.empty();
  const int pool = filtered ? std::max(options.limit * 50, 2000) : std::max(options.limit * 10, 200);
  auto lexical = store.lexical_search(expression, options.weights, pool);
  if (!lexical) return lexical.error();

  std::vector<std::int64_t> ids;
  ids.reserve(lexical->size());
  for (const auto& hit : *lexical) ids.push_back(hit.chunk_id);
  std::unordered_map<std::int64_t, store::ChunkRecord> records;
  for (auto& record : store.chunks_by_id(ids)) records.emplace(record.id, std::move(record));

  std::vector<SearchHit> candidates;
  for (const auto& hit : *lexical) {
    auto found = records.find(hit.chunk_id);
    if (found == records.end()) continue;
    const auto& record = found->second;
    if (!options.language.empty() && record.language != options.language) continue;
    if (!options.path_glob.empty() && !util::glob_match(options.path_glob, record.path)) continue;
    const double score = squash(hit.score);
    if (score < options.min_score) continue;
    candidates.push_back(SearchHit{0, score, std::move(found->second)});
  }
  std::stable_sort(candidates.begin(), candidates.end(), [](const SearchHit& a, const SearchHit& b) {
    if (a.score != b.score) return a.score > b.score;
    if (a.record.path != b.record.path) return a.record.path < b.record.path;
    return a.record.chunk.start_line < b.record.chunk.start_line;
  });

  std::vector<SearchHit> results;
  std::vector<SearchHit> deferred;
  std::map<std::string, int> per_file;
  for (auto& candidate : candidates) {
    if (static_cast<int>(results.size()) >= options.limit) break;
    if (per_file[candidate.record.path]++ < options.max_per_file) {
      results.push_back(std::move(candidate));
    } else {
      deferred.push_back(std::move(candidate));
    }
  }
  for (auto& candidate : deferred) {
    if (static_cast<int>(results.size()) >= options.limit) break;
    results.push_back(std::move(candidate));
  }
  for (std::size_t i = 0; i < results.size(); ++i) results[i].rank = static_cast<int>(i) + 1;
  return results;
}

} // namespace kasava::search
