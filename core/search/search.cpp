// Ranking for `kasava ask`, in three modes.
//
// Lexical. FTS5 returns the best chunks by BM25 with field weights (a hit in a symbol name or
// path weighs more than one in body text), over a candidate pool larger than the answer so
// filters and grouping still fill the page. Scores are squashed into (0, 1) with s / (s + k)
// so --min-score means the same across queries of similar length.
//
// Semantic. The query is embedded (InputKind::query) and its sign bits compared with every
// chunk's binary code (a Hamming scan over one row of codes per file, language and path
// filters applied during the scan); the nearest few hundred are rescored by cosine against
// their 4-bit values (see core/store/vectors.cpp). Score: the cosine calibrated to [0, 1]
// between k_cosine_floor (what unrelated texts reach with the built-in model: nothing
// matches) and k_cosine_full (identical vectors: a score of 1 is never reached by a mere
// good match, so a high --min-score stays meaningful); chunks at or below the floor are no
// result.
//
// Hybrid. The union of the lexical top ~200 and the semantic top ~100. Every candidate gets
// both scores: the cosine of a lexical-only candidate is computed from its stored vector; a
// semantic-only candidate gets the lexical list's floor (0 when the list was not full, since
// FTS5 then returned every chunk that matches at all, else the list's lowest score). Each
// side is z-normalised over the candidates of this query. Every candidate then gets the
// features of ranker.hpp, each computed from the path, the query, the two scores (BM25 with
// document frequencies, cosine) and the file's history — what a PostgreSQL store can compute
// as well — and its value is the built-in ranker's weighted sum of them (models/ranker.tsv,
// fitted on the commit-subject set's tuning part and CoSQA's dev split by
// tools/rank/fit-ranker):
//   - the chunk's own evidence: both standard scores, both absolute scores (squashed BM25,
//     calibrated cosine: a query whose best match is weak differs from one whose best is
//     strong), and for a query that is one identifier or qualified
//     name (rank.hpp's query_kind) the standard scores again, since names are a lexical
//     matter;
//   - the file's evidence, the same for all its chunks: how its path names what is asked
//     (path_match: `_client.py` for "keep clients in sync", `ignore/types.rs` for
//     "ignore/types: …"), its kind unless the query asks for that kind (asks_for_kind: tests,
//     docs, changelogs, examples, build files, generated files, re-export barrels and type
//     stubs), its history (BM25 of the query's terms over the subjects of the commits that
//     touched it, Store::history_search, over the best such file), its best chunk on each
//     side and how many of its other chunks are above average;
//   - names: a query made of the words of a name ("invoice total" for compute_invoice_total)
//     lifts the chunks so named.
// Two rules stay on top of the weights: when the query names code (parseConfig, save_file,
// Store::open, or is a single word), chunks whose symbol is exactly that name come first,
// ordered among themselves by their lexical score (lexical mode ranks an exact definition by
// the same BM25, with only non-exact chunks possibly above it, so hybrid never ranks it
// lower); and diversity (in the output order below): each earlier place of the same file
// lowers a chunk by k_repeat_penalty, so the first screen shows the best places of several
// files.
// Lexical and semantic modes stay the raw retrieval of one side, without these steps.
// The steps order the list; they do not change the score shown, which is absolute, not per
// query, so --min-score can gate a CI job ("is md5 hashing back?"): 1 − (1 − lexical)(1 −
// semantic) of the lexical score (as in lexical mode) and the calibrated cosine (as in
// semantic mode) — strong on either side is strong, on both is stronger, on neither (no word
// in common, cosine at the floor) is no result.
//
// Output order. Diversity (hybrid, step 5 above); then grouping: at most max_per_file chunks of
// one file take places in the list before chunks of other files; the rest only fill places
// left over. Scores are then made non-increasing down the list (a deferred chunk never shows a
// higher score than the one above it). Ties break by path and line, so identical inputs give
// identical output.
#include "core/search/search.hpp"

