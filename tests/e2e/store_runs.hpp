// What the shared-store end-to-end tests share: kasava run against the tests' PostgreSQL
// server with every output searched for its password, a publish under a repository name, a
// count read with psql, a sample project, and a psql session holding a lock while kasava runs.
#pragma once

#include <catch2/catch.hpp>

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "tests/e2e/harness.hpp"
#include "tests/support/postgres_server.hpp"

namespace kasava::e2e {

/// Runs kasava in `repo` and checks that the server's password is in none of its output.
inline RunResult run_checked(const FixtureRepo& repo, const std::vector<std::string>& args,
                             RunOptions options = {}) {
  const RunResult result = repo.kasava(args, std::move(options));
  const std::string& password = test_support::PostgresServer::shared().password();
  INFO(describe(result));
  CHECK(result.out.find(password) == std::string::npos);
  CHECK(result.err.find(password) == std::string::npos);
  return result;
}

/// `kasava index --store URI --name NAME`, which must succeed.
inline void publish_as(const FixtureRepo& repo, const std::string& uri, const std::string& name) {
  const RunResult result = run_checked(repo, {"index", "--store", uri, "--name", name});
  INFO(describe(result));
  REQUIRE(result.exit_code == 0);
}

/// The number `sql` (one value) gives in `database`.
inline std::int64_t count(const std::string& database, const std::string& sql) {
  return std::stoll(test_support::PostgresServer::shared().psql(database, sql));
}

/// The sample project committed, plus a small file of its own.
inline void write_project(const FixtureRepo& repo, const std::string& extra_name, const std::string& extra) {
  write_sample_project(repo);
  repo.write(extra_name, extra);
  repo.commit_all("project");
}

/// Waits until `sql` counts 1 (a lock granted or awaited: an event the test caused).
inline void wait_for(const std::string& database, const std::string& sql) {
  for (int i = 0; i < 1200 && count(database, sql) == 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  REQUIRE(count(database, sql) == 1);
}

/// A psql session that holds `lock_sql` in an open transaction until release_lock().
inline pid_t hold_lock(const std::string& database, const std::string& lock_sql) {
  const std::string conninfo = test_support::PostgresServer::shared().socket_conninfo(database);
  const std::string script = "BEGIN; " + lock_sql + "; SELECT pg_sleep(300);";
  const pid_t pid = ::fork();
  if (pid == 0) {
    const int null = ::open("/dev/null", O_WRONLY);
    ::dup2(null, 1);
    ::dup2(null, 2);
    ::execlp("psql", "psql", "-X", "-q", "-d", conninfo.c_str(), "-c", script.c_str(), static_cast<char*>(nullptr));
    ::_exit(127);
  }
  return pid;
}

inline void release_lock(const std::string& database, pid_t locker) {
  test_support::PostgresServer::shared().psql(
      database, "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE application_name = 'psql' "
                "AND query LIKE '%pg_sleep(300)%' AND pid <> pg_backend_pid()");
  int status = 0;
  ::waitpid(locker, &status, 0);
}

} // namespace kasava::e2e
