// Kept document frequencies of common terms: see term_docs.hpp.
#include "core/store/term_docs.hpp"

#include "core/store/sqlite.hpp"

namespace kasava::store {
namespace {

constexpr const char* k_read_sql = "SELECT term FROM term_docs ORDER BY term";
constexpr const char* k_docs_sql = "SELECT docs FROM term_docs WHERE term = ?1";
constexpr const char* k_change_sql = "UPDATE term_docs SET docs = docs + ?2 WHERE term = ?1";
// FTS5's vocabulary of chunks_fts, one row per term with the rows holding it: a temporary
// table of this connection, made when first filled.
constexpr const char* k_vocabulary_sql =
    "CREATE VIRTUAL TABLE IF NOT EXISTS temp.kasava_term_vocabulary USING fts5vocab(main, chunks_fts, row)";
constexpr const char* k_count_sql = "SELECT term, doc FROM temp.kasava_term_vocabulary WHERE doc >= ?1";

} // namespace

TermDocs::TermDocs(sqlite::Database& db) : m_db(db) {
  m_tap.term = &TermDocs::on_term;
  m_tap.context = this;
}

void TermDocs::load() {
  m_index.clear();
  m_terms.clear();
  if (m_db.has_table("term_docs")) {
    auto query = m_db.query(k_read_sql);
    while (query.step()) m_terms.emplace_back(query.column_text(0));
  }
  for (std::size_t i = 0; i < m_terms.size(); ++i) m_index.emplace(m_terms[i], i);
  m_change.assign(m_terms.size(), 0);
  m_last_row.assign(m_terms.size(), 0);
  m_tap.active = false;
}

void TermDocs::begin_row(int sign) {
  ++m_row;  // starts at 1: a term whose m_last_row is 0 has not been counted in any row
  m_sign = sign;
  m_tap.active = !m_terms.empty();
}

void TermDocs::end_row() { m_tap.active = false; }

void TermDocs::on_term(void* context, const char* text, int size) {
  auto& self = *static_cast<TermDocs*>(context);
  const auto found = self.m_index.find(std::string_view(text, static_cast<std::size_t>(size)));
  if (found == self.m_index.end()) return;
  const std::size_t i = found->second;
  if (self.m_last_row[i] == self.m_row) return;  // once per row, whatever the column
  self.m_last_row[i] = self.m_row;
  self.m_change[i] += self.m_sign;
}

void TermDocs::flush() {
  for (std::size_t i = 0; i < m_terms.size(); ++i) {
    if (m_change[i] == 0) continue;
    m_db.query(k_change_sql).bind(1, m_terms[i]).bind(2, m_change[i]).run();
    m_change[i] = 0;
  }
}

void TermDocs::discard() { m_change.assign(m_terms.size(), 0); }

std::vector<std::pair<std::string, std::int64_t>> TermDocs::count(sqlite::Database& db, std::int64_t min_docs) {
  db.exec(k_vocabulary_sql);
  std::vector<std::pair<std::string, std::int64_t>> counts;
  auto query = db.query(k_count_sql);
  query.bind(1, min_docs);
  while (query.step()) counts.emplace_back(query.column_text(0), query.column_int64(1));
  return counts;
}

void TermDocs::fill(const std::vector<std::pair<std::string, std::int64_t>>& counts, std::int64_t largest_id) {
  m_db.exec(k_term_docs_sql);
  m_db.exec("DELETE FROM term_docs");
  for (const auto& [term, docs] : counts) {
    m_db.query("INSERT INTO term_docs(term, docs) VALUES(?1, ?2)").bind(1, term).bind(2, docs).run();
  }
  m_db.query("INSERT OR REPLACE INTO meta(key, value) VALUES('term_docs_chunks', ?1)")
      .bind(1, std::to_string(largest_id))
      .run();
  load();
}

void TermDocs::clear() {
  if (m_db.has_table("term_docs")) m_db.exec("DELETE FROM term_docs");
  m_db.exec("DELETE FROM meta WHERE key = 'term_docs_chunks'");
  load();
}

std::optional<std::int64_t> TermDocs::docs(sqlite::Database& db, std::string_view term) {
  auto query = db.query(k_docs_sql);
  query.bind(1, term);
  if (!query.step()) return std::nullopt;
  return query.column_int64(0);
}

} // namespace kasava::store
