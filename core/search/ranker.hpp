// The weighed part of hybrid ranking: the named features of a candidate chunk (each computed
// from the two retrieval scores, the path, the query and the file's history — what a
// PostgreSQL store can compute as well) and the linear weights that turn them into a value.
// The weights are fitted on the tuning part of the commit-subject set by tools/rank/fit-ranker
// and committed as models/ranker.tsv, which the build compiles in.
#pragma once

#include <array>
#include <string>
#include <string_view>

#include "core/util/result.hpp"

namespace kasava::search {

/// One feature per row of models/ranker.tsv, in this order. See ranker.cpp for each one.
enum class Feature : int {
  lexical,              ///< the lexical score (BM25), standard score over this query's candidates
  semantic,             ///< the cosine, standard score over this query's candidates
  identifier_lexical,   ///< `lexical` when the query is one identifier, else 0
  identifier_semantic,  ///< `semantic` when the query is one identifier, else 0
  lexical_absolute,     ///< BM25 squashed into [0, 1): comparable across queries
  semantic_absolute,    ///< the cosine calibrated into [0, 1]
  path,                 ///< how the file's path names the query, [0, 1]
  history,              ///< the file's history BM25 over the best file's, [0, 1]
  other_places,         ///< other candidates of the file above the query's average, at most 2
  file_lexical,         ///< the best `lexical` among the file's candidates
  file_semantic,        ///< the best `semantic` among the file's candidates
  name_words,           ///< 1 when the chunk's name holds all the query's words (two or more)
  kind_test,            ///< 1 for a test file when the query does not ask about tests
  kind_example,         ///< … an example, and so on for each kind of file
  kind_docs,
  kind_changelog,
  kind_build,
  kind_generated,
  kind_barrel,
  kind_stubs,
};
inline constexpr int k_feature_count = static_cast<int>(Feature::kind_stubs) + 1;

using Features = std::array<double, k_feature_count>;

std::string_view feature_name(Feature feature);

/// A linear ranker: value = Σ weight · feature.
struct Ranker {
  Features weights{};
  double value(const Features& features) const;
  double& operator[](Feature feature) { return weights[static_cast<int>(feature)]; }
  double operator[](Feature feature) const { return weights[static_cast<int>(feature)]; }
};

/// Reads a ranker file: one `name<TAB>weight` line per feature, each feature exactly once,
/// `#` comments and blank lines ignored.
util::Result<Ranker> parse_ranker(std::string_view text);

/// The ranker compiled in from models/ranker.tsv.
const Ranker& built_in_ranker();

} // namespace kasava::search
