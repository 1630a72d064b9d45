// Answers a query from the index in one of three modes — lexical (BM25 over code-aware tokens
// with field weights), semantic (the query's vector against the chunks' vectors: Hamming scan,
// 4-bit rescoring) or hybrid (both, blended per query, then weighed by the file: its path and
// kind) — with filters (language, path glob), per-file grouping and a stable, deterministic
// order. See search.cpp for the ranking.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/embed/embedder.hpp"
#include "core/search/query.hpp"
#include "core/search/ranker.hpp"
#include "core/search/source.hpp"
#include "core/store/store.hpp"
#include "core/util/result.hpp"

namespace kasava::search {

enum class Mode { hybrid, semantic, lexical };

/// Parses "hybrid" / "semantic" / "lexical".
std::optional<Mode> parse_mode(std::string_view name);
/// "hybrid" / "semantic" / "lexical".
std::string_view mode_name(Mode mode);

/// A hybrid candidate's features as the ranker saw them (for refitting the ranker).
struct RankedCandidate {
  std::string path;
  int start_line = 0;
  bool exact = false;  ///< ranked first by the exact-identifier rule, whatever its features
  Features features{};
};

struct SearchOptions {
  std::string query;
  int limit = 10;
  std::string language;   ///< "" = any
  std::string path_glob;  ///< "" = any; see util::glob_match
  Mode mode = Mode::hybrid;
  double min_score = 0.0;
  int max_per_file = 3;   ///< chunks of one file before other files get their turn
  store::FieldWeights weights;
  /// The hybrid ranker's weights; null = the built-in one (tuning runs give another).
  const Ranker* ranker = nullptr;
  /// The blend's w (w·semantic + (1−w)·lexical) for every query instead of the ranker's
  /// own weights of those two features.
  std::optional<double> hybrid_weight;
  /// When set, hybrid search appends every candidate's features here.
  std::vector<RankedCandidate>* candidates_out = nullptr;
};

struct SearchHit {
  int rank = 0;  ///< 1-based
  /// In (0, 1], higher is better, never higher than the hit before; absolute, so
  /// --min-score means the same for every query. Per mode: lexical bm25 / (bm25 + 8);
  /// semantic the cosine calibrated between what unrelated texts reach (0) and a clear
  /// match (1); hybrid 1 − (1 − lexical)(1 − semantic) of those two.
  double score = 0.0;
  Mode mode = Mode::lexical;  ///< the mode that ranked it (hybrid without vectors is lexical)
  store::ChunkRecord record;
  Origin origin;  ///< a shared store's result: its repository and ref; empty for a local index
};

/// A chunk's symbol qualified by its parent the way its language writes it:
/// `Store::open` (C++, Rust, PHP), `Request.Cookies` (others); the bare symbol without parent.
std::string qualified_name(const store::ChunkRecord& record);

/// Per-query standard scores: (x − mean) / standard deviation; all 0 when they are all equal.
std::vector<double> z_scores(const std::vector<double>& values);

/// Runs a search. `embedder` may be null, and the index may have no vectors (built without a
/// model): hybrid then falls back to lexical, semantic is an error. An index built with
/// another model than `embedder`'s is an error naming both and the fix.
util::Result<std::vector<SearchHit>> search(const Source& source, const SearchOptions& options,
                                            embed::Embedder* embedder);
/// search() of a local index (through LocalSource).
util::Result<std::vector<SearchHit>> search(const store::Store& store, const SearchOptions& options,
                                            embed::Embedder* embedder);

} // namespace kasava::search
