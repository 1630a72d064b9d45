// End-to-end tests of `kasava ask --store` against a real server the tests start
// (tests/support/postgres_server.hpp): three repositories (one a fork of another) and two
// branches of one published, then asked across all, by --repo and by --ref, from a folder
// that is no repository; a fork's identical file is one result listing both; the store's top
// file is the local index's; another model is refused; a connection ended mid-ask is one
// line and exit 2, without hanging. Every run's output is searched for the password.
#include <catch2/catch.hpp>

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

const char* const k_billing =
    "def reconcile_ledger_entries(entries, statement):\n"
    "    \"\"\"Reconciles the ledger entries against the bank statement.\"\"\"\n"
    "    return [entry for entry in entries if entry not in statement]\n";

// The sample project with billing.py, committed.
void write_app(const FixtureRepo& repo) {
  write_sample_project(repo);
  repo.write("billing.py", k_billing);
  repo.commit_all("app");
}

// `ask --store … --json` from `where`; the parsed document.
util::JsonValue ask_json(const FixtureRepo& where, const std::string& uri, std::vector<std::string> more) {
  std::vector<std::string> args = {"ask", "--store", uri, "--json"};
  args.insert(args.end(), more.begin(), more.end());
  const RunResult result = run_checked(where, args);
  INFO(describe(result));
  REQUIRE(result.exit_code == 0);
  return parse_json_output(result.out);
}

std::string holders_of(const util::JsonValue& hit) {
  std::string text = hit["repository"].as_string() + "@" + hit["ref"].as_string();
  if (const util::JsonValue* also = hit.find("also_in")) {
    for (std::size_t i = 0; i < also->size(); ++i) text += " " + (*also)[i].as_string();
  }
  return text;
}

// A store with acme/app (main, then feature), its fork other/app-fork and acme/lib.
struct Organisation {
  std::string database;
  std::string uri;
  FixtureRepo app;
  FixtureRepo fork;
  FixtureRepo lib;
  FixtureRepo nowhere{GitInit::no};  // a folder with no repository and no index

  explicit Organisation(const std::string& name) {
    PostgresServer& server = PostgresServer::shared();
    database = server.create_database(name);
    uri = server.uri(database);
    write_app(app);
    publish_as(app, uri, "acme/app");
    app.git({"checkout", "-q", "-b", "feature"});
    app.write("feature.py", "def feature_flag_enabled(name):\n    return name in FLAGS\n");
    app.commit_all("feature");
    publish_as(app, uri, "acme/app");
    write_app(fork);
    fork.write("fork_only.py", "def fork_specific_patch():\n    return 'patched'\n");
    fork.commit_all("fork");
    publish_as(fork, uri, "other/app-fork");
    lib.write("lib.go", "package lib\n\n// Sum adds two numbers.\nfunc Sum(a, b int) int { return a + b }\n");
    lib.write("README.md", "# lib\n\nA library that sums.\n");
    lib.commit_all("lib");
    publish_as(lib, uri, "acme/lib");
  }
};

} // namespace

