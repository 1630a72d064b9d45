// The shared PostgreSQL store: many repositories and refs in one database, content-addressed
// by (git blob id, model) so that a file shared by branches and forks is stored once. This
// file: opening it (the schema created or upgraded on first use), publishing (which blobs the
// store lacks, sending them, swapping a (repository, ref) snapshot atomically) and the
// figures of `kasava status --store`. The tables are described in ARCHITECTURE.md.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/types/chunk.hpp"
#include "core/util/result.hpp"
#include "core/util/stem.hpp"

namespace kasava::pgstore {

class Connection;

/// The store schema's version (table kasava_schema). 1: repositories, refs and their snapshot
/// files, blob texts, blobs, chunks with their terms and vectors. 2: term_stats and
/// model_stats, the document frequencies BM25 needs (ts_rank has no IDF), filled from the
/// stored chunks when a version 1 store is upgraded. 3: terms Porter-stemmed
/// (util::porter_stem) and lengths of all fields; upgrading forgets the chunks, which the
/// next publish of each ref sends again. 4: a chunk's terms a jsonb object of per-field
/// counts (chunk_terms) instead of a tsvector, converted in place. 5: each file history's
/// terms (history_terms) and length, and per ref its histories' number and tokens, computed
/// from the stored histories when upgrading. 6: each model's codes in partitions
/// (code_partitions, chunk_codes.partition), none until a publish trains them. 7: term_stats
/// with half of each page free (fillfactor 50) for the publishes' upserts, rewritten so.
inline constexpr int k_schema_version = 7;

/// The advisory lock between publishers and the collector of unreferenced blobs
/// (maintenance.hpp): a publisher holds it shared from its presence check to its swap, so
/// blobs it found present are still there when its snapshot starts referencing them; the
/// collector takes it exclusively for its transaction.
inline constexpr std::int64_t k_collect_lock = 0x6b61736176610002;

/// Below this many codes of a model, a search reads them all (~40 ms or less): no partitions
/// (partitions.hpp).
inline constexpr std::int64_t k_partition_min_codes = 100'000;

/// One chunk of a blob to publish: its metadata and text (for its terms), its binary code and
/// its stored values (store::pack_values' bytes) when the index has a vector for it.
struct ChunkUpload {
  types::Chunk chunk;
  std::string code;    ///< sign bits, LSB first per byte; "" = none
  std::string values;  ///< 4-bit values and scale; "" = none
};

/// A blob to publish: its id (40 hex, already checked to be the git hash of `text`) and its
/// chunks in file order.
struct BlobUpload {
  std::string blob_id;
  std::string language;
  std::string text;
  std::vector<ChunkUpload> chunks;
};

/// One file of a snapshot.
struct SnapshotFile {
  std::string path;
  std::string blob_id;  ///< 40 hex
  std::string language;
};

/// What a (repository, ref) holds after a publish.
struct Snapshot {
  std::string repository;  ///< "org/name"
  std::string ref;         ///< a branch name or a revision
  std::string commit;      ///< the commit indexed ("" for a plain directory)
  std::string model;
  std::vector<SnapshotFile> files;
  /// Per path, the text of the newest commits that touched it (the index's history field):
  /// kept per (repository, ref) beside the snapshot, never in the blob tables.
  std::vector<std::pair<std::string, std::string>> history;
};

/// How a snapshot swap went.
struct SwapResult {
  bool changed = false;      ///< false: the ref already held exactly these files and commit
  std::int64_t chunks = 0;   ///< chunks the ref's files hold
};

/// One ref, as `kasava status --store` lists it.
struct RefStatus {
  std::string repository;
  std::string ref;
  std::string commit;
  std::string model;
  std::string published_at;  ///< ISO 8601, UTC
  std::int64_t files = 0;
  std::int64_t chunks = 0;
};

/// The store's figures.
struct StoreStatus {
  std::string where;  ///< host:port
  int schema_version = 0;
  std::int64_t repositories = 0;
  std::vector<RefStatus> refs;   ///< by repository, then ref
  std::int64_t unique_blobs = 0;  ///< (blob, model) rows
  std::int64_t chunks = 0;        ///< chunks of the unique blobs
  std::int64_t bytes = 0;         ///< the store's tables and indexes on disk
};

class Store {
public:
  /// Connects (see Connection::open) and makes sure the schema is this kasava's: created when
  /// the database has none, upgraded in one transaction when older, refused when newer.
  static util::Result<std::unique_ptr<Store>> open(const std::string& conninfo);
  /// For tests: creates the schema of an older `version` (>= 1) in an empty database, as that
  /// kasava would have, without upgrading it.
  static util::Status create_schema_version(const std::string& conninfo, int version);
  ~Store();
  Store(const Store&) = delete;
  Store& operator=(const Store&) = delete;

