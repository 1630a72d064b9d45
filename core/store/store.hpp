// The index file: one SQLite database holding files, chunks (text and metadata), a full-text
// index over code-aware tokens and, later, vectors. The only module that includes <sqlite3.h>.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/types/chunk.hpp"
#include "core/util/result.hpp"

namespace kasava::store {

/// Bumped whenever the schema or the tokenization changes; older indexes must be rebuilt.
inline constexpr int k_schema_version = 1;

enum class OpenMode {
  read_only,   ///< the file must exist; nothing is written
  read_write,  ///< created (with parent directories) when missing
};

/// What the index remembers of one file.
struct FileState {
  std::string blob_id;
  std::string skip_reason;  ///< "" when indexed; else why it was skipped ("binary", ...)
};

/// A file to store, with its chunks.
struct FileRecord {
  std::string path;
  std::string blob_id;
  std::string language;
  std::uint64_t size = 0;
  std::string skip_reason;  ///< non-empty: remembered as skipped, no chunks
};

/// One stored chunk with its file's data, as search results need it.
struct ChunkRecord {
  std::int64_t id = 0;
  std::string path;
  std::string language;
  types::Chunk chunk;
};

/// Weights of the full-text columns in BM25 (symbol, path, doc, body).
struct FieldWeights {
  double symbol = 10.0;
  double path = 4.0;
  double doc = 3.0;
  double body = 1.0;
};

/// A lexical candidate: a chunk id and its BM25 score (higher is better, > 0).
struct LexicalHit {
  std::int64_t chunk_id = 0;
  double score = 0.0;
};

/// Summary figures for `kasava status`.
struct Stats {
  std::int64_t files = 0;          ///< files indexed (no skip reason)
  std::int64_t skipped_files = 0;  ///< files remembered as skipped
  std::int64_t chunks = 0;
  std::map<std::string, std::int64_t> files_per_language;  ///< indexed files only
  std::uint64_t source_bytes = 0;                          ///< total size of the indexed files
  std::uint64_t index_bytes = 0;  ///< size of the database file (page_count * page_size)
};

class Store {
public:
  /// Opens (or, read_write, creates) the index at `path`. Errors are one line with the path
  /// quoted: not a database, schema version from another kasava (say how to rebuild), missing.
  static util::Result<std::unique_ptr<Store>> open(const std::string& path, OpenMode mode);
  /// Deletes the index file at `path` with its WAL and shared-memory companions (for
  /// `kasava index --rebuild`). A missing file is not an error. No Store may have it open.
  static util::Status remove(const std::string& path);
  ~Store();
  Store(const Store&) = delete;
  Store& operator=(const Store&) = delete;

  const std::string& path() const;

  // --- metadata (key/value): "root", "commit", "indexed_at", "embedding_model", ...
  std::optional<std::string> meta(std::string_view key) const;
  void set_meta(std::string_view key, std::string_view value);

  // --- files
  /// Every stored file by path.
  std::map<std::string, FileState> file_states() const;

  // --- writes; group them in transactions (a killed process leaves the last commit intact)
  void begin();
  void commit();
  void rollback();
  /// Replaces whatever is stored for record.path with this version and its chunks.
  void put_file(const FileRecord& record, const std::vector<types::Chunk>& chunks);
  /// Forgets a file and its chunks.
  void remove_file(std::string_view path);
  /// Merges the full-text index into one segment: smaller and faster to search. Worth it after
  /// a large batch of writes (a first index, a rebuild); costs about a rewrite of the index.
  /// Call outside a transaction.
  void optimize();

  // --- reads
  /// Best chunks for an FTS5 MATCH expression, by weighted BM25, at most `limit`.
  /// An invalid expression is an error, not an exception.
  util::Result<std::vector<LexicalHit>> lexical_search(std::string_view match_expression,
                                                       const FieldWeights& weights, int limit) const;
  /// The chunks with these ids (any order; unknown ids are skipped).
  std::vector<ChunkRecord> chunks_by_id(const std::vector<std::int64_t>& ids) const;
  Stats stats() const;

private:
  struct Impl;
  explicit Store(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> m_impl;
};

} // namespace kasava::store
