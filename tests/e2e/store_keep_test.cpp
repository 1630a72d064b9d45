// End-to-end tests of keeping the shared PostgreSQL store (tests/support/postgres_server.hpp):
// `kasava unpublish` removing a ref or a repository with exactly the blobs nothing else
// references, and waiting for a publish that is between its presence check and its swap;
// `kasava verify --store [--repair]` finding and fixing damage; a server stopped mid-publish.
// Pauses are made certain with row locks another session holds and by watching pg_locks and
// pg_stat_activity, never by sleeping for a while.
#include <catch2/catch.hpp>

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <thread>

#include "tests/e2e/background.hpp"
#include "tests/e2e/harness.hpp"
#include "tests/e2e/store_runs.hpp"
#include "tests/support/postgres_server.hpp"

namespace kasava::e2e {

namespace {

using test_support::PostgresServer;

// The statistics rows that differ from what the chunks give (0 when kept exactly).
std::int64_t statistics_drift(const std::string& database) {
  return count(database,
               "WITH a AS (SELECT c.model_id, x.term, count(*) AS n FROM chunks c, jsonb_object_keys(c.terms) x(term) "
               "GROUP BY 1, 2) SELECT count(*) FROM a FULL JOIN term_stats s ON s.model_id = a.model_id AND "
               "s.term = a.term WHERE coalesce(a.n, 0) <> coalesce(s.chunks, 0)") +
         count(database,
               "WITH a AS (SELECT model_id, count(*) AS n, sum(length) AS t FROM chunks GROUP BY 1) "
               "SELECT count(*) FROM model_stats m LEFT JOIN a ON a.model_id = m.model_id "
               "WHERE coalesce(a.n, 0) <> m.chunks OR coalesce(a.t, 0) <> m.tokens");
}

} // namespace

TEST_CASE("store keep: unpublish removes a ref, then a repository, with exactly the blobs "
          "nothing else references", "[store]") {
  PostgresServer& server = PostgresServer::shared();
  const std::string database = server.create_database("unpublish");
  const std::string uri = server.uri(database);
  FixtureRepo app;
  write_project(app, "app.py", "def app_main():\n    return 1\n");
  publish_as(app, uri, "acme/app");
  app.git({"checkout", "-q", "-b", "feature"});
  app.write("app.py", "def app_main():\n    \"\"\"The featured one.\"\"\"\n    return 2\n");
  app.commit_all("feature");
  publish_as(app, uri, "acme/app");
  FixtureRepo fork;
  write_project(fork, "fork.py", "def fork_only():\n    return 'fork'\n");
  publish_as(fork, uri, "someone/app");
  const std::int64_t blobs = count(database, "SELECT count(*) FROM blobs");
  const std::int64_t chunks = count(database, "SELECT count(*) FROM chunks");
  const std::int64_t feature_chunks = count(
      database, "SELECT b.chunks FROM blobs b JOIN snapshot_files s ON s.blob_id = b.blob_id JOIN refs f "
                "ON f.id = s.ref_id WHERE f.name = 'feature' AND s.path = 'app.py'");
  REQUIRE(statistics_drift(database) == 0);

  // The feature ref: only its own app.py goes; the files it shares with main stay.
  const RunResult ref = run_checked(app, {"unpublish", "--store", uri, "acme/app", "--ref", "feature"});
  REQUIRE(ref.exit_code == 0);
  CHECK(lines_of(ref.out).size() == 1);
  CHECK(ref.out.find("removed acme/app ref feature from 127.0.0.1:" + std::to_string(server.port()) +
                     ": 1 blob, " + std::to_string(feature_chunks) + " chunk") != std::string::npos);
  CHECK(count(database, "SELECT count(*) FROM refs") == 2);
  CHECK(count(database, "SELECT count(*) FROM blobs") == blobs - 1);
  CHECK(count(database, "SELECT count(*) FROM blob_texts") == blobs - 1);
  CHECK(count(database, "SELECT count(*) FROM chunks") == chunks - feature_chunks);
  CHECK(statistics_drift(database) == 0);

  // The whole repository: its app.py goes, the files the fork shares stay.
  const RunResult whole = run_checked(app, {"unpublish", "--store", uri, "acme/app"});
  REQUIRE(whole.exit_code == 0);
  CHECK(whole.out.find("removed acme/app ref main and the repository") != std::string::npos);
  CHECK(whole.out.find(": 1 blob,") != std::string::npos);
  CHECK(count(database, "SELECT count(*) FROM repositories") == 1);
  CHECK(count(database, "SELECT count(*) FROM blobs") == blobs - 2);
  CHECK(count(database, "SELECT count(*) FROM snapshot_files s WHERE NOT EXISTS (SELECT 1 FROM blobs b "
                        "WHERE b.blob_id = s.blob_id)") == 0);
  CHECK(statistics_drift(database) == 0);
  const RunResult verified = run_checked(app, {"verify", "--store", uri});
  CHECK(verified.exit_code == 0);
  CHECK(verified.out.find("orphans: none") != std::string::npos);

  // What is not there: one line, exit 1, nothing removed.
  const RunResult unknown = run_checked(app, {"unpublish", "--store", uri, "acme/nothing"});
  CHECK(unknown.exit_code == 1);
  CHECK(lines_of(unknown.err).size() == 1);
  CHECK(unknown.err.find("no repository 'acme/nothing'") != std::string::npos);
  const RunResult no_ref = run_checked(app, {"unpublish", "--store", uri, "someone/app", "--ref", "nope"});
  CHECK(no_ref.exit_code == 1);
  CHECK(lines_of(no_ref.err).size() == 1);
  CHECK(no_ref.err.find("has no ref 'nope'") != std::string::npos);
  CHECK(count(database, "SELECT count(*) FROM refs") == 1);

  // The last one, through KASAVA_STORE: the store is then empty, statistics at zero.
  RunOptions environment;
  environment.set_env("KASAVA_STORE", uri);
  const RunResult last = app.kasava({"unpublish", "someone/app"}, environment);
  CHECK(last.exit_code == 0);
  CHECK(count(database, "SELECT count(*) FROM blobs") + count(database, "SELECT count(*) FROM chunks") +
            count(database, "SELECT count(*) FROM blob_texts") + count(database, "SELECT count(*) FROM term_stats") ==
        0);
  CHECK(count(database, "SELECT sum(chunks) + sum(tokens) FROM model_stats") == 0);
}

TEST_CASE("store keep: an unpublish waits for a publish between its presence check and its "
          "swap, and keeps the blobs that publish counted on", "[store]") {
  PostgresServer& server = PostgresServer::shared();
  const std::string database = server.create_database("unpublish_race");
  const std::string uri = server.uri(database);
  // acme/old holds the project; acme/new first holds something else, then the same project:
  // its second publish finds every blob present and sends none.
  FixtureRepo old_repo;
  write_project(old_repo, "a.py", "def a():\n    return 1\n");
  publish_as(old_repo, uri, "acme/old");
  FixtureRepo new_repo;
  new_repo.write("other.py", "def other():\n    return 'other'\n");
  new_repo.commit_all("other");
  publish_as(new_repo, uri, "acme/new");
  ::unlink(new_repo.path("other.py").c_str());
  write_project(new_repo, "a.py", "def a():\n    return 1\n");

  // acme/new's repository row held: its publisher checks, then waits at its swap.
  const pid_t locker = hold_lock(database, "SELECT 1 FROM repositories WHERE name = 'acme/new' FOR UPDATE");
  wait_for(database, "SELECT count(*) FROM pg_stat_activity WHERE application_name = 'psql' "
                     "AND query LIKE '%pg_sleep(300)%' AND state = 'active' "
                     "AND pid <> pg_backend_pid()");
  TempDir logs("logs");
  BackgroundKasava publisher({"index", "--store", uri, "--name", "acme/new"}, new_repo.root(), logs / "publish");
  wait_for(database, "SELECT count(*) FROM pg_stat_activity WHERE application_name = 'kasava' "
                     "AND wait_event_type = 'Lock' AND query LIKE 'INSERT INTO repositories%'");
  // The unpublish of acme/old (the only snapshot holding those blobs so far) must wait.
  BackgroundKasava remover({"unpublish", "--store", uri, "acme/old"}, new_repo.root(), logs / "unpublish");
  wait_for(database, "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND mode = 'ExclusiveLock' "
                     "AND NOT granted");
  CHECK(count(database, "SELECT count(*) FROM repositories WHERE name = 'acme/old'") == 1);
  release_lock(database, locker);
  const int published = publisher.wait();
  const int removed = remover.wait();
  INFO(publisher.err() << remover.err());
  CHECK(published == 0);
  CHECK(removed == 0);
  CHECK(remover.out().find("removed acme/old ref main and the repository") != std::string::npos);
  // Every blob acme/new names is still there.
  CHECK(count(database, "SELECT count(*) FROM repositories") == 1);
  CHECK(count(database, "SELECT count(*) FROM snapshot_files s WHERE NOT EXISTS (SELECT 1 FROM blobs b "
                        "WHERE b.blob_id = s.blob_id)") == 0);
  CHECK(count(database, "SELECT count(*) FROM snapshot_files") ==
        static_cast<std::int64_t>(sample_file_count()) + 1);
  const RunResult verified = run_checked(new_repo, {"verify", "--store", uri});
  CHECK(verified.exit_code == 0);
}

TEST_CASE("store keep: verify --store finds stale statistics, orphans and damaged blobs, "
          "--repair fixes them, and a publish brings back what it removed", "[store]") {
  PostgresServer& server = PostgresServer::shared();
  const std::string database = server.create_database("verify_store");
  const std::string uri = server.uri(database);
  FixtureRepo repo;
  write_project(repo, "a.py", "def a():\n    \"\"\"First.\"\"\"\n    return 1\n\n\ndef b():\n    return 2\n");
  publish_as(repo, uri, "acme/app");
  const RunResult clean = run_checked(repo, {"verify", "--store", uri});
  CHECK(clean.exit_code == 0);
  CHECK(clean.out.find("references: ok") != std::string::npos);
  CHECK(clean.out.find("statistics: ok") != std::string::npos);

  // Stale statistics and an orphan: a ref's row deleted by hand leaves its own blob behind.
  repo.git({"checkout", "-q", "-b", "feature"});
  repo.write("b.py", "def feature_only():\n    return 'b'\n");
  repo.commit_all("feature");
  publish_as(repo, uri, "acme/app");
  repo.git({"checkout", "-q", "main"});
  server.psql(database, "DELETE FROM refs WHERE name = 'feature'");
  server.psql(database, "UPDATE term_stats SET chunks = chunks + 5 WHERE term = (SELECT min(term) FROM term_stats)");
  const RunResult stale = run_checked(repo, {"verify", "--store", uri});
  CHECK(stale.exit_code == 1);
  CHECK(stale.out.find("stale: 1 term count") != std::string::npos);
  CHECK(stale.out.find("orphans: 1 blob, 0 texts") != std::string::npos);  // its blob row still names its text
  const RunResult repaired = run_checked(repo, {"verify", "--store", uri, "--repair"});
  CHECK(repaired.exit_code == 0);
  CHECK(repaired.out.find("repaired: 1 blob, 1 chunk, 1 text removed") != std::string::npos);
  CHECK(repaired.out.find("statistics recomputed") != std::string::npos);
  CHECK(statistics_drift(database) == 0);
  CHECK(count(database, "SELECT count(*) FROM blobs") == static_cast<std::int64_t>(sample_file_count()) + 1);

  // A damaged blob (a chunk gone, a vector cut short): removed by --repair, and the ref then
  // lacks it, which only a publish can bring back.
  server.psql(database, "DELETE FROM chunks WHERE (blob_id, ordinal) = (SELECT blob_id, max(ordinal) FROM chunks "
                        "GROUP BY blob_id HAVING count(*) > 1 ORDER BY blob_id LIMIT 1)");
  const RunResult damaged = run_checked(repo, {"verify", "--store", uri, "--json"});
  CHECK(damaged.exit_code == 1);
  CHECK(parse_json_output(damaged.out).find("damaged_blobs")->get_integer() == 1);
  const RunResult half = run_checked(repo, {"verify", "--store", uri, "--repair"});
  CHECK(half.exit_code == 2);
  CHECK(lines_of(half.err).size() == 1);
  CHECK(half.err.find("still damaged after repair: publish again acme/app main") != std::string::npos);
  CHECK(half.out.find("missing: acme/app main: 1 blob not stored") != std::string::npos);
  publish_as(repo, uri, "acme/app");
  const RunResult whole = run_checked(repo, {"verify", "--store", uri});
  CHECK(whole.exit_code == 0);
  CHECK(statistics_drift(database) == 0);
}

TEST_CASE("store keep: the server stopped mid-publish is exit 2 and one line naming it, the "
          "local index is intact and the next run publishes", "[store]") {
  PostgresServer& server = PostgresServer::shared();
  const std::string database = server.create_database("stopped");
  const std::string uri = server.uri(database);
  const std::string place = "127.0.0.1:" + std::to_string(server.port());
  FixtureRepo repo;
  write_project(repo, "a.py", "def a():\n    return 1\n");
  publish_as(repo, uri, "acme/stop");
  repo.write("a.py", "def a():\n    return 2\n");
  repo.commit_all("two");
  const std::string new_commit = repo.git({"rev-parse", "HEAD"}).substr(0, 40);

  const pid_t locker = hold_lock(database, "SELECT 1 FROM repositories WHERE name = 'acme/stop' FOR UPDATE");
  wait_for(database, "SELECT count(*) FROM pg_stat_activity WHERE application_name = 'psql' "
                     "AND query LIKE '%pg_sleep(300)%' AND state = 'active' "
                     "AND pid <> pg_backend_pid()");
  TempDir logs("logs");
  BackgroundKasava publisher({"index", "--store", uri, "--name", "acme/stop"}, repo.root(), logs / "publish");
  wait_for(database, "SELECT count(*) FROM pg_stat_activity WHERE application_name = 'kasava' "
                     "AND wait_event_type = 'Lock'");
  server.stop();
  const int code = publisher.wait();
  int status = 0;
  ::waitpid(locker, &status, 0);
  INFO(publisher.out() << publisher.err());
  CHECK(code == 2);
  CHECK(lines_of(publisher.err()).size() == 1);
  CHECK(publisher.err().find(place) != std::string::npos);
  CHECK(publisher.err().find(server.password()) == std::string::npos);
  CHECK(publisher.out().find("indexed") != std::string::npos);
  // The local index holds the new commit, whole, without the server.
  const RunResult local = run_checked(repo, {"status", "--json"});
  REQUIRE(local.exit_code == 0);
  CHECK(parse_json_output(local.out).find("commit")->as_string() == new_commit);
  const RunResult sound = run_checked(repo, {"verify"});
  CHECK(sound.exit_code == 0);

  server.resume();
  CHECK(server.psql(database, "SELECT commit_id FROM refs") != new_commit);
  publish_as(repo, uri, "acme/stop");
  CHECK(server.psql(database, "SELECT commit_id FROM refs") == new_commit);
  const RunResult verified = run_checked(repo, {"verify", "--store", uri});
  CHECK(verified.exit_code == 0);
}

TEST_CASE("store keep: a read-only role asks, and its publish or unpublish is one line saying "
          "what to do", "[store]") {
  PostgresServer& server = PostgresServer::shared();
  const std::string database = server.create_database("roles");
  FixtureRepo repo;
  write_project(repo, "app.py", "def app_main():\n    return 1\n");
  publish_as(repo, server.uri(database), "acme/app");
  // The README's reader: may connect and read the tables, nothing else.
  const std::string reader = database + "_reader";
  const std::string reader_password = "reader-" + server.password();
  server.psql(database, "CREATE ROLE " + reader + " LOGIN PASSWORD '" + reader_password + "'");
  server.psql(database, "GRANT SELECT ON ALL TABLES IN SCHEMA public TO " + reader);
  const std::string reader_uri = "postgresql://" + reader + ":" + reader_password + "@127.0.0.1:" +
                                 std::to_string(server.port()) + "/" + database;
  const auto check_quiet = [&](const RunResult& run) {
    CHECK(run.out.find(reader_password) == std::string::npos);
    CHECK(run.err.find(reader_password) == std::string::npos);
  };

  const RunResult asked = run_checked(repo, {"ask", "--store", reader_uri, "app main", "--json"});
  INFO(describe(asked));
  CHECK(asked.exit_code == 0);
  check_quiet(asked);

  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"unpublish", "--store", reader_uri, "acme/app"},
        std::vector<std::string>{"index", "--store", reader_uri, "--name", "acme/other"}}) {
    const RunResult refused = run_checked(repo, args);
    INFO(describe(refused));
    CHECK(refused.exit_code == 2);
    CHECK(lines_of(refused.err).size() == 1);
    CHECK(refused.err.find("permission denied") != std::string::npos);
    CHECK(refused.err.find("this role may not change the store") != std::string::npos);
    check_quiet(refused);
  }
  CHECK(count(database, "SELECT count(*) FROM repositories") == 1);
}

}  // namespace kasava::e2e
