// What a search reads, behind one interface with two implementations: a local index
// (LocalSource, a thin adapter over store::Store) and the shared PostgreSQL store
// (pg_source.hpp). The ranking in search.cpp asks only these questions, so both are ranked
// by the same code: the model stamp, lexical candidates with their BM25 scores, nearest
// codes, vectors and records by id, history hits, and where a result comes from.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/search/query.hpp"
#include "core/store/store.hpp"
#include "core/util/result.hpp"

namespace kasava::search {

/// Which files a search keeps: a language and a path glob ("" = any).
struct FileFilterSpec {
  std::string language;
  std::string path_glob;
  bool empty() const { return language.empty() && path_glob.empty(); }
  bool accepts(std::string_view path, std::string_view language) const;
};

/// Where a result is held in a shared store: its repository and ref, and the other
/// "repository@ref" holding the same file (forks, branches). Empty for a local index.
struct Origin {
  std::string repository;
  std::string ref;
  std::vector<std::string> also_in;
};

class Source {
public:
  virtual ~Source() = default;

  /// The model the vectors were made with; "" when there are none.
  virtual std::string model_stamp() const = 0;
  /// The error when semantic search is asked of a source without vectors.
  virtual std::string no_vectors_message() const = 0;
  /// The error when the source's model (`stamp`) is not the one in use (`model`).
  virtual std::string model_mismatch_message(const std::string& stamp, const std::string& model) const = 0;

  /// The best chunks for the query's terms by weighted BM25, at most `limit`.
  virtual util::Result<std::vector<store::LexicalHit>> lexical_search(const Query& query,
                                                                      const store::FieldWeights& weights,
                                                                      int limit) const = 0;
  /// The `limit` chunks nearest to `code` by Hamming distance among the files `filter` keeps
  /// (`scan`: see store::Store::nearest_codes).
  virtual std::vector<store::CodeHit> nearest_codes(std::span<const std::uint8_t> code, int limit,
                                                    const FileFilterSpec& filter,
                                                    store::CodeScan scan) const = 0;
  /// Told the nearest_codes call to come before the lexical side runs: a source whose scan
  /// runs elsewhere (a server) may start it meanwhile. The default does nothing.
  virtual void start_nearest_codes(std::span<const std::uint8_t> /*code*/, int /*limit*/,
                                   const FileFilterSpec& /*filter*/, store::CodeScan /*scan*/) const {}
  /// Told, before start_nearest_codes, that history_search will be asked about `query`: a
  /// source that starts the scan elsewhere may run this search there after it. The default
  /// does nothing.
  virtual void start_history_search(const Query& /*query*/, int /*limit*/) const {}
  virtual std::vector<store::StoredVector> vectors_by_id(const std::vector<std::int64_t>& ids, int dims) const = 0;
  virtual std::vector<store::ChunkRecord> chunks_by_id(const std::vector<std::int64_t>& ids,
                                                       store::Store::Detail detail) const = 0;
  /// Files ranked by BM25 of the query's terms over their history, best first; a hit's path
  /// is the file's key (file_key).
  virtual util::Result<std::vector<store::HistoryHit>> history_search(const Query& query, int limit) const = 0;
  /// What tells a file apart from the others for grouping and file evidence: its path in a
  /// local index; repository and path in a shared store.
  virtual std::string file_key(const store::ChunkRecord& record) const { return record.path; }
  /// Where the result with this chunk id is held (empty for a local index).
  virtual Origin origin(std::int64_t /*chunk_id*/) const { return {}; }
};

/// A local index as a Source.
class LocalSource final : public Source {
public:
  explicit LocalSource(const store::Store& store) : m_store(store) {}
  std::string model_stamp() const override;
  std::string no_vectors_message() const override;
  std::string model_mismatch_message(const std::string& stamp, const std::string& model) const override;
  util::Result<std::vector<store::LexicalHit>> lexical_search(const Query& query, const store::FieldWeights& weights,
                                                              int limit) const override;
  std::vector<store::CodeHit> nearest_codes(std::span<const std::uint8_t> code, int limit,
                                            const FileFilterSpec& filter, store::CodeScan scan) const override;
  std::vector<store::StoredVector> vectors_by_id(const std::vector<std::int64_t>& ids, int dims) const override;
  std::vector<store::ChunkRecord> chunks_by_id(const std::vector<std::int64_t>& ids,
                                               store::Store::Detail detail) const override;
  util::Result<std::vector<store::HistoryHit>> history_search(const Query& query, int limit) const override;

private:
  const store::Store& m_store;
};

} // namespace kasava::search
