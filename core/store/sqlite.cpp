// RAII handles for SQLite: see sqlite.hpp.
#include "core/store/sqlite.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>

namespace kasava::store::sqlite {

Statement::Statement(sqlite3* db, std::string_view sql) {
  const int result = sqlite3_prepare_v3(db, sql.data(), static_cast<int>(sql.size()),
                                        SQLITE_PREPARE_PERSISTENT, &m_statement, nullptr);
  if (result != SQLITE_OK) {
    sqlite3_finalize(m_statement);
    throw Error(result, sqlite3_errmsg(db));
  }
}

Query& Query::bind(int index, std::string_view text) {
  const int result = sqlite3_bind_text64(m_statement, index, text.data(), text.size(),
                                         SQLITE_TRANSIENT, SQLITE_UTF8);
  if (result != SQLITE_OK) throw Error(result, sqlite3_errmsg(m_db));
  return *this;
}

Query& Query::bind(int index, std::int64_t value) {
  const int result = sqlite3_bind_int64(m_statement, index, value);
  if (result != SQLITE_OK) throw Error(result, sqlite3_errmsg(m_db));
  return *this;
}

Query& Query::bind(int index, double value) {
  const int result = sqlite3_bind_double(m_statement, index, value);
  if (result != SQLITE_OK) throw Error(result, sqlite3_errmsg(m_db));
  return *this;
}

Query& Query::bind_blob(int index, const void* data, std::size_t bytes) {
  // A zero-length blob, not NULL, for an empty vector: the column is NOT NULL.
  const int result = sqlite3_bind_blob64(m_statement, index, bytes == 0 ? "" : data, bytes,
                                         SQLITE_TRANSIENT);
  if (result != SQLITE_OK) throw Error(result, sqlite3_errmsg(m_db));
  return *this;
}

bool Query::step() {
  const int result = sqlite3_step(m_statement);
  if (result == SQLITE_ROW) return true;
  if (result == SQLITE_DONE) return false;
  throw Error(result, sqlite3_errmsg(m_db));
}

std::string_view Query::column_text(int index) const {
  const auto* text = reinterpret_cast<const char*>(sqlite3_column_text(m_statement, index));
  if (text == nullptr) return {};
  return {text, static_cast<std::size_t>(sqlite3_column_bytes(m_statement, index))};
}

std::span<const std::uint8_t> Query::column_blob(int index) const {
  const auto* data = static_cast<const std::uint8_t*>(sqlite3_column_blob(m_statement, index));
  if (data == nullptr) return {};
  return {data, static_cast<std::size_t>(sqlite3_column_bytes(m_statement, index))};
}

Database::Database(const std::string& path, int flags) {
  const int result = sqlite3_open_v2(path.c_str(), &m_db, flags, nullptr);
  if (result != SQLITE_OK) {
    // A handle is returned even on failure (unless out of memory) and carries the message.
    const std::string message = m_db != nullptr ? sqlite3_errmsg(m_db) : sqlite3_errstr(result);
    sqlite3_close_v2(m_db);
    m_db = nullptr;
    throw Error(result, message);
  }
}

Database::~Database() {
  m_statements.clear();  // statements must be finalized before the connection can close
  sqlite3_close_v2(m_db);
}

void Database::exec(const char* sql) {
  char* message = nullptr;
  const int result = sqlite3_exec(m_db, sql, nullptr, nullptr, &message);
  if (result != SQLITE_OK) {
    const std::string text = message != nullptr ? message : sqlite3_errstr(result);
    sqlite3_free(message);
    throw Error(result, text);
  }
}

Query Database::query(std::string_view sql) {
  auto found = m_statements.find(sql);
  if (found == m_statements.end()) {
    found = m_statements.emplace(std::string(sql), std::make_unique<Statement>(m_db, sql)).first;
  }
  return Query(m_db, *found->second);
}

void Database::check(int result_code) const {
  if (result_code != SQLITE_OK) throw Error(result_code, sqlite3_errmsg(m_db));
}

bool Database::has_table(std::string_view name) {
  auto found = query("SELECT 1 FROM sqlite_schema WHERE type = 'table' AND name = ?1");
  found.bind(1, name);
  return found.step();
}

namespace {

// "file:" URI of a path, for URI parameters: characters that end a path in a URI escaped.
std::string file_uri(const std::string& path) {
  std::string uri = "file:";
  for (const char c : path) {
    if (c == '%' || c == '?' || c == '#') {
      char escaped[4];
      std::snprintf(escaped, sizeof escaped, "%%%02X", static_cast<unsigned char>(c));
      uri += escaped;
    } else {
      uri += c;
    }
  }
  return uri;
}

// Whether `path` exists (as a regular file, else Error: its name and what it is).
bool regular_file_exists(const std::string& path, const std::string& name) {
  struct stat status {};
  if (::stat(path.c_str(), &status) != 0) {
    if (errno == ENOENT) return false;
    throw Error(SQLITE_CANTOPEN, "'" + name + "': " + std::strerror(errno));
  }
  if (!S_ISREG(status.st_mode)) {
    throw Error(SQLITE_CANTOPEN, "'" + name + "' is not a regular file");
  }
  return true;
}

bool may_write(const std::string& path) {
  return ::faccessat(AT_FDCWD, path.c_str(), W_OK, AT_EACCESS) == 0;
}

} // namespace

bool may_write_with_companions(const std::string& path) {
  namespace fs = std::filesystem;
  // SQLite puts the companion files beside the file a symbolic link leads to.
  std::error_code error;
  const fs::path resolved = fs::canonical(path, error);
  fs::path folder = (error ? fs::path(path) : resolved).parent_path();
  if (folder.empty()) folder = fs::path(".");
  return may_write(error ? path : resolved.string()) && may_write(folder.string());
}

ReaderOpening reader_opening(const std::string& path) {
  namespace fs = std::filesystem;
  if (!regular_file_exists(path, path)) throw Error(SQLITE_CANTOPEN, "no such file");
  std::error_code error;
  const fs::path resolved = fs::canonical(path, error);
  const std::string real = error ? path : resolved.string();
  const bool wal = regular_file_exists(real + "-wal", path + "-wal");
  const bool shm = regular_file_exists(real + "-shm", path + "-shm");
  if (may_write_with_companions(path)) {
    return {path, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, ReaderKind::shared};
  }
  if (wal && shm) return {path, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX, ReaderKind::read_only};
  return {file_uri(path) + "?immutable=1",
          SQLITE_OPEN_READONLY | SQLITE_OPEN_URI | SQLITE_OPEN_NOMUTEX, ReaderKind::immutable};
}

fts5_api* fts5_api_of(sqlite3* db, std::string& error) {
  fts5_api* api = nullptr;
  sqlite3_stmt* statement = nullptr;
  int result = sqlite3_prepare_v2(db, "SELECT fts5(?1)", -1, &statement, nullptr);
  if (result == SQLITE_OK) {
    sqlite3_bind_pointer(statement, 1, static_cast<void*>(&api), "fts5_api_ptr", nullptr);
    result = sqlite3_step(statement);
  }
  const bool failed = result != SQLITE_OK && result != SQLITE_ROW;
  if (failed) error = std::string("full-text search (fts5) is unavailable: ") + sqlite3_errmsg(db);
  sqlite3_finalize(statement);
  if (failed) return nullptr;
  if (api == nullptr || api->iVersion < 2) {
    error = "full-text search (fts5) is unavailable in this sqlite library";
    return nullptr;
  }
  return api;
}

} // namespace kasava::store::sqlite
