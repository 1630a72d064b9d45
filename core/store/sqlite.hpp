// RAII handles for a SQLite connection and its prepared statements. Internal to core/store:
// the only header besides tokenizer.cpp's that includes <sqlite3.h>.
#pragma once

#include <sqlite3.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <unordered_map>

namespace kasava::store::sqlite {

/// A failed SQLite call: the library's own message ("file is not a database") and result code.
/// Store methods catch it and add context (which index, doing what).
class Error : public std::runtime_error {
public:
  Error(int code, const std::string& message) : std::runtime_error(message), m_code(code) {}
  int code() const { return m_code; }

private:
  int m_code;
};

/// Owns one prepared statement.
class Statement {
public:
  Statement(sqlite3* db, std::string_view sql);
  ~Statement() { sqlite3_finalize(m_statement); }
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;

  sqlite3_stmt* get() const { return m_statement; }

private:
  sqlite3_stmt* m_statement = nullptr;
};

/// One use of a (cached) statement: bind, step, read columns. Resets the statement and clears
/// its bindings when it goes out of scope, so a cached statement is always ready for the next
/// use — also after an exception — and never holds a read transaction open.
class Query {
public:
  Query(sqlite3* db, Statement& statement) : m_db(db), m_statement(statement.get()) {}
  ~Query() {
    sqlite3_reset(m_statement);
    sqlite3_clear_bindings(m_statement);
  }
  Query(const Query&) = delete;
  Query& operator=(const Query&) = delete;

  /// Parameters are 1-based. Text is copied (SQLITE_TRANSIENT), so temporaries are safe.
  Query& bind(int index, std::string_view text);
  Query& bind(int index, std::int64_t value);
  Query& bind(int index, double value);
  Query& bind_blob(int index, const void* data, std::size_t bytes);

  /// Advances to the next row: true when there is one, false when done; throws Error.
  bool step();
  /// Steps a statement that returns no rows.
  void run() {
    while (step()) {
    }
  }

  std::int64_t column_int64(int index) const { return sqlite3_column_int64(m_statement, index); }
  double column_double(int index) const { return sqlite3_column_double(m_statement, index); }
  /// Text of a column; "" for NULL. Valid until the next step.
  std::string_view column_text(int index) const;
  /// Bytes of a BLOB column (empty for NULL). Valid until the next step.
  std::span<const std::uint8_t> column_blob(int index) const;
  bool column_is_null(int index) const {
    return sqlite3_column_type(m_statement, index) == SQLITE_NULL;
  }
  bool column_is_blob(int index) const {
    return sqlite3_column_type(m_statement, index) == SQLITE_BLOB;
  }

private:
  sqlite3* m_db;
  sqlite3_stmt* m_statement;
};

/// Owns a connection and a cache of its prepared statements (the store reuses a handful of
/// statements thousands of times per second while indexing; preparing each time would cost
/// more than the insert).
class Database {
public:
  /// Opens path with sqlite3_open_v2 flags; throws Error with SQLite's message.
  Database(const std::string& path, int flags);
  ~Database();
  Database(const Database&) = delete;
  Database& operator=(const Database&) = delete;

  sqlite3* get() const { return m_db; }
  /// The rowid of the last successful INSERT on this connection.
  std::int64_t last_insert_id() const { return sqlite3_last_insert_rowid(m_db); }

  /// Runs one or more statements that return no rows.
  void exec(const char* sql);
  /// A use of the statement for sql, prepared on first use and kept until the connection closes.
  Query query(std::string_view sql);
  /// Throws Error for a failed result code, with the connection's current message.
  void check(int result_code) const;
  /// Whether the file has a table of that name (an older schema may lack one).
  bool has_table(std::string_view name);

private:
  // Lets the cache be searched with a string_view: no allocation per lookup.
  struct SqlHash {
    using is_transparent = void;
    std::size_t operator()(std::string_view sql) const {
      return std::hash<std::string_view>{}(sql);
    }
  };

  sqlite3* m_db = nullptr;
  std::unordered_map<std::string, std::unique_ptr<Statement>, SqlHash, std::equal_to<>>
      m_statements;
};

/// How a connection that only reads opens an existing file, so that it needs no write access
/// and leaves nothing behind (see open_reader).
enum class ReaderKind {
  shared,     ///< read-write (statements only read): it may recover, checkpoint and, when it
              ///< closes last, remove the -wal and -shm files, as a writer does
  read_only,  ///< read-only, through the -wal and -shm files a writer at work has made
  immutable,  ///< read-only from the file alone (URI parameter immutable=1): no lock, no -shm
};

/// Whether this process may write the file at `path` and the folder its -wal and -shm files
/// go to (beside the file a symbolic link leads to).
bool may_write_with_companions(const std::string& path);

/// What to pass to Database's constructor to read an existing file: `name` (the path, or a
/// URI) and `flags`.
struct ReaderOpening {
  std::string name;
  int flags = 0;
  ReaderKind kind = ReaderKind::shared;
};

/// How to open the existing database file `path` for reading. Where this process may write
/// the file and its folder: ReaderKind::shared. Elsewhere (another user's index, a read-only
/// folder or file system) it must not create files: read_only when both companion files exist
/// (a writer is at work, and its WAL holds commits the file does not), else immutable — the
/// file alone is the whole database then, since a WAL is removed only once copied into the
/// file. Throws Error when `path` is missing, or it or a companion file that exists is not a
/// regular file (a FIFO would block the open forever).
ReaderOpening reader_opening(const std::string& path);

/// Whether an error code says the file's content is damaged (SQLITE_CORRUPT: a truncated or
/// overwritten file).
inline bool is_corruption(int code) { return (code & 0xff) == SQLITE_CORRUPT; }

/// The FTS5 API of a connection (the documented way: SELECT fts5(?1) with a typed pointer
/// binding), for registering tokenizers and functions; nullptr with `error` set when this
/// SQLite has no FTS5 (or one too old for what we use).
fts5_api* fts5_api_of(sqlite3* db, std::string& error);

} // namespace kasava::store::sqlite
