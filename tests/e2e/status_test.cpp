// End-to-end: `kasava status` and `status --json` — files, chunks, languages, the indexed
// commit, and stale files (0 after indexing, more after an edit, back to 0 after a refresh).
#include <catch2/catch.hpp>

#include "tests/e2e/harness.hpp"

using namespace kasava::e2e;
using kasava::util::JsonValue;

namespace {

JsonValue status_json(const FixtureRepo& repo) {
  const RunResult run = repo.kasava({"status", "--json"});
  INFO(describe(run));
  REQUIRE(run.exit_code == 0);
  CHECK(run.err.empty());
  return parse_json_output(run.out);
}

}  // namespace

TEST_CASE("status --json: files, chunks, languages and the commit after indexing") {
  FixtureRepo repo;
  write_sample_project(repo);
  const std::string commit = repo.commit_all("sample");
  const RunResult index = repo.kasava({"index", "--json"});
  INFO(describe(index));
  REQUIRE(index.exit_code == 0);
  const JsonValue summary = parse_json_output(index.out);

  const JsonValue status = status_json(repo);
  CHECK(status["files"].get_integer() == static_cast<std::int64_t>(sample_file_count()));
  CHECK(status["chunks"] == summary["chunks"]);
  CHECK(status["commit"].as_string() == commit);
  CHECK(status["root"].as_string() == repo.root());
  CHECK(status["index"].as_string() == repo.index_path());
  CHECK(status["stale_files"].get_integer() == 0);
  CHECK(status["index_bytes"].get_integer().value_or(0) > 0);
  CHECK(status["source_bytes"].get_integer().value_or(0) > 0);
  REQUIRE(status["languages"].is_object());
  std::int64_t per_language_total = 0;
  for (const auto& member : status["languages"].as_object())
    per_language_total += member.value.as_integer();
  CHECK(per_language_total == static_cast<std::int64_t>(sample_file_count()));
  for (const char* language : {"python", "go", "typescript", "rust", "java", "c", "markdown"}) {
    INFO("language " << language);
    CHECK(status["languages"][language].get_integer().value_or(0) >= 1);
  }
  CHECK(status["languages"]["python"].get_integer() == 2);
}

TEST_CASE("status: stale files count edits, new and deleted files until the next refresh") {
  FixtureRepo repo;
  write_sample_project(repo);
  repo.commit_all("sample");
  REQUIRE(repo.kasava({"index"}).exit_code == 0);
  CHECK(status_json(repo)["stale_files"].get_integer() == 0);

  repo.append("src/lib.rs", "\npub fn another() {}\n");
  CHECK(status_json(repo)["stale_files"].get_integer() == 1);
  repo.write("src/new_module.py", "def brand_new():\n    pass\n");
  repo.remove("docs/deploy.md");
  CHECK(status_json(repo)["stale_files"].get_integer() == 3);

  // status only looks; it does not refresh.
  CHECK(status_json(repo)["stale_files"].get_integer() == 3);
  // ask refreshes, after which nothing is stale.
  REQUIRE(repo.kasava({"ask", "brand_new"}).exit_code == 0);
  CHECK(status_json(repo)["stale_files"].get_integer() == 0);

  // An edit that is reverted is not stale.
  const std::string original = repo.read("src/cli.py");
  repo.write("src/cli.py", original + "# temporary\n");
  repo.write("src/cli.py", original);
  CHECK(status_json(repo)["stale_files"].get_integer() == 0);
}

TEST_CASE("status: the human form names files, chunks, languages and whether it is up to date") {
  FixtureRepo repo;
  write_sample_project(repo);
  repo.commit_all("sample");
  REQUIRE(repo.kasava({"index"}).exit_code == 0);
  const RunResult run = repo.kasava({"status"});
  INFO(describe(run));
  REQUIRE(run.exit_code == 0);
  CHECK(run.err.empty());
  CHECK_FALSE(has_ansi_escapes(run.out));
  CHECK_THAT(run.out, Catch::Contains(std::to_string(sample_file_count()) + " indexed"));
  CHECK_THAT(run.out, Catch::Contains("python 2"));
  CHECK_THAT(run.out, Catch::Contains("go 1"));
  CHECK_THAT(run.out, Catch::Contains("up to date"));
  CHECK_THAT(run.out, Catch::Contains(repo.index_path()));

  repo.append("src/cli.py", "# edited\n");
  const RunResult stale = repo.kasava({"status"});
  INFO(describe(stale));
  REQUIRE(stale.exit_code == 0);
  CHECK_THAT(stale.out, Catch::Contains("1 files changed since indexed") ||
                            Catch::Contains("1 file changed since indexed"));
}

TEST_CASE("status: from a subdirectory of an indexed repository") {
  FixtureRepo repo;
  write_sample_project(repo);
  repo.commit_all("sample");
  REQUIRE(repo.kasava({"index"}).exit_code == 0);
  RunOptions sub;
  sub.cwd = repo.path("internal/config");
  const RunResult run = repo.kasava({"status", "--json"}, sub);
  INFO(describe(run));
  REQUIRE(run.exit_code == 0);
  CHECK(parse_json_output(run.out)["files"].get_integer() ==
        static_cast<std::int64_t>(sample_file_count()));
}

TEST_CASE("status: in a repository never indexed, says to run kasava index") {
  FixtureRepo repo;
  write_sample_project(repo);
  repo.commit_all("sample");
  const RunResult run = repo.kasava({"status"});
  INFO(describe(run));
  CHECK(run.exit_code == 2);
  CHECK(run.out.empty());
  CHECK(lines_of(run.err).size() == 1);
  CHECK_THAT(run.err, Catch::StartsWith("kasava: error: ") && Catch::Contains("kasava index"));
}

TEST_CASE("status --json after index --rev reports the revision and no stale count") {
  FixtureRepo repo;
  write_sample_project(repo);
  const std::string first = repo.commit_all("first");
  repo.write("src/more.py", "def more():\n    pass\n");
  repo.commit_all("second");
  REQUIRE(repo.kasava({"index", "--rev", "HEAD~1"}).exit_code == 0);
  const JsonValue status = status_json(repo);
  CHECK(status["commit"].as_string() == first);
  CHECK(status["revision"].as_string() == "HEAD~1");
  CHECK(status["files"].get_integer() == static_cast<std::int64_t>(sample_file_count()));
  CHECK(status["stale_files"].is_null());
}
