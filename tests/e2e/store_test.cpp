// End-to-end tests of the shared PostgreSQL store (`kasava index --store`, `kasava status
// --store`) against a real server the tests start (tests/support/postgres_server.hpp): several
// repositories and branches published, a fork sending only its own blobs, a re-publish sending
// nothing, concurrent publishers, a publish killed or interrupted (Ctrl-C) before its swap, a
// publish of several batches on two connections, a server that refuses or is not there.
// Every run's output is searched for the server's password.
#include <catch2/catch.hpp>

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <thread>

#include "core/pgstore/store.hpp"
#include "tests/e2e/background.hpp"
#include "tests/e2e/harness.hpp"
#include "tests/e2e/store_runs.hpp"
#include "tests/support/postgres_server.hpp"

namespace kasava::e2e {

namespace {

using test_support::PostgresServer;

// `kasava index --store URI --json …` that must succeed; returns its "publish" member.
util::JsonValue publish(const FixtureRepo& repo, const std::string& uri, std::vector<std::string> more = {}) {
  std::vector<std::string> args = {"index", "--json", "--store", uri};
  args.insert(args.end(), more.begin(), more.end());
  const RunResult result = run_checked(repo, args);
  INFO(describe(result));
  REQUIRE(result.exit_code == 0);
  const util::JsonValue document = parse_json_output(result.out);
  const util::JsonValue* published = document.find("publish");
  REQUIRE(published != nullptr);
  return *published;
}

} // namespace

TEST_CASE("store: two repositories and two branches of one are published, the second branch "
          "sends only its changed blob", "[store]") {
  PostgresServer& server = PostgresServer::shared();
  const std::string database = server.create_database("two_repos");
  const std::string uri = server.uri(database);

  FixtureRepo app;
  write_project(app, "app.py", "def app_main():\n    \"\"\"Starts the application.\"\"\"\n    return 1\n");
  const util::JsonValue first = publish(app, uri, {"--name", "acme/app"});
  CHECK(first.find("repository")->as_string() == "acme/app");
  CHECK(first.find("ref")->as_string() == "main");
  const std::int64_t app_blobs = first.find("blobs")->get_integer().value_or(-1);
  CHECK(first.find("blobs_sent")->get_integer() == app_blobs);
  CHECK(app_blobs == static_cast<std::int64_t>(sample_file_count()) + 1);

  app.git({"checkout", "-q", "-b", "feature"});
  app.write("app.py", "def app_main():\n    \"\"\"Starts the application, featured.\"\"\"\n    return 2\n");
  app.commit_all("feature");
  const util::JsonValue feature = publish(app, uri, {"--name", "acme/app"});
  CHECK(feature.find("ref")->as_string() == "feature");
  CHECK(feature.find("blobs_sent")->get_integer() == 1);

  FixtureRepo lib(GitInit::yes);
  lib.write("lib.go", "package lib\n\n// Sum adds two numbers.\nfunc Sum(a, b int) int { return a + b }\n");
  lib.write("README.md", "# lib\n\nA library that sums.\n");
  lib.commit_all("lib");
  lib.git({"remote", "add", "origin", "https://example.com/acme/lib.git"});
  const util::JsonValue library = publish(lib, uri);
  CHECK(library.find("repository")->as_string() == "acme/lib");  // from origin
  CHECK(library.find("blobs_sent")->get_integer() == 2);

  CHECK(count(database, "SELECT count(*) FROM repositories") == 2);
  CHECK(count(database, "SELECT count(*) FROM refs") == 3);
  CHECK(count(database, "SELECT count(*) FROM blobs") == app_blobs + 1 + 2);
  CHECK(count(database, "SELECT count(*) FROM blob_texts") == app_blobs + 1 + 2);
  CHECK(count(database, "SELECT count(*) FROM snapshot_files") == 2 * app_blobs + 2);
  // Each ref keeps its files' history beside its snapshot, stemmed for searching.
  CHECK(count(database,
              "SELECT count(*) FROM file_history h JOIN refs f ON f.id = h.ref_id "
              "WHERE f.name = 'feature' AND h.path = 'app.py' AND h.terms ? 'featur'") == 1);
  CHECK(count(database,
              "SELECT count(*) FROM file_history h JOIN refs f ON f.id = h.ref_id "
              "WHERE f.name = 'main' AND h.terms ? 'featur'") == 0);
  // Every stored text is the git blob its id names (checked again here from the rows).
  CHECK(count(database, "SELECT count(*) FROM blob_texts WHERE length(blob_id) <> 20") == 0);

  const RunResult status = run_checked(app, {"status", "--store", uri, "--json"});
  REQUIRE(status.exit_code == 0);
  const util::JsonValue document = parse_json_output(status.out);
  CHECK(document.find("repositories")->get_integer() == 2);
  CHECK(document.find("unique_blobs")->get_integer() == app_blobs + 3);
  const util::JsonValue* refs = document.find("refs");
  REQUIRE(refs != nullptr);
  REQUIRE(refs->size() == 3);
  std::set<std::string> names;
  for (std::size_t i = 0; i < refs->size(); ++i) {
    const util::JsonValue& ref = (*refs)[i];
    names.insert(ref["repository"].as_string() + " " + ref["ref"].as_string());
    CHECK(ref["commit"].as_string().size() == 40);
    CHECK(ref.find("chunks")->get_integer().value_or(0) > 0);
  }
  CHECK(names == std::set<std::string>{"acme/app feature", "acme/app main", "acme/lib main"});
  // The text view names the same.
  const RunResult text = run_checked(app, {"status", "--store", uri});
  REQUIRE(text.exit_code == 0);
  CHECK(text.out.find("acme/lib main") != std::string::npos);
  CHECK(text.out.find("127.0.0.1:" + std::to_string(server.port())) != std::string::npos);
}

TEST_CASE("store: a fork publishes only its distinct blobs, and a re-publish sends nothing",
          "[store]") {
  PostgresServer& server = PostgresServer::shared();
  const std::string database = server.create_database("fork");
  const std::string uri = server.uri(database);
  FixtureRepo upstream;
  write_project(upstream, "extra.py", "def upstream_only():\n    return 'upstream'\n");
  const std::int64_t blobs = publish(upstream, uri, {"--name", "acme/app"}).find("blobs")->get_integer().value_or(-1);
  const std::int64_t chunks = count(database, "SELECT count(*) FROM chunks");

  FixtureRepo fork;
  write_project(fork, "extra.py", "def fork_only():\n    return 'fork'\n");
  const util::JsonValue forked = publish(fork, uri, {"--name", "someone/app"});
  CHECK(forked.find("blobs_sent")->get_integer() == 1);
  CHECK(count(database, "SELECT count(*) FROM blobs") == blobs + 1);
  CHECK(count(database, "SELECT count(*) FROM chunks") ==
        chunks + forked.find("chunks_sent")->get_integer().value_or(-1));

  // Again, nothing changed: nothing sent, the snapshot kept as it is.
  const RunResult again = run_checked(fork, {"index", "--store", uri, "--name", "someone/app"});
  REQUIRE(again.exit_code == 0);
  CHECK(again.out.find("0 of " + std::to_string(blobs) + " blobs sent (0 chunks), snapshot unchanged") !=
        std::string::npos);
  CHECK(count(database, "SELECT count(*) FROM blobs") == blobs + 1);
}

TEST_CASE("store: the store is named by KASAVA_STORE or the user's config, never the repository's",
          "[store]") {
  PostgresServer& server = PostgresServer::shared();
  const std::string database = server.create_database("settings");
  const std::string uri = server.uri(database);
  FixtureRepo repo;
  write_project(repo, "a.py", "def a():\n    return 1\n");
  repo.write(".kasava/config", "store = " + uri + "\n");
  const RunResult ignored = run_checked(repo, {"index"});
  REQUIRE(ignored.exit_code == 0);
  CHECK(ignored.out.find("published") == std::string::npos);
  CHECK(ignored.err.find("ignoring 'store'") != std::string::npos);
  CHECK(count(database, "SELECT count(*) FROM pg_tables WHERE tablename = 'blobs'") == 0);

  RunOptions environment;
  environment.set_env("KASAVA_STORE", uri);
  const RunResult from_environment = run_checked(repo, {"index", "--name", "acme/env"}, environment);
  REQUIRE(from_environment.exit_code == 0);
  CHECK(from_environment.out.find("published acme/env main") != std::string::npos);

  TempDir config("config");
  std::filesystem::create_directories(config / "kasava");
  {
    std::ofstream out(config / "kasava/config");
    out << "store = " << uri << "\n";
  }
  RunOptions user;
  user.set_env("XDG_CONFIG_HOME", config.path());
  const RunResult from_user = run_checked(repo, {"index", "--name", "acme/user"}, user);
  REQUIRE(from_user.exit_code == 0);
  CHECK(from_user.out.find("published acme/user main") != std::string::npos);
  CHECK(count(database, "SELECT count(*) FROM repositories") == 2);
}

TEST_CASE("store: concurrent publishes of one repository both succeed, one of them complete",
          "[store]") {
  PostgresServer& server = PostgresServer::shared();
  const std::string database = server.create_database("concurrent");
  const std::string uri = server.uri(database);
  FixtureRepo one;
  write_many_files(one, 60, 0);
  one.commit_all("variant 0");
  FixtureRepo two;
  write_many_files(two, 60, 1);
  two.write("only_in_two.py", "def two():\n    return 2\n");
  two.commit_all("variant 1");
  TempDir logs("logs");
  for (int round = 0; round < 2; ++round) {
    const std::string name = "acme/race" + std::to_string(round);
    BackgroundKasava first({"index", "--store", uri, "--name", name, "--rev", "HEAD"}, one.root(),
                           logs / ("one" + std::to_string(round)));
    BackgroundKasava second({"index", "--store", uri, "--name", name, "--rev", "HEAD"}, two.root(),
                            logs / ("two" + std::to_string(round)));
    const int first_code = first.wait();
    const int second_code = second.wait();
    INFO(first.err() << second.err());
    CHECK(first_code == 0);
    CHECK(second_code == 0);
    CHECK(first.err().find(server.password()) == std::string::npos);
    CHECK(second.err().find(server.password()) == std::string::npos);
    // The ref holds exactly one publisher's files, with the commit of that same publisher.
    const std::string commit = server.psql(
        database, "SELECT f.commit_id FROM refs f JOIN repositories r ON r.id = f.repository_id "
                  "WHERE r.name = '" + name + "'");
    const std::int64_t files = count(
        database, "SELECT count(*) FROM snapshot_files s JOIN refs f ON f.id = s.ref_id JOIN repositories r "
                  "ON r.id = f.repository_id WHERE r.name = '" + name + "'");
    const std::string one_commit = one.git({"rev-parse", "HEAD"}).substr(0, 40);
    const std::string two_commit = two.git({"rev-parse", "HEAD"}).substr(0, 40);
    if (commit == one_commit) {
      CHECK(files == 60);
    } else {
      CHECK(commit == two_commit);
      CHECK(files == 61);
    }
  }
  // No blob twice: the primary key would refuse it, and the counts add up.
  CHECK(count(database, "SELECT count(*) FROM blobs") == 121);
}

TEST_CASE("store: a wrong password or an unreachable server is one line and exit 2, the local "
          "index is updated", "[store]") {
  PostgresServer& server = PostgresServer::shared();
  const std::string database = server.create_database("faults");
  FixtureRepo repo;
  write_project(repo, "a.py", "def a():\n    return 1\n");
  const std::string place = "127.0.0.1:" + std::to_string(server.port());

  const std::string wrong = "Not-The-Password-77";
  const RunResult refused = run_checked(
      repo, {"index", "--store", "postgresql://" + server.user() + ":" + wrong + "@" + place + "/" + database});
  INFO(describe(refused));
  CHECK(refused.exit_code == 2);
  CHECK(lines_of(refused.err).size() == 1);
  CHECK(refused.err.find(place) != std::string::npos);
  CHECK(refused.err.find("password") != std::string::npos);
  CHECK(refused.err.find(wrong) == std::string::npos);
  CHECK(refused.out.find(wrong) == std::string::npos);
  // The local index was brought up to date before the publish failed.
  CHECK(refused.out.find("indexed") != std::string::npos);
  const RunResult local = run_checked(repo, {"status", "--json"});
  REQUIRE(local.exit_code == 0);
  CHECK(parse_json_output(local.out).find("files")->get_integer() ==
        static_cast<std::int64_t>(sample_file_count()) + 1);

  // The password given by PGPASSWORD instead works, and is not printed either.
  RunOptions with_password;
  with_password.set_env("PGPASSWORD", server.password());
  const RunResult through_environment =
      run_checked(repo, {"index", "--store", server.uri_without_password(database), "--name", "acme/pw"},
                  with_password);
  CHECK(through_environment.exit_code == 0);

  // Nothing listens on port 1.
  const RunResult unreachable = run_checked(
      repo, {"index", "--store", "postgresql://" + server.user() + ":" + server.password() + "@127.0.0.1:1/" +
                                     database + "?connect_timeout=5"});
  INFO(describe(unreachable));
  CHECK(unreachable.exit_code == 2);
  CHECK(lines_of(unreachable.err).size() == 1);
  CHECK(unreachable.err.find("127.0.0.1:1") != std::string::npos);

  const RunResult status = run_checked(repo, {"status", "--store", server.uri_without_password(database) + "?password=" + wrong});
  CHECK(status.exit_code == 2);
  CHECK(lines_of(status.err).size() == 1);
  CHECK(status.err.find(wrong) == std::string::npos);
}

TEST_CASE("store: a publish killed before its swap leaves the old snapshot, the next run "
          "completes it without sending again", "[store]") {
  PostgresServer& server = PostgresServer::shared();
  const std::string database = server.create_database("killed");
  const std::string uri = server.uri(database);
  FixtureRepo repo;
  write_project(repo, "a.py", "def a():\n    return 1\n");
  publish(repo, uri, {"--name", "acme/kill"});
  const std::string old_commit = repo.git({"rev-parse", "HEAD"}).substr(0, 40);
  const std::int64_t blobs = count(database, "SELECT count(*) FROM blobs");
  repo.write("a.py", "def a():\n    return 2\n");
  repo.commit_all("two");
  const std::string new_commit = repo.git({"rev-parse", "HEAD"}).substr(0, 40);

  // Another session holds the refs table: the publisher sends its blob, then waits at the swap.
  const pid_t locker = hold_lock(database, "LOCK TABLE refs IN EXCLUSIVE MODE");
  wait_for(database, "SELECT count(*) FROM pg_locks l JOIN pg_class c ON c.oid = l.relation "
                     "WHERE c.relname = 'refs' AND l.mode = 'ExclusiveLock' AND l.granted");
  TempDir logs("logs");
  {
    BackgroundKasava publisher({"index", "--store", uri, "--name", "acme/kill"}, repo.root(), logs / "killed");
    wait_for(database, "SELECT count(*) FROM pg_stat_activity WHERE application_name = 'kasava' "
                       "AND wait_event_type = 'Lock'");
    CHECK(count(database, "SELECT count(*) FROM blobs") == blobs + 1);  // sent before the swap
    publisher.signal(SIGKILL);
    CHECK(publisher.wait() == -SIGKILL);
  }
  release_lock(database, locker);
  // Readers still see the old snapshot, whole.
  CHECK(server.psql(database, "SELECT commit_id FROM refs") == old_commit);
  CHECK(count(database, "SELECT count(*) FROM snapshot_files") ==
        static_cast<std::int64_t>(sample_file_count()) + 1);

  const util::JsonValue again = publish(repo, uri, {"--name", "acme/kill"});
  CHECK(again.find("blobs_sent")->get_integer() == 0);  // the killed run's blob is reused
  CHECK(again.find("changed")->get_bool() == true);
  CHECK(server.psql(database, "SELECT commit_id FROM refs") == new_commit);
  CHECK(count(database, "SELECT count(*) FROM blobs") == blobs + 1);
}

TEST_CASE("store: Ctrl-C stops a publish before it sends or swaps, with one line saying what to do, and "
          "the next run publishes", "[store]") {
  PostgresServer& server = PostgresServer::shared();
  const std::string database = server.create_database("interrupted");
  const std::string uri = server.uri(database);
  FixtureRepo repo;
  write_project(repo, "a.py", "def a():\n    return 1\n");
  REQUIRE(run_checked(repo, {"status", "--store", uri}).exit_code == 0);  // the schema, made

  // Another session holds the publishers' lock as a collection would: the publish waits for it
  // with its local index complete, is interrupted there, and stops once it has the lock.
  const pid_t locker = hold_lock(database, "SELECT pg_advisory_lock(" + std::to_string(pgstore::k_collect_lock) + ")");
  wait_for(database, "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND mode = 'ExclusiveLock' "
                     "AND granted");
  TempDir logs("logs");
  {
    BackgroundKasava publisher({"index", "--store", uri, "--name", "acme/stop"}, repo.root(), logs / "stopped");
    wait_for(database, "SELECT count(*) FROM pg_stat_activity WHERE application_name = 'kasava' "
                       "AND wait_event_type = 'Lock'");
    publisher.signal(SIGINT);
    release_lock(database, locker);
    CHECK(publisher.wait() == 130);
    INFO(publisher.err());
    CHECK(lines_of(publisher.err()).size() == 1);
    CHECK(publisher.err().find("interrupted: the local index is complete") != std::string::npos);
    CHECK(publisher.err().find("run `kasava index --store` again") != std::string::npos);
    CHECK(publisher.out().find("files indexed") != std::string::npos);  // the local summary
  }
  CHECK(count(database, "SELECT count(*) FROM refs") == 0);
  CHECK(count(database, "SELECT count(*) FROM blobs") == 0);

  // The next run publishes, and on a terminal says what it is doing.
  RunOptions terminal_err;
  terminal_err.stderr_terminal = true;
  const RunResult again = run_checked(repo, {"index", "--store", uri, "--name", "acme/stop"}, terminal_err);
  REQUIRE(again.exit_code == 0);
  CHECK(again.err.find("publishing: swapping the snapshot of acme/stop") != std::string::npos);
  CHECK(again.out.find("publishing:") == std::string::npos);
  CHECK(count(database, "SELECT count(*) FROM refs") == 1);
  CHECK(count(database, "SELECT count(*) FROM blobs") == static_cast<std::int64_t>(sample_file_count()) + 1);
}

TEST_CASE("store: a publish of several batches, sent on two connections, stores every chunk once",
          "[store]") {
  PostgresServer& server = PostgresServer::shared();
  const std::string database = server.create_database("batches");
  const std::string uri = server.uri(database);
  // 40 files of 60 functions: more than one batch (1,500 chunks), so two senders share them.
  FixtureRepo repo;
  for (int f = 0; f < 40; ++f) {
    std::string text;
    for (int i = 0; i < 60; ++i) {
      text += "def handler_" + std::to_string(f) + "_" + std::to_string(i) + "(request):\n    return route_" +
              std::to_string(i) + "(request, " + std::to_string(f * 100 + i) + ")\n\n\n";
    }
    repo.write("pkg/module_" + std::to_string(f) + ".py", text);
  }
  repo.commit_all("many functions");
  const util::JsonValue published = publish(repo, uri, {"--name", "acme/many"});
  const std::int64_t sent = published.find("chunks_sent")->get_integer().value_or(-1);
  CHECK(sent > 1500);
  CHECK(published.find("blobs_sent")->get_integer() == 40);
  CHECK(published.find("chunks")->get_integer() == sent);
  CHECK(count(database, "SELECT count(*) FROM blobs") == 40);
  CHECK(count(database, "SELECT count(*) FROM chunks") == sent);
  CHECK(count(database, "SELECT count(DISTINCT (blob_id, ordinal)) FROM chunks") == sent);
  CHECK(count(database, "SELECT count(*) FROM blob_texts") == 40);
  CHECK(count(database, "SELECT chunks FROM model_stats") == sent);
  CHECK(count(database, "SELECT chunks FROM term_stats WHERE term = 'request'") == sent);
  CHECK(count(database, "SELECT count(*) FROM chunks c LEFT JOIN chunk_codes k USING (blob_id, model_id, ordinal) "
                        "WHERE k.code IS NULL OR c.vector IS NULL") == 0);
}

}  // namespace kasava::e2e
