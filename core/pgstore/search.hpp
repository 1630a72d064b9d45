// Reading the shared PostgreSQL store for `kasava ask --store`: which refs there are, and the
// candidates of a query within a set of refs — chunks whose stemmed terms match (GIN `?|`,
// with each matching term's occurrences per field for BM25), chunks nearest by Hamming
// distance of their binary codes (`bit_count`), their vectors, records, holders (the refs and
// paths whose snapshot has the blob), blob texts and file histories. Plain rows: the ranking
// is core/search's, the same code as for a local index (core/search/pg_source.*). All SQL of
// the read side is here; and ReaderPool, the open readers a long-running process keeps.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "core/types/chunk.hpp"
#include "core/util/result.hpp"

namespace kasava::pgstore {

class Connection;
struct CodePartitions;

/// One published ref.
struct RefInfo {
  std::int64_t id = 0;
  std::string repository;
  std::string ref;
  std::string model;
  std::int16_t model_id = 0;  ///< the model's id in the store; 0 when it has none
  std::string published_at;  ///< ISO 8601 UTC, sortable
  std::int64_t history_files = 0;  ///< files with a history
};

/// A chunk of the store: its blob (40 hex) and ordinal.
struct ChunkKey {
  std::string blob;
  int ordinal = 0;
  bool operator<(const ChunkKey& other) const {
    return blob != other.blob ? blob < other.blob : ordinal < other.ordinal;
  }
  bool operator==(const ChunkKey& other) const = default;
};

/// A chunk's stored fields (no text: that is the blob's lines).
struct ChunkRow {
  ChunkKey key;
  types::Chunk chunk;  ///< text empty
  std::string vector;  ///< pack_values' bytes; empty when the chunk has no vector
};

/// A chunk matching some of a query's terms: its length (tokens of all fields) and, per
/// matching term, its occurrences in symbol and parent, signature, doc, body (127 at most).
struct TermMatch {
  ChunkKey key;
  int length = 0;
  std::vector<std::pair<std::string, std::array<int, 4>>> terms;
  ChunkRow row;  ///< its fields and vector, sent by the same statement
};

/// What BM25 needs of the whole store for one model: chunks, tokens, and per term the
/// chunks holding it.
struct TermStatistics {
  std::int64_t chunks = 0;
  std::int64_t tokens = 0;
  std::vector<std::int64_t> document_frequency;  ///< per term asked, in order
  std::int64_t refs_chunks = 0;  ///< the chunks of the refs asked about (shared blobs counted again)
};

/// A file (ref, path) whose history holds some of a query's terms: its length in tokens and
/// each term's occurrences in it (per term asked, in order).
struct HistoryMatch {
  std::int64_t ref_id = 0;
  std::string path;
  int length = 0;
  std::vector<int> frequency;
};

/// The best files by their history, and the searched refs' histories as BM25's collection:
/// how many there are, their tokens, and per term asked how many hold it.
struct HistoryMatches {
  std::int64_t files = 0;
  std::int64_t tokens = 0;
  std::vector<std::int64_t> document_frequency;
  std::vector<HistoryMatch> best;
};

/// A chunk near the query's code.
struct CodeMatch {
  ChunkKey key;
  int distance = 0;
};

/// A ref whose snapshot holds a blob at a path.
struct Holder {
  std::string blob;
  std::int64_t ref_id = 0;
  std::string path;
  std::string language;
};

/// Where a narrowed lexical statement finds the chunks holding a set of terms: through the
/// terms' index in the whole store, then the refs' among them; or among the refs' chunks,
/// read by blob; or (the default) whichever reads fewer rows, by the store's document
/// frequencies against the refs' chunks.
enum class NarrowedFrom { terms_index, refs, cheaper };

class Reader {
public:
  /// Connects (Connection::open); the store's schema must be this kasava's (an older one is
  /// upgraded by the next publish, not by a reader, which may have no right to).
  static util::Result<std::unique_ptr<Reader>> open(const std::string& conninfo);
  ~Reader();
  Reader(const Reader&) = delete;
  Reader& operator=(const Reader&) = delete;

  const std::string& where() const;

