// End-to-end: how `ask` finds its index — walking up from a subdirectory, --index and
// KASAVA_INDEX, a copied index.db without the source tree — and plain directories without git.
#include <catch2/catch.hpp>

#include <filesystem>

#include "tests/e2e/fixtures.hpp"
#include "tests/e2e/harness.hpp"
#include "tests/e2e/unprivileged.hpp"

using namespace kasava::e2e;
using kasava::util::JsonValue;

namespace fs = std::filesystem;

namespace {

const char* const k_query = "parseConfig";

// Checks that a run of `ask parseConfig --json` found the Go function.
void check_found_parse_config(const RunResult& run) {
  INFO(describe(run));
  REQUIRE(run.exit_code == 0);
  const JsonValue document = parse_json_output(run.out);
  check_ask_schema(document, k_query, nullptr);
  CHECK(document["results"][0]["symbol"].as_string() == "parseConfig");
  CHECK(document["results"][0]["path"].as_string() == "internal/config/config.go");
}

void check_error(const RunResult& run) {
  INFO(describe(run));
  CHECK(run.exit_code == 2);
  CHECK(run.out.empty());
  CHECK(lines_of(run.err).size() == 1);
  CHECK_THAT(run.err, Catch::StartsWith("kasava: error: "));
}

}  // namespace

TEST_CASE(
    "ask: from a subdirectory, finds the index by walking up, and paths stay relative to the root") {
  FixtureRepo repo;
  index_sample_project(repo);
  RunOptions deep;
  deep.cwd = repo.path("src/main/java/com");
  check_found_parse_config(repo.kasava({"ask", k_query, "--json"}, deep));
  // No second index appeared below the root.
  CHECK_FALSE(fs::exists(repo.path("src/main/java/com/.kasava")));
}

TEST_CASE("ask: in a repository never indexed, builds the index first") {
  FixtureRepo repo;
  write_sample_project(repo);
  repo.commit_all("sample");
  RunOptions sub;
  sub.cwd = repo.path("web/src");
  check_found_parse_config(repo.kasava({"ask", k_query, "--json"}, sub));
  CHECK(fs::is_regular_file(repo.index_path()));
  CHECK_THAT(repo.read(".git/info/exclude"), Catch::Contains(".kasava/"));
}

TEST_CASE("locate: --index and KASAVA_INDEX choose the index file, from any folder") {
  FixtureRepo repo;
  write_sample_project(repo);
  repo.commit_all("sample");
  TempDir elsewhere("elsewhere");
  const std::string custom = elsewhere / "custom.db";

  // `index` writes where --index says, and not into the repository.
  const RunResult index = repo.kasava({"--index", custom, "index"});
  INFO(describe(index));
  REQUIRE(index.exit_code == 0);
  CHECK(fs::is_regular_file(custom));
  CHECK_FALSE(fs::exists(repo.index_path()));

  RunOptions outside;
  outside.cwd = elsewhere.path();
  check_found_parse_config(run_kasava({"--index", custom, "ask", k_query, "--json"}, outside));
  check_found_parse_config(run_kasava({"--index=" + custom, "ask", k_query, "--json"}, outside));

  RunOptions with_env = outside;
  with_env.set_env("KASAVA_INDEX", custom);
  check_found_parse_config(run_kasava({"ask", k_query, "--json"}, with_env));

  // A relative --index is taken from the current folder.
  check_found_parse_config(run_kasava({"--index", "custom.db", "ask", k_query, "--json"}, outside));
}

TEST_CASE("locate: --index naming a missing file is an error that says to run kasava index") {
  TempDir empty("empty");
  RunOptions options;
  options.cwd = empty.path();
  const RunResult run = run_kasava({"--index", "missing.db", "ask", "anything"}, options);
  check_error(run);
  CHECK_THAT(run.err, Catch::Contains("missing.db") && Catch::Contains("kasava index"));
}