  /// "host:port" of the server, for messages.
  const std::string& where() const;

  /// Takes k_collect_lock shared for this session (waiting while a collection runs), until
  /// swap_snapshot commits or the connection ends: call it before present_blobs.
  void hold_publish_lock();
  /// The ids among `blob_ids` (40 hex) that the store holds for `model`, in one query.
  std::vector<std::string> present_blobs(const std::vector<std::string>& blob_ids,
                                         const std::string& model);
  /// Stores blobs with their text (compressed), chunks, terms and vectors, in one
  /// transaction, in blob id order (so concurrent publishers wait for each other instead of
  /// deadlocking), ignoring any another publisher stored meanwhile. Returns how many were new.
  std::int64_t put_blobs(std::vector<BlobUpload> blobs, const std::string& model);
  /// Replaces the (repository, ref) snapshot with `snapshot` in one transaction, under the
  /// ref's row lock: readers see the old or the new one, concurrent publishers of the same
  /// ref follow each other. Every file's blob must be stored for the model.
  SwapResult swap_snapshot(const Snapshot& snapshot);
  /// After a swap: trains the partitions of the model's codes when they are due
  /// (train_partitions in partitions.hpp). Returns the codes partitioned, 0 when none.
  /// `min_codes`: for tests (k_partition_min_codes).
  std::int64_t update_partitions(const std::string& model, std::int64_t min_codes = k_partition_min_codes);

  StoreStatus status();
  /// The connection, for the maintenance queries (maintenance.hpp).
  Connection& connection() { return *m_connection; }

private:
  explicit Store(std::unique_ptr<Connection> connection);
  SwapResult swap(const Snapshot& snapshot);
  std::unique_ptr<Connection> m_connection;
  bool m_publish_lock = false;
  util::StemCache m_stems;  // the terms of this publish's chunks and histories
};

/// A chunk's terms as the store keeps them (schema 4): a JSON object of its kasava tokens
/// (util::for_each_code_token), Porter-stemmed (util::porter_stem, as the local index's FTS5
/// stems them), each with term_counts_value of its occurrences per field: symbol and parent,
/// signature, doc, body. Tokens that are not valid UTF-8 or of 2 KiB and more are left out.
/// `length` gets the number of tokens of all fields (FTS5's row length without the path,
/// which a snapshot adds); `distinct`, when given, the chunk's terms (each once).
/// `stems`: a cache to stem through (a publish's), else each token is stemmed anew.
std::string chunk_terms(const types::Chunk& chunk, int& length,
                        std::vector<std::string>* distinct = nullptr,
                        util::StemCache* stems = nullptr);

/// A file history's terms as the store keeps them (schema 5): a JSON object of its kasava
/// tokens, Porter-stemmed and left out as in chunk_terms, each with its occurrences (a JSON
/// number). `length` gets the number of tokens (FTS5's length of the local history's row).
std::string history_terms(std::string_view text, int& length, util::StemCache* stems = nullptr);

/// A term's occurrences per field (symbol and parent, signature, doc, body), each capped at
/// 127, packed as one number (the first field highest, 7 bits each) in decimal: a JSON string
/// in a chunk's terms, read back in SQL with `(terms ->> term)::int` and shifts.
std::string term_counts_value(const std::array<int, 4>& counts);

} // namespace kasava::pgstore
