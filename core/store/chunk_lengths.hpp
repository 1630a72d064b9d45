// Each chunk's length in full-text tokens, kept beside FTS5's index so that ranking a lexical
// match does not cost a b-tree lookup per matching row, and the ranking function that uses it.
//
// Why: FTS5's bm25() asks for every matching row's length (xColumnSize), which for our
// contentless table is one lookup in `chunks_fts_docsize` per row — a nested SQL statement
// stepped and reset each time. A query with a common word matches tens of thousands of chunks;
// measured on the 110k-chunk synthetic index, those lookups were about half of a lexical ask.
// `chunk_sizes` holds the same numbers in blocks of k_lengths_per_block chunk ids (two bytes
// each, little-endian; 0 = not known), so a query reads a few 2 KiB rows instead.
//
// "kasava_bm25" is bm25() computed the same way, term for term (same IDF, same k1 and b, same
// column weights), with the row's length from those blocks; a chunk whose length is not known
// (written by a kasava before the table, or longer than a block entry holds) falls back to
// FTS5's own lookup. So its scores are bm25()'s, which a unit test checks.
//
// The writer counts a chunk's tokens while FTS5 indexes it: the tokenizer instance of a
// connection adds every token it emits to a TokenCount (see tokenizer.hpp), and the
// difference across one chunk's INSERT is the length FTS5 stores for it. Blocks are changed
// in memory during a transaction and written at its commit. A length left behind by a deleted
// chunk is never read (only rows that match are ranked) and is overwritten if its id is used
// again.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

struct sqlite3;

namespace kasava::store {

namespace sqlite {
class Database;
}

/// Chunk ids per `chunk_sizes` row.
inline constexpr std::int64_t k_lengths_per_block = 1024;

/// The table; an index of schema 4 or older gets it, filled from FTS5's docsize table, when
/// first opened for writing.
inline constexpr const char* k_chunk_sizes_sql =
    "CREATE TABLE IF NOT EXISTS chunk_sizes(block INTEGER PRIMARY KEY, sizes BLOB NOT NULL)";

/// The name of the ranking function: `kasava_bm25(chunks_fts, w_symbol, w_path, w_doc, w_body)`.
inline constexpr const char* k_rank_function_name = "kasava_bm25";

/// The chunk lengths of one connection: read (cached per search) and written (per transaction).
class ChunkLengths {
public:
  explicit ChunkLengths(sqlite::Database& db) : m_db(db) {}

  /// The length of a chunk in tokens, all columns together; 0 when not known (no table, no
  /// entry, or a failed read: the caller asks FTS5 instead). Never throws.
  std::uint32_t tokens(std::int64_t chunk_id) noexcept;
  /// Forgets the blocks read so far: call before each search, another process may have
  /// written since.
  void forget_read() {
    m_read.clear();
    m_last_read = nullptr;
    m_has_table.reset();
  }

  /// Records a chunk's length, to be written by flush(). Lengths over 65,535 are recorded as
  /// unknown. Throws sqlite::Error when its block cannot be read.
  void record(std::int64_t chunk_id, std::uint64_t tokens);
  /// Writes the blocks recorded since the last flush (inside the caller's transaction).
  void flush();
  /// Drops what was recorded and not yet written (the transaction was rolled back).
  void discard() { m_written.clear(); }

private:
  using Block = std::vector<std::uint16_t>;
  /// The stored block, or an empty one when it has no row.
  Block load(std::int64_t block);
  /// Reads `block` and the few after it into m_read; returns `block`'s (empty when it has no row).
  const Block& read_from(std::int64_t block);