  /// Every published ref, by repository then most recent publish first.
  std::vector<RefInfo> refs();
  /// The model's id in the store; 0 when it has none.
  std::int16_t model_id(const std::string& model);
  /// The model's totals, each term's document frequency and the refs' chunks, in one statement.
  TermStatistics term_statistics(std::int16_t model, const std::vector<std::int64_t>& refs,
                                 const std::vector<std::string>& terms);
  /// Chunks of the refs' snapshots holding any of `terms` (stemmed, each once), at most
  /// `limit`, the best first by a BM25 of their fields with these weights (symbol and parent,
  /// signature, doc, body) and the statistics term_statistics gave for these refs and terms. When more
  /// than `narrowing_above` chunks may hold a term, the same best are found among the chunks
  /// holding most of the terms first (search.cpp says how).
  std::vector<TermMatch> match_terms(std::int16_t model, const std::vector<std::int64_t>& refs,
                                     const std::vector<std::string>& terms,
                                     const TermStatistics& statistics,
                                     const std::array<double, 4>& weights, int limit,
                                     std::int64_t narrowing_above = k_narrowing_above,
                                     NarrowedFrom narrowed_from = NarrowedFrom::cheaper);
  /// Under this many chunks holding any term, one statement over them all is cheaper than
  /// narrowing them first (whose candidates a later, wider statement may score again).
  static constexpr std::int64_t k_narrowing_above = 20000;
  /// The `limit` chunks of the refs' snapshots nearest to `code` (bytes as stored) by Hamming
  /// distance, nearest first; `language` non-empty: only files of that language. When the
  /// refs hold most of a partitioned store, among the codes of the partitions nearest `code`
  /// that hold `probe_share` of the codes (partitions.hpp); 1 or more reads every code.
  std::vector<CodeMatch> nearest_codes(std::int16_t model, const std::vector<std::int64_t>& refs,
                                       const std::string& code, int limit, const std::string& language,
                                       double probe_share = k_probe_share);
  /// The share of a partitioned store's codes a search across most of it reads, nearest
  /// partitions first (search.cpp gives the measurement).
  static constexpr double k_probe_share = 1.0 / 8;
  /// The chunks' fields and stored vectors (empty for a chunk without one), in one statement:
  /// a search needs both of most candidates.
  std::vector<ChunkRow> chunks(std::int16_t model, const std::vector<ChunkKey>& keys);
  /// Who holds these blobs among the refs, by blob, then ref id and path.
  std::vector<Holder> holders(const std::vector<std::int64_t>& refs, const std::vector<std::string>& blobs);
  /// The blobs' texts, decompressed (blob → text); a damaged one is an error naming it.
  std::vector<std::pair<std::string, std::string>> texts(const std::vector<std::string>& blobs);
  /// The text of the file at `path` in the ref's snapshot, decompressed; nothing when the
  /// snapshot has no such file (or holds it without its text).
  std::optional<std::string> file_text(std::int64_t ref, const std::string& path);
  /// The files of `refs` whose history holds any of `terms` (stemmed; a repeated term
  /// counts again, as a repeated FTS5 phrase does), at most `limit`, the best first by BM25
  /// over their histories, with what BM25 needs of the refs' histories. `files`: how many
  /// histories the refs have (RefInfo::history_files); under k_history_by_ref_below they
  /// are read by ref, not through the terms' index.
  HistoryMatches match_history(const std::vector<std::int64_t>& refs, std::int64_t files,
                               const std::vector<std::string>& terms, int limit);
  /// Below this many histories, reading the refs' rows costs less than finding the terms'
  /// rows in the whole store (one repository's 100 of 20,000: 0.5 ms against 4.9).
  static constexpr std::int64_t k_history_by_ref_below = 5000;

  /// True when the reader can be used again as a fresh one (Connection::idle).
  bool idle() const;
  /// True when the server still answers on this connection (one round trip).
  bool answers();

private:
  explicit Reader(std::unique_ptr<Connection> connection);
  /// The model's partitions when the store has them in `generation`, read again when not.
  const CodePartitions* partitions(std::int16_t model, std::int64_t generation);

  std::unique_ptr<Connection> m_connection;
  std::unique_ptr<CodePartitions> m_partitions;  // of m_partitions_model, as last read
  std::int16_t m_partitions_model = 0;
};

/// Open readers kept for reuse by a long-running process (`kasava serve --store`): a request
/// takes one and gives it back when done, so that it pays neither a connection nor the schema
/// check. A reader is checked (one round trip) before it is handed out again, so a connection
/// the server ended meanwhile (a restart, an idle timeout) is replaced, not an error; one given
/// back in a transaction or broken is closed. Thread-safe.
class ReaderPool {
public:
  /// `keep`: at most this many idle readers are kept; more may be open while in use.
  ReaderPool(std::string conninfo, std::size_t keep);
  ReaderPool(const ReaderPool&) = delete;
  ReaderPool& operator=(const ReaderPool&) = delete;

  /// A reader for one use; given back when the lease is destroyed.
  class Lease {
  public:
    Lease(ReaderPool& pool, std::unique_ptr<Reader> reader) : m_pool(&pool), m_reader(std::move(reader)) {}
    Lease(Lease&& other) noexcept = default;
    Lease& operator=(Lease&&) = delete;
    Lease(const Lease&) = delete;
    Lease& operator=(const Lease&) = delete;
    ~Lease();
    Reader& operator*() const { return *m_reader; }
    Reader* operator->() const { return m_reader.get(); }

  private:
    ReaderPool* m_pool;
    std::unique_ptr<Reader> m_reader;
  };

  /// An idle reader that still answers, else a new one (Reader::open's error when that fails).
  util::Result<Lease> acquire();
  /// An idle reader that still answers, else none: never connects.
  std::optional<Lease> acquire_idle();

private:
  void give_back(std::unique_ptr<Reader> reader);

  std::string m_conninfo;
  std::size_t m_keep;
  std::mutex m_mutex;
  std::vector<std::unique_ptr<Reader>> m_idle;
};

} // namespace kasava::pgstore
