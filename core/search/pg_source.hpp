// The shared PostgreSQL store as a search source (see source.hpp): the candidates of the
// selected refs' snapshots, found by PostgreSQL (core/pgstore/search.*), handed to the one
// ranking of search.cpp with ids this object gives out per search. A candidate is a chunk of a
// blob at one path: the same (blob, ordinal, path) in several refs (a fork, another branch)
// is one candidate, ranked as its first holder's (by repository, then ref), whose origin
// lists the others.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/pgstore/search.hpp"
#include "core/search/source.hpp"

namespace kasava::search {

class StoreSource final : public Source {
public:
  /// Another reader of the same store, or nullptr when none can be had. Called on another
  /// thread.
  using OpenReader = std::function<std::shared_ptr<pgstore::Reader>()>;

  /// Searches `refs` (all of one model, `model`) of the store `reader` reads. With
  /// `another`, start_nearest_codes runs the Hamming scan (and the history search, when
  /// asked) on another reader, on a thread of its own, while `reader` runs the lexical
  /// statements.
  StoreSource(pgstore::Reader& reader, std::vector<pgstore::RefInfo> refs, OpenReader another = {});
  ~StoreSource() override;

  std::string model_stamp() const override;
  std::string no_vectors_message() const override;
  std::string model_mismatch_message(const std::string& stamp, const std::string& model) const override;
  util::Result<std::vector<store::LexicalHit>> lexical_search(const Query& query, const store::FieldWeights& weights,
                                                              int limit) const override;
  /// The scan runs in PostgreSQL; across most of a partitioned store, nearest_partitions
  /// reads the partitions nearest `code` (Reader::nearest_codes), every_code all of them.
  std::vector<store::CodeHit> nearest_codes(std::span<const std::uint8_t> code, int limit,
                                            const FileFilterSpec& filter, store::CodeScan scan) const override;
  /// With another reader: the scan started on it. nearest_codes with the same arguments
  /// takes its result; when it failed (another reader could not be had, or its statement
  /// failed), nearest_codes runs it on `reader`.
  void start_nearest_codes(std::span<const std::uint8_t> code, int limit, const FileFilterSpec& filter,
                           store::CodeScan scan) const override;
  /// With another reader: the scan started next runs this search after it, on the same
  /// reader; history_search with the same query and limit takes its result, or runs it on
  /// `reader` when it failed.
  void start_history_search(const Query& query, int limit) const override;
  std::vector<store::StoredVector> vectors_by_id(const std::vector<std::int64_t>& ids, int dims) const override;
  std::vector<store::ChunkRecord> chunks_by_id(const std::vector<std::int64_t>& ids,
                                               store::Store::Detail detail) const override;
  util::Result<std::vector<store::HistoryHit>> history_search(const Query& query, int limit) const override;
  std::string file_key(const store::ChunkRecord& record) const override;
  Origin origin(std::int64_t chunk_id) const override;

private:
  struct State;
  std::unique_ptr<State> m_state;
};

/// BM25 of one document as FTS5's bm25() computes it (k1 1.2, b 0.75, IDF floored at 1e-6):
/// per query term (repeats count again) its weighted frequency in the document and the
/// number of documents holding it, among `documents` of `average_length` tokens.
double bm25(const std::vector<double>& frequencies, const std::vector<std::int64_t>& document_frequencies,
            double length, double documents, double average_length);

} // namespace kasava::search
