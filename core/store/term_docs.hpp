// The document frequencies of a large index's common terms, kept by the writer, so that a
// lexical search does not walk each term's rows to count them.
//
// Why: BM25 needs each query term's document frequency, and FTS5 keeps none; kasava_bm25_stats
// counts them with a walk of every row of each term (xQueryPhrase). In a bounded search of a
// large index that walk is what is left of the common terms' cost: over 20 questions on the
// Linux kernel's 1.44M chunks, 23% of an ask's instructions (up to 60% for one question).
//
// What: `term_docs(term, docs)` holds the terms (index terms: Porter stems) that at least
// k_term_docs_min_share of the chunks held when the table was filled (update_term_docs, at
// the end of an index run, from FTS5's own vocabulary), each with the exact number of rows
// of chunks_fts holding it. The writer keeps those numbers exact: every row it adds or
// deletes is bracketed by begin_row/end_row, and the connection's TermTap shows it each term
// FTS5 makes of the row, so each held term is counted once per row, +1 or -1. The changes are
// written at the transaction's commit and dropped at its rollback, as chunk lengths are.
// Terms not in the table are rarer than the share when it was filled (or became common
// since): a search counts those by walking them, which costs little. A term in the table is
// never wrong, so results are the same to the bit with and without it.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "core/store/tokenizer.hpp"

namespace kasava::store {

namespace sqlite {
class Database;
}

/// The table (schema 9).
inline constexpr const char* k_term_docs_sql =
    "CREATE TABLE IF NOT EXISTS term_docs(term TEXT PRIMARY KEY, docs INTEGER NOT NULL) WITHOUT ROWID";

/// A term is kept when at least this share of the chunks (by the largest id) held it at the
/// last fill (on the kernel, 1,440 rows: 4,058 terms of 4.1 million, ~100 KB). Rarer terms cost a search less
/// than a millisecond each to count.
inline constexpr double k_term_docs_min_share = 0.001;

/// The kept counts of one writing connection.
class TermDocs {
public:
  explicit TermDocs(sqlite::Database& db);
  TermDocs(const TermDocs&) = delete;
  TermDocs& operator=(const TermDocs&) = delete;

  /// Reads the table's terms (after opening, and after fill); none when it has no table.
  void load();
  /// What to register the connection's tokenizer with (register_tokenizer).
  TermTap* tap() { return &m_tap; }

  /// Brackets the FTS5 write of one row: `sign` +1 for an insert, -1 for a delete.
  void begin_row(int sign);
  void end_row();
  /// Writes the counts changed since the last flush (inside the caller's transaction).
  void flush();
  /// Drops them (the transaction was rolled back).
  void discard();

  /// The terms `min_docs` rows or more hold, with their counts, from FTS5's vocabulary: a walk
  /// of every term's rows, which reads only (another connection may do it).
  static std::vector<std::pair<std::string, std::int64_t>> count(sqlite::Database& db, std::int64_t min_docs);
  /// Refills the table with `counts` (count's, of the index as it is), inside the caller's
  /// transaction, and records `largest_id`, the index's size then.
  void fill(const std::vector<std::pair<std::string, std::int64_t>>& counts, std::int64_t largest_id);
  /// Empties it (an index too small to need it).
  void clear();
  /// How many terms it holds.
  std::size_t size() const { return m_terms.size(); }

  /// The kept count of a term; nullopt when the table does not hold it (or is missing).
  static std::optional<std::int64_t> docs(sqlite::Database& db, std::string_view term);

private:
  static void on_term(void* context, const char* text, int size);

  struct Hash {
    using is_transparent = void;
    std::size_t operator()(std::string_view text) const { return std::hash<std::string_view>{}(text); }
  };

  sqlite::Database& m_db;
  TermTap m_tap;
  std::unordered_map<std::string, std::size_t, Hash, std::equal_to<>> m_index;
  std::vector<std::string> m_terms;
  std::vector<std::int64_t> m_change;   // per term, since the last flush
  std::vector<std::uint64_t> m_last_row;  // per term, the row it was last counted in
  std::uint64_t m_row = 0;
  int m_sign = 0;
};

} // namespace kasava::store