TEST_CASE("ask --store: every repository's latest ref, with --repo and --ref, and a fork's file is one "
          "result listing both", "[store][ask_store]") {
  Organisation org("ask_all");

  // All repositories, asked from a folder that is no repository: acme/app's latest ref is feature.
  const util::JsonValue all = ask_json(org.nowhere, org.uri, {"reconcile ledger bank statement"});
  check_ask_schema(all, "reconcile ledger bank statement", nullptr);
  const util::JsonValue& results = all["results"];
  REQUIRE(results.size() >= 1);
  CHECK(results[0]["path"].as_string() == "billing.py");
  CHECK(holders_of(results[0]) == "acme/app@feature other/app-fork@main");
  CHECK(results[0]["snippet"].as_string().find("reconcile_ledger_entries") != std::string::npos);
  for (std::size_t i = 0; i < results.size(); ++i) {  // collapsed: billing.py once
    if (i > 0) CHECK(results[i]["symbol"].as_string() != "reconcile_ledger_entries");
  }

  // --ref main: the three repositories' main.
  const util::JsonValue main = ask_json(org.nowhere, org.uri, {"reconcile ledger bank statement", "--ref", "main"});
  REQUIRE(main["results"].size() >= 1);
  CHECK(holders_of(main["results"][0]) == "acme/app@main other/app-fork@main");
  const util::JsonValue feature = ask_json(org.nowhere, org.uri, {"feature flag enabled", "--ref", "main"});
  for (std::size_t i = 0; i < feature["results"].size(); ++i) {
    CHECK(feature["results"][i]["path"].as_string() != "feature.py");  // only on the feature branch
  }
  const util::JsonValue on_feature = ask_json(org.nowhere, org.uri, {"feature flag enabled"});
  REQUIRE(on_feature["results"].size() >= 1);
  CHECK(on_feature["results"][0]["path"].as_string() == "feature.py");
  CHECK(holders_of(on_feature["results"][0]) == "acme/app@feature");

  // --repo: the fork alone, then the library alone.
  const util::JsonValue fork = ask_json(org.nowhere, org.uri, {"reconcile ledger bank statement", "--repo", "other/*"});
  REQUIRE(fork["results"].size() >= 1);
  for (std::size_t i = 0; i < fork["results"].size(); ++i) {
    CHECK(fork["results"][i]["repository"].as_string() == "other/app-fork");
    CHECK(fork["results"][i].find("also_in") == nullptr);
  }
  const util::JsonValue lib = ask_json(org.nowhere, org.uri, {"sum two numbers", "--repo", "acme/l*", "--repo", "x/*"});
  REQUIRE(lib["results"].size() >= 1);
  CHECK(lib["results"][0]["path"].as_string() == "lib.go");
  CHECK(lib["results"][0]["repository"].as_string() == "acme/lib");
  // One glob per --repo: the `--` after it still guards a question that starts with a dash, and
  // a second word is not taken as another glob.
  const util::JsonValue dashed = ask_json(org.nowhere, org.uri, {"--repo", "acme/lib", "--", "--sum two numbers"});
  CHECK(dashed["query"].as_string() == "--sum two numbers");
  REQUIRE(dashed["results"].size() >= 1);
  CHECK(dashed["results"][0]["repository"].as_string() == "acme/lib");
  const RunResult two = run_checked(org.nowhere, {"ask", "--store", org.uri, "--repo", "acme/lib", "x/*", "sum"});
  CHECK(two.exit_code == 2);
  CHECK(two.err.find("not expected: sum") != std::string::npos);

  // Nothing matched: one line naming what was asked.
  const RunResult none = run_checked(org.nowhere, {"ask", "--store", org.uri, "anything", "--repo", "nope/*"});
  CHECK(none.exit_code == 2);
  CHECK(lines_of(none.err).size() == 1);
  CHECK(none.err.find("no published ref of a repository matching --repo 'nope/*'") != std::string::npos);

  // The terminal view groups by repository, then file; a pipe names each place's repository.
  RunOptions terminal;
  terminal.stdout_mode = StdoutMode::terminal;
  terminal.set_env("NO_COLOR", "1");
  const RunResult grouped = run_checked(org.nowhere, {"ask", "--store", org.uri, "reconcile ledger"}, terminal);
  CHECK(grouped.exit_code == 0);
  CHECK(grouped.out.find("== acme/app@feature ==") != std::string::npos);
  CHECK(grouped.out.find("also in other/app-fork@main") != std::string::npos);
  const RunResult piped = run_checked(org.nowhere, {"ask", "--store", org.uri, "reconcile ledger"});
  CHECK(piped.out.find("acme/app@feature:billing.py:1-3") != std::string::npos);
}