  sqlite::Database& m_db;
  std::optional<bool> m_has_table;
  std::unordered_map<std::int64_t, Block> m_read;  // node-based: pointers stay valid
  std::int64_t m_last_block = 0;
  const Block* m_last_read = nullptr;
  std::map<std::int64_t, Block> m_written;
};

/// The best `limit` of the (score, rowid) pairs offered, lower score first and ties by rowid:
/// what `ORDER BY score, rowid LIMIT limit` keeps, without SQLite's sorter.
class BestScores {
public:
  explicit BestScores(int limit);
  void offer(double score, std::int64_t rowid);
  /// The pairs kept, ascending.
  std::vector<std::pair<double, std::int64_t>> take();

private:
  std::size_t m_capacity;
  std::vector<std::pair<double, std::int64_t>> m_heap;  // a max-heap: its top is the one to beat
};

/// What a bounded lexical search (Store::lexical_search) knows of the terms of an OR query:
/// filled by `kasava_bm25_stats(chunks_fts)` on a query over the terms alone (each term one
/// phrase, in order), then read by `kasava_bm25_terms(chunks_fts, w_symbol, w_path, w_doc,
/// w_body)`, which scores a row of another query whose phrases from `first_phrase` on are
/// those terms in the same order — to the bit what kasava_bm25 gives the row for the terms
/// alone (same IDFs, same sums in the same order) — and offers the score (negated, as
/// kasava_bm25's) to `best`; it returns 0, so that the statement calls it in its WHERE clause
/// and hands no row back.
struct TermStats {
  /// Per term, set before the statistics query: its kept document frequency (term_docs.hpp),
  /// which stands for a walk of its rows, or -1.
  std::vector<std::int64_t> kept_docs;
  std::vector<double> idf;            ///< per term
  std::vector<std::int64_t> matching; ///< rows holding each term
  std::int64_t rows = 0;
  double average_length = 1.0;
  int first_phrase = 0;
  bool ready = false;                 ///< kasava_bm25_stats ran
  std::optional<BestScores> best;     ///< set before each kasava_bm25_terms query
  std::vector<double> frequency;      ///< per term, for the current row (reused)
};

/// The rows of a query whose expression is its phrases OR-ed, as
/// `kasava_bm25_rows(chunks_fts, w_symbol, w_path, w_doc, w_body)` collects them: each row's
/// weighted frequency of every phrase and its length, and how many rows hold each phrase.
/// Such a query visits every row that holds a phrase, so those counts are the document
/// frequencies kasava_bm25 finds with a second walk of each phrase's rows (xQueryPhrase):
/// best_collected scores the rows afterwards, to the bit as kasava_bm25 would, without it.
struct CollectedRows {
  int phrases = 0;
  std::int64_t rows = 0;              ///< in the table
  double average_length = 1.0;
  bool started = false;               ///< the first row set the three above
  std::vector<std::int64_t> matching; ///< rows holding each phrase
  std::vector<std::int64_t> ids;
  std::vector<double> lengths;        ///< per row
  std::vector<double> frequency;      ///< `phrases` per row

  /// Ready for the next query. The row buffers keep their memory while it is at most
  /// k_kept_bytes, so a served index's pooled connections reuse it; beyond, it is freed (one
  /// query of a word most chunks hold collects tens of megabytes on a large index).
  void reset();
  static constexpr std::size_t k_kept_bytes = 8u << 20;
};

/// The best `limit` collected rows by kasava_bm25's score (negative, lower = better) as
/// (score, rowid), ascending: what `ORDER BY kasava_bm25(…) LIMIT limit` gives, ties by rowid.
std::vector<std::pair<double, std::int64_t>> best_collected(const CollectedRows& rows, int limit);

/// Registers kasava_bm25 (and the two functions of TermStats, and kasava_bm25_rows) on one
/// connection; `lengths`, `terms` and `collected` (when given: their functions fail without)
/// must outlive it. Returns "" on success, else the reason.
std::string register_ranking(sqlite3* db, ChunkLengths* lengths, TermStats* terms = nullptr,
                             CollectedRows* collected = nullptr);

/// A `chunk_sizes` row's entries (k_lengths_per_block of them; missing bytes read as 0).
std::vector<std::uint16_t> decode_lengths(std::span<const std::uint8_t> bytes);

/// The sum of the varints of an FTS5 docsize `sz` value (a row's tokens in all columns), or
/// nullopt when it is malformed; for checking chunk_sizes against FTS5 (kasava verify).
std::optional<std::uint64_t> docsize_total(const std::uint8_t* data, std::size_t size);

} // namespace kasava::store
