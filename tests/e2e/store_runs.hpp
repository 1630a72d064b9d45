// What the shared-store end-to-end tests share: kasava run against the tests' PostgreSQL
// server with every output searched for its password, a publish under a repository name, and
// a count read with psql.
#pragma once

#include <catch2/catch.hpp>

#include <string>
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

} // namespace kasava::e2e
