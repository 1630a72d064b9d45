// libpq underneath pgstore::Connection (see connection.hpp): connecting with defaults the
// caller's string may override, messages made into one scrubbed line, statements with
// parameters.
#include "core/pgstore/connection.hpp"

#include <libpq-fe.h>

#include <array>
#include <cstdlib>
#include <cstring>
#include <type_traits>

#include "core/util/shared_library.hpp"
#include "core/util/strings.hpp"

namespace kasava::pgstore {

namespace {

// The libpq functions kasava calls, resolved from the shared library on first use: libpq
// brings TLS, Kerberos and LDAP, whose loading would cost every process ~7 ms at start (see
// bench/README.md, "Process start"), while only the shared store uses it.
struct PqApi {
  decltype(&::PQclear) clear = nullptr;
  decltype(&::PQcmdTuples) cmd_tuples = nullptr;
  decltype(&::PQconnectdbParams) connectdb_params = nullptr;
  decltype(&::PQconninfoFree) conninfo_free = nullptr;
  decltype(&::PQconninfoParse) conninfo_parse = nullptr;
  decltype(&::PQerrorMessage) error_message = nullptr;
  decltype(&::PQexec) exec = nullptr;
  decltype(&::PQexecParams) exec_params = nullptr;
  decltype(&::PQfinish) finish = nullptr;
  decltype(&::PQfreemem) freemem = nullptr;
  decltype(&::PQgetResult) get_result = nullptr;
  decltype(&::PQgetlength) getlength = nullptr;
  decltype(&::PQgetvalue) getvalue = nullptr;
  decltype(&::PQhost) host = nullptr;
  decltype(&::PQnfields) nfields = nullptr;
  decltype(&::PQntuples) ntuples = nullptr;
  decltype(&::PQpass) pass = nullptr;
  decltype(&::PQport) port = nullptr;
  decltype(&::PQputCopyData) put_copy_data = nullptr;
  decltype(&::PQputCopyEnd) put_copy_end = nullptr;
  decltype(&::PQresultErrorField) result_error_field = nullptr;
  decltype(&::PQresultErrorMessage) result_error_message = nullptr;
  decltype(&::PQresultStatus) result_status = nullptr;
  decltype(&::PQstatus) status = nullptr;
  decltype(&::PQtransactionStatus) transaction_status = nullptr;
  std::string error;  ///< why libpq is not usable; "" when it is
};

// The soname of the libpq kasava is built against (Debian: libpq5).
constexpr const char* k_libpq = "libpq.so.5";

const PqApi& pq() {
  static const PqApi api = [] {
    PqApi loaded;
    util::SharedLibrary library(k_libpq, "libpq", "the shared store needs libpq (Debian: apt-get install libpq5)");
    library.resolve(loaded.clear, "PQclear");
    library.resolve(loaded.cmd_tuples, "PQcmdTuples");
    library.resolve(loaded.connectdb_params, "PQconnectdbParams");
    library.resolve(loaded.conninfo_free, "PQconninfoFree");
    library.resolve(loaded.conninfo_parse, "PQconninfoParse");
    library.resolve(loaded.error_message, "PQerrorMessage");
    library.resolve(loaded.exec, "PQexec");
    library.resolve(loaded.exec_params, "PQexecParams");
    library.resolve(loaded.finish, "PQfinish");
    library.resolve(loaded.freemem, "PQfreemem");
    library.resolve(loaded.get_result, "PQgetResult");
    library.resolve(loaded.getlength, "PQgetlength");
    library.resolve(loaded.getvalue, "PQgetvalue");
    library.resolve(loaded.host, "PQhost");
    library.resolve(loaded.nfields, "PQnfields");
    library.resolve(loaded.ntuples, "PQntuples");
    library.resolve(loaded.pass, "PQpass");
    library.resolve(loaded.port, "PQport");
    library.resolve(loaded.put_copy_data, "PQputCopyData");
    library.resolve(loaded.put_copy_end, "PQputCopyEnd");
    library.resolve(loaded.result_error_field, "PQresultErrorField");
    library.resolve(loaded.result_error_message, "PQresultErrorMessage");
    library.resolve(loaded.result_status, "PQresultStatus");
    library.resolve(loaded.status, "PQstatus");
    library.resolve(loaded.transaction_status, "PQtransactionStatus");
    loaded.error = library.error();
    return loaded;
  }();
  return api;
}

} // namespace

void load_client_library() { static_cast<void>(pq()); }

struct Connection::Handle {
  PGconn* conn = nullptr;
  ~Handle() {
    if (conn != nullptr) pq().finish(conn);
  }
};

namespace {

// libpq's messages are several lines ("FATAL:  …\n", "\tIs the server running…\n"): one line
// of their parts, with libpq's own "connection to server at …, port … failed: " dropped (the
// caller names the place itself).
std::string one_line(std::string_view message) {
  std::string line;
  std::size_t start = 0;
  while (start <= message.size()) {
    std::size_t end = message.find('\n', start);
    if (end == std::string_view::npos) end = message.size();
    std::string part(util::trim(message.substr(start, end - start)));
    const std::size_t failed = part.find(" failed: ");
    if (part.starts_with("connection to server") && failed != std::string::npos) {
      part = part.substr(failed + 9);
    }
    for (const char* prefix : {"FATAL:", "ERROR:", "DETAIL:", "HINT:"}) {
      if (part.starts_with(prefix)) part = std::string(util::trim(std::string_view(part).substr(std::string_view(prefix).size())));
    }
    if (!part.empty()) {
      if (!line.empty()) line += "; ";
      line += part;
    }
    start = end + 1;
  }
  return line;
}

// What to do about a failed connection, from what libpq said.
std::string advice(std::string_view message) {
  if (message.find("password") != std::string_view::npos ||
      message.find("authentication") != std::string_view::npos) {
    return "check the user and password (in the URL, PGPASSWORD or ~/.pgpass)";
  }
  if (message.find("database") != std::string_view::npos &&
      message.find("does not exist") != std::string_view::npos) {
    return "create the database (createdb) or name another in the URL";
  }
  if (message.find("role") != std::string_view::npos &&
      message.find("does not exist") != std::string_view::npos) {
    return "create the role or name another user in the URL";
  }
  if (message.find("timeout") != std::string_view::npos) {
    return "check that the server is up and reachable from here (connect_timeout)";
  }
  return "check that PostgreSQL is running there and accepting connections (--store, "
         "KASAVA_STORE, PGHOST, PGPORT)";
}

std::string place_of(PGconn* conn) {
  const char* host = conn != nullptr ? pq().host(conn) : nullptr;
  const char* port = conn != nullptr ? pq().port(conn) : nullptr;
  std::string place = host != nullptr && *host != '\0' ? host : "localhost";
  place += ":";
  place += port != nullptr && *port != '\0' ? port : "5432";
  return place;
}

std::string replace_all(std::string text, const std::string& secret) {
  if (secret.empty()) return text;
  std::size_t at = 0;
  while ((at = text.find(secret, at)) != std::string::npos) {
    text.replace(at, secret.size(), "***");
    at += 3;
  }
  return text;
}

} // namespace

util::Result<std::unique_ptr<Connection>> Connection::open(const std::string& conninfo) {
  if (!pq().error.empty()) return util::Error{"store: " + pq().error};
  std::unique_ptr<Connection> connection(new Connection());
  // What the string says, to know its password (for scrubbing) and which defaults it sets.
  char* parse_error = nullptr;
  PQconninfoOption* parsed = pq().conninfo_parse(conninfo.c_str(), &parse_error);
  if (parsed == nullptr) {
    // libpq's message may quote part of the string, which may hold the password.
    if (parse_error != nullptr) pq().freemem(parse_error);
    return util::Error{"store: the connection string is neither a postgresql:// URI nor "
                       "key=value pairs libpq can read; see "
                       "https://www.postgresql.org/docs/current/libpq-connect.html"};
  }
  bool has_timeout = false;
  bool has_options = false;
  for (PQconninfoOption* option = parsed; option->keyword != nullptr; ++option) {
    if (option->val == nullptr || *option->val == '\0') continue;
    const std::string_view keyword = option->keyword;
    if (keyword == "password") connection->m_secrets.emplace_back(option->val);
    if (keyword == "connect_timeout") has_timeout = true;
    if (keyword == "options") has_options = true;
  }
  pq().conninfo_free(parsed);
  if (const char* password = std::getenv("PGPASSWORD"); password != nullptr && *password != '\0') {
    connection->m_secrets.emplace_back(password);
  }
  const std::string timeout = std::to_string(k_default_connect_timeout_seconds);
  const std::string options = "-c statement_timeout=" + std::to_string(k_default_statement_timeout_ms);
  std::vector<const char*> keywords;
  std::vector<const char*> values;
  // Defaults first: with expand_dbname, the string's own values (processed after) win.
  if (!has_timeout && std::getenv("PGCONNECT_TIMEOUT") == nullptr) {
    keywords.push_back("connect_timeout");
    values.push_back(timeout.c_str());
  }
  if (!has_options && std::getenv("PGOPTIONS") == nullptr) {
    keywords.push_back("options");
    values.push_back(options.c_str());
  }
  keywords.push_back("fallback_application_name");
  values.push_back("kasava");
  keywords.push_back("dbname");
  values.push_back(conninfo.c_str());
  keywords.push_back(nullptr);
  values.push_back(nullptr);
  connection->m_handle = std::make_unique<Handle>();
  PGconn* conn = pq().connectdb_params(keywords.data(), values.data(), 1);
  connection->m_handle->conn = conn;
  if (conn != nullptr) {
    if (const char* password = pq().pass(conn); password != nullptr && *password != '\0') {
      connection->m_secrets.emplace_back(password);
    }
  }
  connection->m_where = place_of(conn);
  if (conn == nullptr || pq().status(conn) != CONNECTION_OK) {
    const std::string said = conn != nullptr ? one_line(pq().error_message(conn)) : "out of memory";
    return util::Error{connection->scrub("store at " + connection->m_where + ": cannot connect: " +
                                         said + "; " + advice(said))};
  }
  return connection;
}

Connection::~Connection() = default;

std::string Connection::scrub(std::string message) const {
  for (const std::string& secret : m_secrets) message = replace_all(std::move(message), secret);
  return message;
}

Rows Connection::exec(std::string_view sql, const std::vector<Param>& params) {
  std::vector<const char*> values;
  std::vector<int> lengths;
  std::vector<int> formats;
  for (const Param& param : params) {
    values.push_back(param.null ? nullptr : param.value.data());
    lengths.push_back(static_cast<int>(param.value.size()));
    formats.push_back(param.binary ? 1 : 0);
  }
  const std::string statement(sql);
  PGresult* result = pq().exec_params(m_handle->conn, statement.c_str(), static_cast<int>(params.size()),
                                  nullptr, values.data(), lengths.data(), formats.data(), 0);
  const ExecStatusType status = result != nullptr ? pq().result_status(result) : PGRES_FATAL_ERROR;
  if (status != PGRES_COMMAND_OK && status != PGRES_TUPLES_OK) fail(result);
  Rows rows;
  const int count = pq().ntuples(result);
  const int columns = pq().nfields(result);
  rows.rows.resize(static_cast<std::size_t>(count));
  for (int row = 0; row < count; ++row) {
    auto& out = rows.rows[static_cast<std::size_t>(row)];
    out.reserve(static_cast<std::size_t>(columns));
    for (int column = 0; column < columns; ++column) {
      out.emplace_back(pq().getvalue(result, row, column),
                       static_cast<std::size_t>(pq().getlength(result, row, column)));
    }
  }
  pq().clear(result);
  return rows;
}

namespace {

// What the server said, with what to do when that is clear from its SQLSTATE.
std::string with_advice(std::string said, const std::string& sqlstate) {
  if (sqlstate == "42501") {  // insufficient_privilege
    said += "; this role may not change the store: publish, unpublish and repair with the role "
            "that owns it (README: \"A shared index for a team\")";
  }
  return said;
}

} // namespace

void Connection::exec_script(std::string_view sql) {
  const std::string script(sql);
  PGresult* result = pq().exec(m_handle->conn, script.c_str());
  const ExecStatusType status = result != nullptr ? pq().result_status(result) : PGRES_FATAL_ERROR;
  if (status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK) {
    pq().clear(result);
    return;
  }
  std::string sqlstate;
  std::string said = one_line(pq().error_message(m_handle->conn));
  if (result != nullptr) {
    if (const char* code = pq().result_error_field(result, PG_DIAG_SQLSTATE); code != nullptr) sqlstate = code;
    pq().clear(result);
  }
  throw QueryError(scrub("store at " + m_where + ": " + with_advice(said, sqlstate)), sqlstate);
}

void Connection::fail(PGresult* result) const {
  std::string sqlstate;
  std::string said;
  if (result != nullptr) {
    if (const char* code = pq().result_error_field(result, PG_DIAG_SQLSTATE); code != nullptr) sqlstate = code;
    said = one_line(pq().result_error_message(result));
    pq().clear(result);
  }
  fail(said, std::move(sqlstate));
}

bool Connection::idle() const {
  return pq().status(m_handle->conn) == CONNECTION_OK && pq().transaction_status(m_handle->conn) == PQTRANS_IDLE;
}

void Connection::fail(const std::string& said_by_server, std::string sqlstate) const {
  std::string said = said_by_server.empty() ? one_line(pq().error_message(m_handle->conn)) : said_by_server;
  if (pq().status(m_handle->conn) != CONNECTION_OK) {
    said += "; the connection was lost: check that PostgreSQL is running there";
  }
  said = with_advice(std::move(said), sqlstate);
  throw QueryError(scrub("store at " + m_where + ": " + said), std::move(sqlstate));
}

namespace {

// What a COPY sends to the server at a time: large enough for few calls, small enough that
// the server starts on the first rows while later ones are being made.
constexpr std::size_t k_copy_flush_bytes = 256u << 10;

// Ends the COPY of `conn` (with `abort_message`, or normally when null) and collects its
// result: nullptr when it succeeded (`rows` gets the count), else the failed result.
PGresult* end_copy(PGconn* conn, const char* abort_message, std::int64_t& rows) {
  rows = 0;
  PGresult* failure = nullptr;
  if (pq().put_copy_end(conn, abort_message) != 1) return nullptr;  // the connection is gone
  // The COPY's result, then nothing; a result still in COPY state means libpq could not end
  // it (a lost connection): stop rather than wait.
  while (PGresult* result = pq().get_result(conn)) {
    const ExecStatusType status = pq().result_status(result);
    if (status == PGRES_COMMAND_OK) {
      const char* count = pq().cmd_tuples(result);
      rows = count != nullptr && *count != '\0' ? std::strtoll(count, nullptr, 10) : 0;
      pq().clear(result);
    } else if (status == PGRES_COPY_IN || status == PGRES_COPY_OUT || status == PGRES_COPY_BOTH) {
      pq().clear(result);
      break;
    } else if (failure == nullptr) {
      failure = result;
    } else {
      pq().clear(result);
    }
  }
  return failure;
}

} // namespace

namespace {

// Appends `value` in network byte order.
template <typename Integer>
void put_big_endian(std::string& out, Integer value) {
  const auto bits = static_cast<std::make_unsigned_t<Integer>>(value);
  for (int shift = static_cast<int>(sizeof(Integer) * 8) - 8; shift >= 0; shift -= 8) {
    out += static_cast<char>((bits >> shift) & 0xff);
  }
}

} // namespace

CopyIn::CopyIn(Connection& connection, std::string_view sql) : m_connection(connection) {
  PGconn* conn = m_connection.m_handle->conn;
  const std::string statement(sql);
  PGresult* result = pq().exec(conn, statement.c_str());
  if (result == nullptr || pq().result_status(result) != PGRES_COPY_IN) {
    m_open = false;
    m_connection.fail(result);
  }
  pq().clear(result);
  m_buffer.reserve(k_copy_flush_bytes + (64u << 10));
  // The binary format's signature, flags (none) and header extension (none).
  m_buffer.append("PGCOPY\n\xff\r\n\0", 11);
  put_big_endian<std::int32_t>(m_buffer, 0);
  put_big_endian<std::int32_t>(m_buffer, 0);
}

CopyIn::~CopyIn() {
  if (!m_open) return;
  std::int64_t rows = 0;
  if (PGresult* failure = end_copy(m_connection.m_handle->conn, "kasava stopped sending rows", rows)) {
    pq().clear(failure);
  }
}

void CopyIn::begin_field(std::int32_t length) {
  if (m_row_start == std::string::npos) {
    m_row_start = m_buffer.size();
    m_buffer.append(2, '\0');  // the field count, written by end_row
    m_fields = 0;
  }
  ++m_fields;
  put_big_endian(m_buffer, length);
}

CopyIn& CopyIn::value(std::string_view encoded) {
  begin_field(static_cast<std::int32_t>(encoded.size()));
  m_buffer.append(encoded);
  return *this;
}

CopyIn& CopyIn::int16(std::int16_t number) {
  begin_field(2);
  put_big_endian(m_buffer, number);
  return *this;
}

CopyIn& CopyIn::int32(std::int32_t number) {
  begin_field(4);
  put_big_endian(m_buffer, number);
  return *this;
}

CopyIn& CopyIn::int64(std::int64_t number) {
  begin_field(8);
  put_big_endian(m_buffer, number);
  return *this;
}

CopyIn& CopyIn::null() {
  begin_field(-1);
  return *this;
}

void CopyIn::end_row() {
  if (m_row_start == std::string::npos) return;
  const auto count = static_cast<std::uint16_t>(m_fields);
  m_buffer[m_row_start] = static_cast<char>(count >> 8);
  m_buffer[m_row_start + 1] = static_cast<char>(count & 0xff);
  m_row_start = std::string::npos;
  if (m_buffer.size() >= k_copy_flush_bytes) flush();
}

void CopyIn::flush() {
  if (m_buffer.empty()) return;
  PGconn* conn = m_connection.m_handle->conn;
  if (pq().put_copy_data(conn, m_buffer.data(), static_cast<int>(m_buffer.size())) != 1) {
    m_open = false;
    std::int64_t rows = 0;
    m_connection.fail(end_copy(conn, "kasava could not send rows", rows));
  }
  m_buffer.clear();
}

std::int64_t CopyIn::finish() {
  put_big_endian<std::int16_t>(m_buffer, -1);  // the trailer
  flush();
  m_open = false;
  PGconn* conn = m_connection.m_handle->conn;
  std::int64_t rows = 0;
  if (PGresult* failure = end_copy(conn, nullptr, rows)) m_connection.fail(failure);
  if (pq().status(conn) != CONNECTION_OK) m_connection.fail("", "");
  return rows;
}

std::int64_t to_int(const std::string& text) {
  try {
    return text.empty() ? 0 : std::stoll(text);
  } catch (const std::exception&) {
    return 0;
  }
}

std::string binary_bits(std::string_view bytes) {
  std::string out;
  out.reserve(4 + bytes.size());
  put_big_endian(out, static_cast<std::int32_t>(bytes.size() * 8));
  out.append(bytes);
  return out;
}

Transaction::Transaction(Connection& connection) : m_connection(connection) {
  m_connection.exec("BEGIN");
}

Transaction::~Transaction() {
  if (!m_open) return;
  try {
    m_connection.exec("ROLLBACK");
  } catch (const util::Failure&) {
    // The connection is gone: the server rolls the transaction back itself.
  }
}

void Transaction::commit() {
  m_connection.exec("COMMIT");
  m_open = false;
}

std::string to_hex(std::string_view bytes) {
  static constexpr char k_digits[] = "0123456789abcdef";
  std::string hex;
  hex.reserve(bytes.size() * 2);
  for (const char c : bytes) {
    const auto byte = static_cast<unsigned char>(c);
    hex += k_digits[byte >> 4];
    hex += k_digits[byte & 15];
  }
  return hex;
}

std::optional<std::string> from_hex(std::string_view hex) {
  // A table, not branches: a search decodes every candidate's vector (a tenth of its CPU).
  static constexpr auto k_values = [] {
    std::array<signed char, 256> values{};
    values.fill(-1);
    for (int c = '0'; c <= '9'; ++c) values[static_cast<std::size_t>(c)] = static_cast<signed char>(c - '0');
    for (int c = 'a'; c <= 'f'; ++c) values[static_cast<std::size_t>(c)] = static_cast<signed char>(c - 'a' + 10);
    for (int c = 'A'; c <= 'F'; ++c) values[static_cast<std::size_t>(c)] = static_cast<signed char>(c - 'A' + 10);
    return values;
  }();
  if (hex.size() % 2 != 0) return std::nullopt;
  std::string bytes(hex.size() / 2, '\0');
  for (std::size_t i = 0; i < bytes.size(); ++i) {
    const int high = k_values[static_cast<unsigned char>(hex[2 * i])];
    const int low = k_values[static_cast<unsigned char>(hex[2 * i + 1])];
    if ((high | low) < 0) return std::nullopt;
    bytes[i] = static_cast<char>(high << 4 | low);
  }
  return bytes;
}

std::string text_array(const std::vector<std::string>& elements) {
  std::string literal = "{";
  for (const std::string& element : elements) {
    if (literal.size() > 1) literal += ',';
    literal += '"';
    for (const char c : element) {
      if (c == '"' || c == '\\') literal += '\\';
      literal += c;
    }
    literal += '"';
  }
  return literal + "}";
}

std::string decode_bytea(std::string_view text) {
  if (text.starts_with("\\x")) return from_hex(text.substr(2)).value_or("");
  return std::string(text);
}

} // namespace kasava::pgstore