TEST_CASE("ask --store: the store's top file is the local index's", "[store][ask_store]") {
  Organisation org("ask_same");
  for (const std::string query : {"reconcile ledger bank statement", "feature flag enabled", "reconcile_ledger_entries"}) {
    const RunResult local = run_checked(org.app, {"ask", "--json", query});
    REQUIRE(local.exit_code == 0);
    const util::JsonValue local_results = parse_json_output(local.out)["results"];
    const util::JsonValue stored = ask_json(org.nowhere, org.uri, {query, "--repo", "acme/app"});
    INFO(query);
    REQUIRE(local_results.size() >= 1);
    REQUIRE(stored["results"].size() >= 1);
    CHECK(stored["results"][0]["path"].as_string() == local_results[0]["path"].as_string());
    CHECK(stored["results"][0]["start_line"].get_integer() == local_results[0]["start_line"].get_integer());
    CHECK(stored["results"][0]["snippet"].as_string() == local_results[0]["snippet"].as_string());
    // Local output names no repository.
    CHECK(local_results[0].find("repository") == nullptr);
  }
  // --repo without --store is a usage error, not a silent local search.
  const RunResult stray = run_checked(org.app, {"ask", "anything", "--repo", "acme/*"});
  CHECK(stray.exit_code == 2);
  CHECK(stray.err.find("--store") != std::string::npos);
}

TEST_CASE("ask --store: a store of another model is refused with both ids", "[store][ask_store]") {
  PostgresServer& server = PostgresServer::shared();
  const std::string database = server.create_database("ask_model");
  const std::string uri = server.uri(database);
  FixtureRepo lib;
  lib.write("lib.go", "package lib\n\n// Sum adds two numbers.\nfunc Sum(a, b int) int { return a + b }\n");
  lib.commit_all("lib");
  publish_as(lib, uri, "acme/lib");
  server.psql(database, "UPDATE models SET name = 'someone-elses-model'");
  const RunResult refused = run_checked(lib, {"ask", "--store", uri, "sum"});
  CHECK(refused.exit_code == 2);
  CHECK(lines_of(refused.err).size() == 1);
  CHECK(refused.err.find("'someone-elses-model'") != std::string::npos);
  CHECK(refused.err.find("the model in use is '") != std::string::npos);
  // By words alone the model does not matter.
  const RunResult lexical = run_checked(lib, {"ask", "--store", uri, "sum", "--mode", "lexical", "--json"});
  CHECK(lexical.exit_code == 0);
}

TEST_CASE("ask --store: a connection ended mid-ask is one line and exit 2, not a hang",
          "[store][ask_store]") {
  PostgresServer& server = PostgresServer::shared();
  const std::string database = server.create_database("ask_cut");
  const std::string uri = server.uri(database);
  FixtureRepo lib;
  lib.write("lib.go", "package lib\n\n// Sum adds two numbers.\nfunc Sum(a, b int) int { return a + b }\n");
  lib.commit_all("lib");
  publish_as(lib, uri, "acme/lib");

  // Another session holds the chunks table, so the ask waits for it at its first search
  // statement; then the ask's own backend is ended, as a server restart ends it.
  std::thread locker([&] {
    try {
      server.psql(database, "BEGIN; LOCK TABLE chunks IN ACCESS EXCLUSIVE MODE; SELECT pg_sleep(60); COMMIT;");
    } catch (const std::exception&) {  // ended below
    }
  });
  const auto waiting = [&](const std::string& condition) {
    for (int i = 0; i < 400; ++i) {
      if (server.psql(database, "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND " +
                                    condition) != "0") {
        return true;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return false;
  };
  REQUIRE(waiting("query LIKE '%pg_sleep(60)%' AND pid <> pg_backend_pid()"));
  TempDir logs("ask-cut");
  BackgroundKasava ask({"ask", "--store", uri, "sum two numbers"}, lib.root(), logs / "ask");
  const bool blocked = waiting("wait_event_type = 'Lock'");
  server.psql(database, "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() "
                        "AND wait_event_type = 'Lock'");
  const int code = ask.wait();
  server.psql(database, "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() "
                        "AND query LIKE '%pg_sleep(60)%' AND pid <> pg_backend_pid()");
  locker.join();
  REQUIRE(blocked);
  INFO(ask.err());
  CHECK(code == 2);
  CHECK(lines_of(ask.err()).size() == 1);
  CHECK(ask.err().find("127.0.0.1:" + std::to_string(server.port())) != std::string::npos);
  CHECK(ask.err().find(server.password()) == std::string::npos);
  CHECK(ask.out().find(server.password()) == std::string::npos);
  CHECK(ask.seconds() < 30);
}

} // namespace kasava::e2e