#include <algorithm>
#include <cmath>
#include <unordered_map>

#include "core/search/rank.hpp"
#include "core/store/vectors.hpp"
#include "core/util/tokenize.hpp"

namespace kasava::search {
namespace {

// BM25 score at which a result reads 0.5; typical good matches land around 5-20.
constexpr double k_score_half_point = 8.0;
// Chunks the Hamming scan keeps for rescoring; the prototype found the true answer in
// the Hamming top 100 for ~90% of queries, so 300 leaves room for filters and grouping.
constexpr int k_rescore_candidates = 300;
// Semantic candidates (after rescoring) joining the lexical ones in hybrid mode.
constexpr int k_semantic_candidates = 100;
// Lexical candidates in hybrid mode (unfiltered; filtered queries use the lexical pool).
constexpr int k_hybrid_lexical_candidates = 200;
// Added (in z units) to chunks whose symbol the query names exactly: above any blend.
constexpr double k_exact_symbol_boost = 10.0;
// The built-in model's cosines: unrelated texts stay below the floor (on the e2e sample
// project: up to 0.17 for made-up words, 0.25 for "binary_only_marker", 0.26 for a topic
// absent from the code); clear matches reach 0.5–0.8. Check them when the model changes (tests/e2e expect made-up words to find nothing).
constexpr double k_cosine_floor = 0.3;
constexpr double k_cosine_full = 1.0;
// Other above-average chunks of the same file that count as evidence for it.
constexpr int k_file_bonus_chunks = 2;
// History hits read per query: files beyond them get no history bonus.
constexpr int k_history_hits = 200;
// A second (third…) place of a file ranks as if this much (z units) lower per earlier place
// of that file: the first screen shows several files. It does not change which file comes
// first, so file-level MRR does not see it; 0.3 lets a clearly better second place stay.
constexpr double k_repeat_penalty = 0.3;

double squash(double bm25) { return bm25 <= 0 ? 0.0 : bm25 / (bm25 + k_score_half_point); }

// The cosine as a score in [0, 1]: 0 at or below the floor, 1 at or above a clear match.
double calibrated(double cosine) {
  return std::clamp((cosine - k_cosine_floor) / (k_cosine_full - k_cosine_floor), 0.0, 1.0);
}

// True when the chunk defines the name `word` (its symbol, and its parent too when the word
// is qualified).
bool names_chunk(std::string_view word, const store::ChunkRecord& record) {
  const auto parts = name_components(word);
  if (parts.empty() || parts.back() != record.chunk.symbol) return false;
  return parts.size() == 1 || parts[parts.size() - 2] == record.chunk.parent;
}

// True when the chunk's name holds every one of `parts` (two or more).
bool symbol_holds(const std::vector<std::string>& parts, const store::ChunkRecord& record) {
  if (parts.size() < 2 || record.chunk.symbol.empty()) return false;
  std::string lowered;
  std::vector<std::string_view> symbol_parts;
  util::split_identifier(record.chunk.symbol, lowered, symbol_parts);
  return std::all_of(parts.begin(), parts.end(), [&](const std::string& part) {
    return std::find(symbol_parts.begin(), symbol_parts.end(), part) != symbol_parts.end();
  });
}

struct Candidate {
  std::int64_t chunk_id = 0;
  double lexical = 0.0;  // BM25, higher is better
  bool has_lexical = false;
  double cosine = 0.0;
  bool has_cosine = false;
  double value = 0.0;    // what ranks it (per mode)
  double score = 0.0;    // what is shown, in (0, 1]
  store::ChunkRecord record;
  std::string file;      // Source::file_key: what groups it with the other places of its file
};

// The candidates of one query, each chunk once, in the order they were first found.
class Candidates {
public:
  Candidate& at(std::int64_t id) {
    auto [found, added] = m_index_of.try_emplace(id, m_list.size());
    if (added) {
      m_list.emplace_back();
      m_list.back().chunk_id = id;
    }
    return m_list[found->second];
  }
  std::vector<Candidate>& list() { return m_list; }
  std::size_t position(std::int64_t id) const { return m_index_of.at(id); }

private:
  std::vector<Candidate> m_list;
  std::unordered_map<std::int64_t, std::size_t> m_index_of;
};

// What the search works with, besides the candidates.
struct Plan {
  const Source& store;
  const SearchOptions& options;
  const Query& query;
  Mode mode;
  FileFilterSpec filter;
  bool filtered = false;  // a language or path filter is set
  bool accepts(std::string_view path, std::string_view language) const { return filter.accepts(path, language); }
};

// The mode the index and the embedder allow: hybrid without vectors (or without a model) is
// lexical; semantic without vectors is an error, as is an index of another model.
util::Result<Mode> usable_mode(const Source& store, Mode mode, embed::Embedder* embedder) {
  if (embedder == nullptr) return Mode::lexical;
  if (mode == Mode::lexical) return mode;
  const std::string stamp = store.model_stamp();
  if (stamp.empty()) {
    if (mode == Mode::semantic) return util::Error{store.no_vectors_message()};
    return Mode::lexical;
  }
  if (stamp != embedder->model_id()) {
    return util::Error{store.model_mismatch_message(stamp, embedder->model_id())};
  }
  return mode;
}

// The lexical side: the best chunks by BM25 over a pool larger than the page. Returns whether
// the pool was filled (then chunks outside it may still match).
util::Result<bool> add_lexical(const Plan& plan, Candidates& candidates) {
  const int limit = plan.options.limit;
  const int pool = plan.filtered             ? std::max(limit * 50, 2000)
                   : plan.mode == Mode::hybrid ? std::max(limit * 10, k_hybrid_lexical_candidates)
                                               : std::max(limit * 10, 200);
  auto lexical = plan.store.lexical_search(plan.query, plan.options.weights, pool);
  if (!lexical) return lexical.error();
  for (const auto& hit : *lexical) {
    Candidate& c = candidates.at(hit.chunk_id);
    c.lexical = hit.score;
    c.has_lexical = true;
  }
  return static_cast<int>(lexical->size()) >= pool;
}

// The query's vector; empty when no word of it is known to the model (nothing to rank by
// meaning then).
util::Result<std::vector<float>> embed_query(embed::Embedder& embedder, const Query& query) {
  auto embedded = embedder.embed({std::string_view(query.text)}, embed::InputKind::query);
  if (!embedded) return embedded.error();
  std::vector<float> vector;
  if (!embedded->empty()) vector = std::move(embedded->front());
  if (std::all_of(vector.begin(), vector.end(), [](float v) { return v == 0.0f; })) return std::vector<float>{};
  return vector;
}

// The semantic side: the Hamming scan's nearest chunks, rescored by cosine against their
// 4-bit values; hybrid keeps the best k_semantic_candidates of them.
// How many codes the semantic side reads, and which (see add_semantic).
int codes_scanned(const Plan& plan) { return std::max(k_rescore_candidates, plan.options.limit * 3); }
// Hybrid reads the nearest partitions of a partitioned index: its top 10 on the kernel was
// the full scan's for 20 of 20 kernel questions and 98.4% of bench/run.py's 50 general ones.
// Semantic mode, which ranks by the codes alone, lost more there (98% and 91.2% at a quarter
// of the codes, 96.8% at half): it reads them all.
store::CodeScan codes_read(const Plan& plan) {
  return plan.mode == Mode::semantic ? store::CodeScan::every_code : store::CodeScan::nearest_partitions;
}

void add_semantic(const Plan& plan, const std::vector<float>& query_vector, Candidates& candidates) {
  const auto code = store::binary_code(query_vector);
  const auto near = plan.store.nearest_codes(code, codes_scanned(plan), plan.filter, codes_read(plan));
  std::vector<std::int64_t> ids;
  ids.reserve(near.size());
  for (const auto& hit : near) ids.push_back(hit.chunk_id);
  std::vector<std::pair<double, std::int64_t>> rescored;
  const int dims = static_cast<int>(query_vector.size());
  const store::QueryCosine cosine(query_vector);
  for (const auto& vector : plan.store.vectors_by_id(ids, dims)) {
    rescored.emplace_back(cosine(vector.values), vector.chunk_id);
  }
  std::sort(rescored.begin(), rescored.end(), [](const auto& a, const auto& b) {
    return a.first != b.first ? a.first > b.first : a.second < b.second;
  });
  const std::size_t keep =
      plan.mode == Mode::hybrid
          ? std::min(rescored.size(), static_cast<std::size_t>(std::max(
                                          k_semantic_candidates, plan.options.limit * 2)))
          : rescored.size();
  for (std::size_t i = 0; i < keep; ++i) {
    Candidate& c = candidates.at(rescored[i].second);
    c.cosine = rescored[i].first;
    c.has_cosine = true;
  }
}

// Every candidate's record without its text (read for the results alone, at the end); drops
// the chunks gone meanwhile and, for lexical candidates, those the filters refuse.
void load_heads(const Plan& plan, Candidates& candidates) {
  auto& list = candidates.list();
  std::vector<std::int64_t> ids;
  ids.reserve(list.size());
  for (const auto& c : list) ids.push_back(c.chunk_id);
  for (auto& record : plan.store.chunks_by_id(ids, store::Store::Detail::head)) {
    Candidate& c = list[candidates.position(record.id)];
    c.file = plan.store.file_key(record);
    c.record = std::move(record);
  }
  std::erase_if(list, [&](const Candidate& c) {
    return c.record.id == 0 || (plan.filtered && !plan.accepts(c.record.path, c.record.language));
  });
}

// Hybrid: both scores for every candidate (see the top of this file), blended per query.
void blend(const Plan& plan, const std::vector<float>& query_vector, bool lexical_full,
           std::vector<Candidate>& candidates) {
  std::vector<std::int64_t> missing;
  double lexical_floor = 0.0;
  double cosine_floor = 1.0;
  bool first_lexical = true;
  for (const auto& c : candidates) {
    if (!c.has_cosine) missing.push_back(c.chunk_id);
    if (c.has_lexical) {
      lexical_floor = first_lexical ? c.lexical : std::min(lexical_floor, c.lexical);
      first_lexical = false;
    }
    if (c.has_cosine) cosine_floor = std::min(cosine_floor, c.cosine);
  }
  if (!lexical_full) lexical_floor = 0.0;
  std::unordered_map<std::int64_t, double> cosines;
  const int dims = static_cast<int>(query_vector.size());
  const store::QueryCosine cosine(query_vector);
  for (const auto& vector : plan.store.vectors_by_id(missing, dims)) {
    cosines.emplace(vector.chunk_id, cosine(vector.values));
  }
  std::vector<double> lexical;
  std::vector<double> semantic;
  for (auto& c : candidates) {
    if (!c.has_cosine) {
      const auto found = cosines.find(c.chunk_id);
      c.cosine = found != cosines.end() ? found->second : std::min(cosine_floor, 0.0);
    }
    if (!c.has_lexical) c.lexical = lexical_floor;
    lexical.push_back(c.lexical);
    semantic.push_back(c.cosine);
  }
  const auto z_lexical = z_scores(lexical);
  const auto z_semantic = z_scores(semantic);
  const Query& query = plan.query;
  Ranker ranker = plan.options.ranker != nullptr ? *plan.options.ranker : built_in_ranker();
  if (plan.options.hybrid_weight) {
    ranker[Feature::semantic] = *plan.options.hybrid_weight;
    ranker[Feature::lexical] = 1.0 - *plan.options.hybrid_weight;
    ranker[Feature::identifier_semantic] = ranker[Feature::identifier_lexical] = 0.0;
  }
  const double identifier = query_kind(query) == QueryKind::identifier ? 1.0 : 0.0;
  // The file's evidence, once per path: its good places (above the query's average on both
  // sides together), its best chunk on each side, how its path names the query, its kind and
  // its history.
  struct FileEvidence {
    int good = 0;
    double best_lexical = -1e9;
    double best_semantic = -1e9;
    double path = 0.0;
    double history = 0.0;
    FileKind kind = FileKind::source;
    bool named = false;  // path and kind set
  };
  std::unordered_map<std::string, FileEvidence> files;
  for (std::size_t i = 0; i < candidates.size(); ++i) {
    auto& file = files[candidates[i].file];
    if (z_lexical[i] + z_semantic[i] > 0.0) ++file.good;
    file.best_lexical = std::max(file.best_lexical, z_lexical[i]);
    file.best_semantic = std::max(file.best_semantic, z_semantic[i]);
  }
  for (const auto& c : candidates) {
    auto& file = files[c.file];
    if (file.named) continue;
    file.named = true;
    const std::string& path = c.record.path;
    file.path = path_match(path, query);
    const FileKind kind = file_kind(path);
    if (!asks_for_kind(kind, query)) file.kind = kind;
  }
  // The file's history: what its commits said it is about.
  if (query.has_terms()) {
    if (auto history = plan.store.history_search(query, k_history_hits);
        history && !history->empty()) {
      const double best = history->front().score;
      for (const auto& hit : *history) {
        if (const auto file = files.find(hit.path); file != files.end() && best > 0.0) {
          file->second.history = hit.score / best;
        }
      }
    }
  }
  for (std::size_t i = 0; i < candidates.size(); ++i) {
    auto& c = candidates[i];
    const auto& file = files[c.file];
    Features f{};
    const auto set = [&f](Feature feature, double value) { f[static_cast<int>(feature)] = value; };
    set(Feature::lexical, z_lexical[i]);
    set(Feature::semantic, z_semantic[i]);
    set(Feature::identifier_lexical, identifier * z_lexical[i]);
    set(Feature::identifier_semantic, identifier * z_semantic[i]);
    const double lexical_score = c.has_lexical ? squash(c.lexical) : 0.0;
    set(Feature::lexical_absolute, lexical_score);
    set(Feature::semantic_absolute, calibrated(c.cosine));
    set(Feature::path, file.path);
    set(Feature::history, file.history);
    const int good = file.good - (z_lexical[i] + z_semantic[i] > 0.0 ? 1 : 0);
    set(Feature::other_places, std::min(good, k_file_bonus_chunks));
    set(Feature::file_lexical, file.best_lexical);
    set(Feature::file_semantic, file.best_semantic);
    set(Feature::name_words, symbol_holds(query.parts, c.record) ? 1.0 : 0.0);
    switch (file.kind) {
      case FileKind::source: break;
      case FileKind::test: set(Feature::kind_test, 1.0); break;
      case FileKind::example: set(Feature::kind_example, 1.0); break;
      case FileKind::docs: set(Feature::kind_docs, 1.0); break;
      case FileKind::changelog: set(Feature::kind_changelog, 1.0); break;
      case FileKind::build: set(Feature::kind_build, 1.0); break;
      case FileKind::generated: set(Feature::kind_generated, 1.0); break;
      case FileKind::barrel: set(Feature::kind_barrel, 1.0); break;
      case FileKind::stubs: set(Feature::kind_stubs, 1.0); break;
    }
    c.value = ranker.value(f);
    // Exact identifiers above everything, ordered among themselves by their lexical score.
    const bool exact = std::any_of(query.identifiers.begin(), query.identifiers.end(),
                                   [&](const std::string& word) { return names_chunk(word, c.record); });
    if (exact) c.value = k_exact_symbol_boost + z_lexical[i];
    c.score = 1.0 - (1.0 - lexical_score) * (1.0 - calibrated(c.cosine));
    if (plan.options.candidates_out != nullptr) {
      plan.options.candidates_out->push_back(
          RankedCandidate{c.record.path, c.record.chunk.start_line, exact, f});
    }
  }
}

// The page: candidates by value (ties by path and line), at most max_per_file of a file
// before other files get their turn, scores made non-increasing, full records read.
std::vector<SearchHit> order(const Plan& plan, std::vector<Candidate>& candidates) {
  const SearchOptions& options = plan.options;
  // Pointers are sorted, not the candidates: each holds a record of several strings, and
  // moving them through two sorts costs ~6% of a search (callgrind, 110k chunks).
  std::vector<Candidate*> ranked;
  ranked.reserve(candidates.size());
  for (auto& c : candidates) ranked.push_back(&c);
  std::sort(ranked.begin(), ranked.end(), [](const Candidate* a, const Candidate* b) {
    if (a->value != b->value) return a->value > b->value;
    if (a->record.path != b->record.path) return a->record.path < b->record.path;
    if (a->record.chunk.start_line != b->record.chunk.start_line) {
      return a->record.chunk.start_line < b->record.chunk.start_line;
    }
    return a->chunk_id < b->chunk_id;
  });

  // Diversity: the n-th place of a file ranks as if (n − 1)·k_repeat_penalty lower, so the
  // first screen shows the best places of several files before a second of the same file.
  // Exact identifier matches keep their places (they lie k_exact_symbol_boost above).
  if (plan.mode == Mode::hybrid) {
    std::unordered_map<std::string_view, int> seen;
    for (Candidate* c : ranked) c->value -= k_repeat_penalty * seen[c->file]++;
    std::stable_sort(ranked.begin(), ranked.end(),
                     [](const Candidate* a, const Candidate* b) { return a->value > b->value; });
  }
  std::vector<Candidate*> ordered;
  std::vector<Candidate*> deferred;
  std::unordered_map<std::string_view, int> per_file;
  for (Candidate* c : ranked) {
    if (c->score <= 0.0 || c->score < options.min_score) continue;  // no match at all, or too weak
    if (static_cast<int>(ordered.size()) >= options.limit) break;
    if (per_file[c->file]++ < options.max_per_file) {
      ordered.push_back(c);
    } else {
      deferred.push_back(c);
    }
  }
  for (Candidate* c : deferred) {
    if (static_cast<int>(ordered.size()) >= options.limit) break;
    ordered.push_back(c);
  }
  std::vector<std::int64_t> result_ids;
  result_ids.reserve(ordered.size());
  for (const Candidate* c : ordered) result_ids.push_back(c->chunk_id);
  std::unordered_map<std::int64_t, store::ChunkRecord> full;
  for (auto& record : plan.store.chunks_by_id(result_ids, store::Store::Detail::full)) {
    full.emplace(record.id, std::move(record));
  }
  std::vector<SearchHit> results;
  results.reserve(ordered.size());
  for (Candidate* c : ordered) {
    auto found = full.find(c->chunk_id);
    if (found == full.end()) continue;  // replaced by a writer between the two reads
    double score = c->score;
    if (!results.empty()) score = std::min(score, results.back().score);
    results.push_back(SearchHit{static_cast<int>(results.size()) + 1, score, plan.mode,
                                std::move(found->second), plan.store.origin(c->chunk_id)});
  }
  return results;
}

} // namespace

std::optional<Mode> parse_mode(std::string_view name) {
  if (name == "hybrid") return Mode::hybrid;
  if (name == "semantic") return Mode::semantic;
  if (name == "lexical") return Mode::lexical;
  return std::nullopt;
}

std::string_view mode_name(Mode mode) {
  switch (mode) {
    case Mode::hybrid: return "hybrid";
    case Mode::semantic: return "semantic";
    case Mode::lexical: return "lexical";
  }
  return "hybrid";
}

std::string qualified_name(const store::ChunkRecord& record) {
  const auto& chunk = record.chunk;
  if (chunk.parent.empty() || chunk.symbol.empty()) return chunk.symbol;
  const auto& language = record.language;
  const bool colons = language == "cpp" || language == "c" || language == "rust" || language == "php";
  return chunk.parent + (colons ? "::" : ".") + chunk.symbol;
}

std::vector<double> z_scores(const std::vector<double>& values) {
  std::vector<double> z(values.size(), 0.0);
  if (values.size() < 2) return z;
  double mean = 0.0;
  for (double v : values) mean += v;
  mean /= static_cast<double>(values.size());
  double variance = 0.0;
  for (double v : values) variance += (v - mean) * (v - mean);
  const double deviation = std::sqrt(variance / static_cast<double>(values.size()));
  if (deviation < 1e-12) return z;
  for (std::size_t i = 0; i < values.size(); ++i) z[i] = (values[i] - mean) / deviation;
  return z;
}

util::Result<std::vector<SearchHit>> search(const store::Store& store, const SearchOptions& options,
                                            embed::Embedder* embedder) {
  return search(LocalSource(store), options, embedder);
}

util::Result<std::vector<SearchHit>> search(const Source& store, const SearchOptions& options,
                                            embed::Embedder* embedder) {
  if (options.mode == Mode::semantic && embedder == nullptr) {
    return util::Error{
        "semantic search needs an embedding model and this index has none: use --mode lexical"};
  }
  if (options.limit <= 0) return std::vector<SearchHit>{};
  auto mode = usable_mode(store, options.mode, embedder);
  if (!mode) return mode.error();
  const Query query = parse_query(options.query);
  Plan plan{store, options, query, *mode, FileFilterSpec{options.language, options.path_glob}};
  plan.filtered = !plan.filter.empty();
  Candidates candidates;

  // The query's vector first, so that a source whose Hamming scan runs on a server can
  // start it while the lexical side runs; the candidates are still added lexical first.
  std::vector<float> query_vector;
  if (plan.mode != Mode::lexical) {
    auto embedded = embed_query(*embedder, query);
    if (!embedded) return embedded.error();
    query_vector = std::move(embedded).value();
    if (query_vector.empty() && plan.mode == Mode::semantic) return std::vector<SearchHit>{};
    if (!query_vector.empty()) {
      // The hybrid blend asks for the files' histories (blend): on a server, that search
      // runs after the scan, beside the lexical side too.
      if (plan.mode == Mode::hybrid && query.has_terms()) store.start_history_search(query, k_history_hits);
      store.start_nearest_codes(store::binary_code(query_vector), codes_scanned(plan), plan.filter,
                                codes_read(plan));
    }
  }
  bool lexical_full = false;
  if (plan.mode != Mode::semantic) {
    if (!query.has_terms() && plan.mode == Mode::lexical) return std::vector<SearchHit>{};
    auto full = add_lexical(plan, candidates);
    if (!full) return full.error();
    lexical_full = *full;
  }
  if (plan.mode != Mode::lexical) {
    if (query_vector.empty()) {
      plan.mode = Mode::lexical;
    } else {
      add_semantic(plan, query_vector, candidates);
    }
  }
  load_heads(plan, candidates);

  auto& list = candidates.list();
  if (plan.mode == Mode::lexical) {
    for (auto& c : list) {
      c.value = c.lexical;
      c.score = squash(c.lexical);
    }
  } else if (plan.mode == Mode::semantic) {
    for (auto& c : list) {
      c.value = c.cosine;
      c.score = calibrated(c.cosine);
    }
  } else {
    blend(plan, query_vector, lexical_full, list);
  }
  return order(plan, list);
}

} // namespace kasava::search
