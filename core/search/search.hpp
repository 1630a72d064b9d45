// Answers a query from the index: lexical BM25 retrieval over code-aware tokens with field
// weights, filters (language, path glob), per-file grouping, and a stable, deterministic order.
// Semantic and hybrid ranking plug in through embed::Embedder.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/embed/embedder.hpp"
#include "core/store/store.hpp"
#include "core/util/result.hpp"

namespace kasava::search {

enum class Mode { hybrid, semantic, lexical };

/// Parses "hybrid" / "semantic" / "lexical".
std::optional<Mode> parse_mode(std::string_view name);

struct SearchOptions {
  std::string query;
  int limit = 10;
  std::string language;   ///< "" = any
  std::string path_glob;  ///< "" = any; see util::glob_match
  Mode mode = Mode::hybrid;
  double min_score = 0.0;
  int max_per_file = 3;   ///< chunks of one file before other files get their turn
  store::FieldWeights weights;
};

struct SearchHit {
  int rank = 0;  ///< 1-based
  double score = 0.0;  ///< in (0, 1], higher is better
  store::ChunkRecord record;
};

/// A chunk's symbol qualified by its parent the way its language writes it:
/// `Store::open` (C++, Rust, PHP), `Request.Cookies` (others); the bare symbol without parent.
std::string qualified_name(const store::ChunkRecord& record);

/// The FTS5 MATCH expression for a query: its terms (util::query_terms), quoted, OR-ed.
/// "" when the query has no searchable term.
std::string match_expression(std::string_view query);

/// Runs a search. `embedder` may be null (no model in this index): hybrid then falls back to
/// lexical, semantic is an error.
util::Result<std::vector<SearchHit>> search(const store::Store& store, const SearchOptions& options,
                                            embed::Embedder* embedder);

} // namespace kasava::search