TEST_CASE("ask: a copy of index.db works alone, without the source tree") {
  TempDir artifacts("artifact");
  std::string copy;
  {
    FixtureRepo repo;
    index_sample_project(repo);
    copy = copy_index(repo, artifacts);
  }  // the repository is gone now

  RunOptions options;
  options.cwd = artifacts.path();
  check_found_parse_config(run_kasava({"--index", copy, "ask", k_query, "--json"}, options));
  // Without refreshing, explicitly, too.
  check_found_parse_config(
      run_kasava({"--index", copy, "ask", k_query, "--json", "--no-refresh"}, options));
  // Human output works from the stored text: the code lines are there.
  const RunResult human = run_kasava({"--index", copy, "ask", k_query}, options);
  INFO(describe(human));
  REQUIRE(human.exit_code == 0);
  CHECK_THAT(human.out, Catch::Contains("func parseConfig(path string) (*Config, error) {"));
  // Status works too and cannot know what is stale.
  const RunResult status = run_kasava({"--index", copy, "status", "--json"}, options);
  INFO(describe(status));
  REQUIRE(status.exit_code == 0);
  const JsonValue document = parse_json_output(status.out);
  CHECK(document["files"].get_integer() == static_cast<std::int64_t>(sample_file_count()));
  CHECK(document["stale_files"].is_null());
}

TEST_CASE("ask: a copy of index.db in a read-only folder works while the source tree exists") {
  FixtureRepo repo;
  index_sample_project(repo);
  TempDir artifacts("readonly");
  const std::string copy = copy_index(repo, artifacts);
  // Read-only to its reader: as root (whom permissions do not stop) the reader is nobody.
  open_to_others(repo.root());
  make_read_only(copy, artifacts.path());
  // The source changed since: ask would like to refresh, cannot write, and answers anyway.
  repo.append("src/cli.py", "\n# touched\n");
  const UnprivilegedReader reader(repo.root());
  const RunResult run = reader.run({"--index", copy, "ask", k_query, "--json"});
  check_found_parse_config(run);
  // At most a warning, never an error, and nothing left beside the copy.
  CHECK(run.err.find("kasava: error") == std::string::npos);
  CHECK_FALSE(fs::exists(copy + "-wal"));
  CHECK_FALSE(fs::exists(copy + "-shm"));
  fs::permissions(artifacts.path(), fs::perms::owner_all);
}

TEST_CASE("index DIR: a plain directory without git is indexed, ask finds it from inside") {
  FixtureRepo dir(GitInit::no);
  write_sample_project(dir);
  TempDir elsewhere("cwd");
  RunOptions outside;
  outside.cwd = elsewhere.path();
  const RunResult index = run_kasava({"index", dir.root(), "--json"}, outside);
  INFO(describe(index));
  REQUIRE(index.exit_code == 0);
  const JsonValue summary = parse_json_output(index.out);
  CHECK(summary["files"].get_integer() == static_cast<std::int64_t>(sample_file_count()));
  CHECK(summary["commit"].as_string().empty());
  CHECK(fs::is_regular_file(dir.index_path()));
  CHECK_FALSE(fs::exists(dir.path(".git")));

  RunOptions inside;
  inside.cwd = dir.path("internal");
  check_found_parse_config(run_kasava({"ask", k_query, "--json"}, inside));

  // Edits are picked up here too.
  dir.write("notes.txt", "the walrus_protocol_handshake is documented here\n");
  const RunResult run = run_kasava({"ask", "walrus_protocol_handshake", "--json"}, inside);
  INFO(describe(run));
  REQUIRE(run.exit_code == 0);
  CHECK(parse_json_output(run.out)["results"][0]["path"].as_string() == "notes.txt");
}

TEST_CASE("index: a relative target path is resolved from the current folder") {
  FixtureRepo repo;
  write_sample_project(repo);
  repo.commit_all("sample");
  RunOptions parent;
  parent.cwd = fs::path(repo.root()).parent_path().string();
  const std::string name = fs::path(repo.root()).filename().string();
  const RunResult run = run_kasava({"index", name, "--json"}, parent);
  INFO(describe(run));
  REQUIRE(run.exit_code == 0);
  CHECK(parse_json_output(run.out)["root"].as_string() == repo.root());
  CHECK(fs::is_regular_file(repo.index_path()));
}
