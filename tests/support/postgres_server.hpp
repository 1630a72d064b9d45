// A real PostgreSQL server for the tests of the shared store, started on first use and shared
// by every test of the binary: initdb into a temporary folder (as nobody through setpriv when
// the tests run as root: initdb refuses root), a password-authenticated superuser, pg_ctl
// start on a unix socket in that folder and a free loopback TCP port, fsync off. A guardian
// process started before initdb stops the server (pg_ctl stop -m immediate) and removes the
// folder when this process ends in any way — a failed test, an exception, even SIGKILL — as
// it reads end-of-file on a pipe only this process holds open.
#pragma once

#include <string>

namespace kasava::test_support {

class PostgresServer {
public:
  /// The server of this test run, started on the first call (a few seconds). Throws
  /// std::runtime_error when PostgreSQL cannot be started (its log in the message).
  static PostgresServer& shared();
  ~PostgresServer();
  PostgresServer(const PostgresServer&) = delete;
  PostgresServer& operator=(const PostgresServer&) = delete;

  const std::string& user() const { return m_user; }
  const std::string& password() const { return m_password; }
  int port() const { return m_port; }
  const std::string& socket_dir() const { return m_dir; }

  /// A new, empty database of a unique name starting with `prefix` (letters, digits, '_').
  std::string create_database(const std::string& prefix);
  /// postgresql://user:password@127.0.0.1:port/database
  std::string uri(const std::string& database) const;
  /// The same over TCP without the password (for tests that give it another way).
  std::string uri_without_password(const std::string& database) const;
  /// key=value connection string over the unix socket, with the password.
  std::string socket_conninfo(const std::string& database) const;

  /// Stops the server (pg_ctl stop -m fast: every session is ended), for tests of a server
  /// that goes away; resume() starts it again on the same port with the same data.
  void stop();
  void resume();

  /// Runs SQL with psql in `database`; returns its output (unaligned, tuples only, trimmed).
  /// Throws std::runtime_error with psql's output when it fails.
  std::string psql(const std::string& database, const std::string& sql) const;

private:
  PostgresServer();
  void start();
  bool launch();  // pg_ctl start on m_port; false when it failed
  std::string m_root;      // the temporary folder: data/, the socket, the log
  std::string m_dir;       // = m_root (socket folder)
  std::string m_bin;       // PostgreSQL's bin folder
  std::string m_user = "kasava_test";
  std::string m_password;
  int m_port = 0;
  int m_guardian_pipe = -1;
  int m_guardian_pid = -1;
  int m_databases = 0;
};

} // namespace kasava::test_support
