// A connection to the shared PostgreSQL store through libpq, with errors fit for one line: they
// name the host and port and what to do, and never the password (whatever libpq said is
// scrubbed of it). Parameters go as text or binary values, never spliced into SQL. The only
// file of kasava that includes <libpq-fe.h>.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/util/result.hpp"

struct pg_result;  // libpq's PGresult, named here without including libpq

namespace kasava::pgstore {

/// What a connection adds to the caller's connection string when it sets neither.
inline constexpr int k_default_connect_timeout_seconds = 10;
inline constexpr int k_default_statement_timeout_ms = 120000;

/// A query parameter: text (PostgreSQL parses it as the parameter's type) or binary bytes
/// (for bytea), or NULL.
struct Param {
  std::string value;
  bool binary = false;
  bool null = false;
  static Param text(std::string v) { return Param{std::move(v), false, false}; }
  static Param bytes(std::string v) { return Param{std::move(v), true, false}; }
};

/// The rows of a query, every value as PostgreSQL's text output ("" for NULL).
struct Rows {
  std::vector<std::vector<std::string>> rows;
  std::size_t size() const { return rows.size(); }
  const std::string& at(std::size_t row, std::size_t column) const { return rows.at(row).at(column); }
};

/// A failed statement: the one-line message (password scrubbed) and PostgreSQL's SQLSTATE.
class QueryError : public util::Failure {
public:
  QueryError(const std::string& message, std::string sqlstate)
      : util::Failure(message), m_sqlstate(std::move(sqlstate)) {}
  const std::string& sqlstate() const { return m_sqlstate; }
  /// A deadlock or serialization failure: the transaction may simply be run again.
  bool retryable() const { return m_sqlstate == "40P01" || m_sqlstate == "40001"; }

private:
  std::string m_sqlstate;
};

class Connection {
public:
  /// Connects with a libpq URI (postgresql://…) or key=value string; libpq's environment
  /// (PGHOST, PGPORT, PGUSER, PGPASSWORD, PGSSLMODE, …) and ~/.pgpass fill what it leaves
  /// out. A connect_timeout of k_default_connect_timeout_seconds and a statement_timeout of
  /// k_default_statement_timeout_ms apply unless the string sets them (connect_timeout,
  /// options). Errors: one line naming host and port, what failed and what to do.
  static util::Result<std::unique_ptr<Connection>> open(const std::string& conninfo);
  ~Connection();
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  /// "host:port" of the server (a socket folder for a unix socket), for messages.
  const std::string& where() const { return m_where; }

  /// Runs one statement; throws QueryError (message prefixed with the server's place).
  Rows exec(std::string_view sql, const std::vector<Param>& params = {});
  /// Runs statements without parameters (several, separated by ';').
  void exec_script(std::string_view sql);

  /// `message` with every secret this connection knows (its password) replaced by "***".
  std::string scrub(std::string message) const;

  /// True when the connection can run another statement as a fresh one would: libpq still
  /// holds it open and no transaction is open or failed on it. (A server that ended the
  /// connection is only seen by the next statement.)
  bool idle() const;

private:
  friend class CopyIn;
  Connection() = default;
  // Throw the QueryError of a failed statement: what the server said (from `result`, cleared
  // here) else libpq, its SQLSTATE, and a note when the connection is gone.
  [[noreturn]] void fail(pg_result* result) const;
  [[noreturn]] void fail(const std::string& said, std::string sqlstate) const;
  struct Handle;
  std::unique_ptr<Handle> m_handle;
  std::string m_where;
  std::vector<std::string> m_secrets;
};

/// A transaction on a connection: begun when made, rolled back when destroyed without commit().
class Transaction {
public:
  explicit Transaction(Connection& connection);
  ~Transaction();
  Transaction(const Transaction&) = delete;
  Transaction& operator=(const Transaction&) = delete;
  void commit();

private:
  Connection& m_connection;
  bool m_open = true;
};

/// A `COPY … FROM STDIN (FORMAT binary)`: rows are built field by field in PostgreSQL's
/// binary forms (less text for the server to parse) and streamed to the server as the buffer
/// fills, so that it inserts while the caller makes the next rows. The fields must follow the statement's column list,
/// each in its column type's binary form. finish() ends it and throws QueryError when the
/// server refused a row; a CopyIn destroyed before finish() aborts the COPY (its transaction
/// then fails, as it should).
class CopyIn {
public:
  /// `sql`: COPY table(columns) FROM STDIN (FORMAT binary).
  CopyIn(Connection& connection, std::string_view sql);
  ~CopyIn();
  CopyIn(const CopyIn&) = delete;
  CopyIn& operator=(const CopyIn&) = delete;

  /// A value in its binary form as is: text (valid UTF-8, no NUL) and bytea are their bytes.
  CopyIn& value(std::string_view encoded);
  CopyIn& int16(std::int16_t number);
  CopyIn& int32(std::int32_t number);
  CopyIn& int64(std::int64_t number);
  CopyIn& null();
  void end_row();
  /// Sends what is left and ends the COPY; returns the rows the server copied.
  std::int64_t finish();

private:
  void begin_field(std::int32_t length);
  void flush();
  Connection& m_connection;
  std::string m_buffer;
  std::size_t m_row_start = std::string::npos;  ///< where the row's field count goes
  std::int16_t m_fields = 0;
  bool m_open = true;
};

/// Loads libpq and its libraries (~3 ms, mostly the dynamic linker's symbol lookups) if not
/// yet loaded: a command that will connect may start this early, on another thread, so that
/// it overlaps the command's own setup. Thread-safe; a missing libpq is reported by the
/// first Connection::open, not here.
void load_client_library();

/// The binary form of bit varying for these bytes (all their bits, first byte first).
std::string binary_bits(std::string_view bytes);

/// A PostgreSQL array literal of text elements, every element quoted ({"a","b\"c"}): what a
/// text[] parameter is sent as.
std::string text_array(const std::vector<std::string>& elements);

/// The bytes of a bytea value as PostgreSQL prints it in text ("\x0a1b…").
std::string decode_bytea(std::string_view text);
/// Lower-case hex of bytes, and back (nullopt when `hex` is not hex of whole bytes).
std::string to_hex(std::string_view bytes);
std::optional<std::string> from_hex(std::string_view hex);
/// A number as PostgreSQL prints it; 0 for "" (NULL) or anything else that is not one.
std::int64_t to_int(const std::string& text);

} // namespace kasava::pgstore
