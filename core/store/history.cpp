// The history field (history.hpp): tables, writes, and BM25 over each file's history.
//
// Layout. `history_paths` has one row per path: the text of the newest commits that touched
// it, one line per commit, newest first, at most k_history_per_path lines, and the count of
// lines. `history_fts` is an FTS5 table whose content is `history_paths` (external content:
// the text is stored once), tokenized like the chunks (`porter kasava`), one row per path by
// the same rowid. One row per path rather than per commit: the ranking signal is BM25 of a
// file's history as one document (the prototype's, MRR 0.44), which a row per path gives
// directly, and a row per commit would repeat a commit touching n files n times in the
// index. meta `history_tip` is the commit the history was read from (the next run reads only
// the commits new since it) and `history_commits` how many were read into it.
//
// Paths with no row in `files` (deleted, or never indexed) lose their history row at each
// update: it ranks no file, and would otherwise grow with every file the project ever had.
#include "core/store/history.hpp"

#include <algorithm>
#include <charconv>
#include <map>
#include <unordered_map>

#include "core/store/sqlite.hpp"
#include "core/store/store.hpp"

namespace kasava::store {
namespace {

constexpr const char* k_insert_row_sql =
    "INSERT INTO history_paths(path, commits, text) VALUES(?1, ?2, ?3)";
constexpr const char* k_update_row_sql =
    "UPDATE history_paths SET commits = ?2, text = ?3 WHERE id = ?1";
constexpr const char* k_insert_fts_sql = "INSERT INTO history_fts(rowid, text) VALUES(?1, ?2)";
constexpr const char* k_delete_fts_sql =
    "INSERT INTO history_fts(history_fts, rowid, text) VALUES('delete', ?1, ?2)";
// bm25() is negative, more negative = better.
constexpr const char* k_search_sql =
    "SELECT p.path, bm25(history_fts) AS score FROM history_fts"
    " JOIN history_paths p ON p.id = history_fts.rowid"
    " WHERE history_fts MATCH ?1 ORDER BY score LIMIT ?2";

// The first `limit` lines of `text`.
std::string first_lines(const std::string& text, std::size_t limit, std::size_t& kept) {
  kept = 0;
  std::size_t end = 0;
  while (kept < limit && end < text.size()) {
    const std::size_t newline = text.find('\n', end);
    end = newline == std::string::npos ? text.size() : newline + 1;
    ++kept;
  }
  std::string out = text.substr(0, end);
  if (!out.empty() && out.back() == '\n') out.pop_back();
  return out;
}

struct Row {
  std::int64_t id = 0;
  std::string text;
};

}  // namespace

void create_history_tables(sqlite::Database& db) {
  db.exec(
      "CREATE TABLE IF NOT EXISTS history_paths(id INTEGER PRIMARY KEY, path TEXT UNIQUE NOT "
      "NULL, commits INTEGER NOT NULL, text TEXT NOT NULL);"
      "CREATE VIRTUAL TABLE IF NOT EXISTS history_fts USING fts5(text, content='history_paths',"
      " content_rowid='id', tokenize='porter kasava')");
}

void Store::put_history(const std::vector<HistoryCommitRecord>& newest_first, bool replace,
                        std::string_view tip, std::int64_t commits_read) {
  sqlite::Database& db = database();
  try {
    if (replace) {
      db.exec("INSERT INTO history_fts(history_fts) VALUES('delete-all'); DELETE FROM history_paths");
    }
    // Per path, the new lines, newest first.
    std::map<std::string, std::vector<const std::string*>> added;
    for (const HistoryCommitRecord& commit : newest_first) {
      if (commit.text.empty()) continue;
      for (const std::string& path : commit.paths) {
        auto& lines = added[path];
        if (lines.size() < k_history_per_path) lines.push_back(&commit.text);
      }
    }
    for (const auto& [path, lines] : added) {
      std::string text;
      for (const std::string* line : lines) {
        if (!text.empty()) text += '\n';
        text += *line;
      }
      Row old;
      {
        auto query = db.query("SELECT id, text FROM history_paths WHERE path = ?1");
        query.bind(1, path);
        if (query.step()) old = Row{query.column_int64(0), std::string(query.column_text(1))};
      }
      std::size_t count = lines.size();
      if (old.id != 0 && count < k_history_per_path) {
        std::size_t kept = 0;
        const std::string rest = first_lines(old.text, k_history_per_path - count, kept);
        if (!rest.empty()) {
          text += '\n';
          text += rest;
          count += kept;
        }
      }
      std::int64_t id = old.id;
      if (id != 0) {
        db.query(k_delete_fts_sql).bind(1, id).bind(2, old.text).run();
        db.query(k_update_row_sql).bind(1, id).bind(2, static_cast<std::int64_t>(count)).bind(3, text).run();
      } else {
        db.query(k_insert_row_sql).bind(1, path).bind(2, static_cast<std::int64_t>(count)).bind(3, text).run();
        id = db.last_insert_id();
      }
      db.query(k_insert_fts_sql).bind(1, id).bind(2, text).run();
    }
    // Rows of paths the index has no file for (see the top of the file).
    std::vector<Row> gone;
    {
      auto query = db.query(
          "SELECT h.id, h.text FROM history_paths h WHERE NOT EXISTS"
          " (SELECT 1 FROM files f WHERE f.path = h.path)");
      while (query.step()) gone.push_back(Row{query.column_int64(0), std::string(query.column_text(1))});
    }
    for (const Row& row : gone) {
      db.query(k_delete_fts_sql).bind(1, row.id).bind(2, row.text).run();
      db.query("DELETE FROM history_paths WHERE id = ?1").bind(1, row.id).run();
    }
  } catch (const sqlite::Error& error) {
    throw util::Failure("writing history to index '" + path() + "': " + error.what());
  }
  const std::int64_t total = commits_read + (replace ? 0 : history_extent().commits);
  set_meta("history_tip", tip);
  set_meta("history_commits", std::to_string(total));
}

HistoryExtent Store::history_extent() const {
  HistoryExtent extent;
  extent.tip = meta("history_tip").value_or("");
  if (const auto commits = meta("history_commits")) {
    // A damaged value counts as none rather than an error.
    const auto [end, error] =
        std::from_chars(commits->data(), commits->data() + commits->size(), extent.commits);
    if (error != std::errc() || end != commits->data() + commits->size() || extent.commits < 0) {
      extent.commits = 0;
    }
  }
  sqlite::Database& db = database();
  try {
    if (db.has_table("history_paths")) {
      auto query = db.query("SELECT count(*) FROM history_paths");
      if (query.step()) extent.paths = query.column_int64(0);
    }
  } catch (const sqlite::Error& error) {
    throw util::Failure("reading index '" + path() + "': " + error.what());
  }
  return extent;
}

std::vector<std::pair<std::string, std::string>> Store::history_texts() const {
  std::vector<std::pair<std::string, std::string>> texts;
  sqlite::Database& db = database();
  try {
    if (!db.has_table("history_paths")) return texts;
    auto query = db.query("SELECT path, text FROM history_paths ORDER BY path");
    while (query.step()) texts.emplace_back(std::string(query.column_text(0)), std::string(query.column_text(1)));
  } catch (const sqlite::Error& error) {
    throw util::Failure("reading index '" + path() + "': " + error.what());
  }
  return texts;
}

util::Result<std::vector<HistoryHit>> Store::history_search(std::string_view match_expression,
                                                            int limit) const {
  std::vector<HistoryHit> hits;
  if (limit <= 0 || match_expression.find_first_not_of(" \t\r\n") == std::string_view::npos) {
    return hits;
  }
  sqlite::Database& db = database();
  try {
    if (!db.has_table("history_fts")) return hits;  // an index made before the history field
    auto query = db.query(k_search_sql);
    query.bind(1, match_expression).bind(2, static_cast<std::int64_t>(limit));
    while (query.step()) {
      hits.push_back(HistoryHit{std::string(query.column_text(0)), -query.column_double(1)});
    }
  } catch (const sqlite::Error& error) {
    return util::Error{"searching the history of index '" + path() + "' for '" +
                       std::string(match_expression) + "': " + error.what()};
  }
  return hits;
}

}  // namespace kasava::store
