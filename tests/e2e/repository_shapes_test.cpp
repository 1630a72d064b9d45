// End-to-end: repositories of less common shapes — indexed from a subdirectory, linked
// worktrees, submodules and nested repositories (never entered), CRLF files, file names with
// spaces and non-ASCII letters, and a plain directory holding its own .kasava/.
#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>

#include "tests/e2e/harness.hpp"

using namespace kasava::e2e;
using kasava::util::JsonValue;

namespace fs = std::filesystem;

namespace {

JsonValue index_json(const FixtureRepo& repo, const RunOptions& options = {}) {
  const RunResult run = repo.kasava({"index", "--json"}, options);
  INFO(describe(run));
  REQUIRE(run.exit_code == 0);
  return parse_json_output(run.out);
}

std::vector<std::string> ask_paths(const FixtureRepo& repo, const std::string& query) {
  const RunResult run = repo.kasava({"ask", query, "--json", "--limit", "50"});
  INFO(describe(run));
  REQUIRE((run.exit_code == 0 || run.exit_code == 1));
  return result_paths(parse_json_output(run.out));
}

bool contains(const std::vector<std::string>& paths, const std::string& path) {
  return std::find(paths.begin(), paths.end(), path) != paths.end();
}

}  // namespace

TEST_CASE("index: run from a subdirectory, indexes the whole repository at its root") {
  FixtureRepo repo;
  write_sample_project(repo);
  repo.commit_all("sample");
  RunOptions sub;
  sub.cwd = repo.path("src/billing");
  const JsonValue summary = index_json(repo, sub);
  CHECK(summary["root"].as_string() == repo.root());
  CHECK(summary["files"].get_integer() == static_cast<std::int64_t>(sample_file_count()));
  CHECK(fs::is_regular_file(repo.index_path()));
  CHECK_FALSE(fs::exists(repo.path("src/billing/.kasava")));
}

TEST_CASE("index: in a linked worktree, .kasava/ stays out of git status") {
  FixtureRepo repo;
  write_sample_project(repo);
  repo.commit_all("sample");
  TempDir linked_parent("worktree");
  const std::string linked = linked_parent / "linked";
  repo.git({"worktree", "add", "-q", "-b", "feature", linked});
  REQUIRE(fs::is_regular_file(linked + "/.git"));  // a worktree's .git is a file

  RunOptions in_linked;
  in_linked.cwd = linked;
  const RunResult index = run_kasava({"index", "--json"}, in_linked);
  INFO(describe(index));
  REQUIRE(index.exit_code == 0);
  CHECK(parse_json_output(index.out)["root"].as_string() == linked);
  CHECK(fs::is_regular_file(linked + "/.kasava/index.db"));

  const RunResult status = run_program("git", {"status", "--porcelain"}, in_linked);
  INFO(describe(status));
  REQUIRE(status.exit_code == 0);
  CHECK(status.out.find(".kasava") == std::string::npos);

  const RunResult ask = run_kasava({"ask", "parseConfig", "--json"}, in_linked);
  INFO(describe(ask));
  REQUIRE(ask.exit_code == 0);
  CHECK(parse_json_output(ask.out)["results"][0]["path"].as_string() ==
        "internal/config/config.go");
}

TEST_CASE("index: a submodule is not entered, and counted as skipped") {
  FixtureRepo library;
  library.write("lib.py", "def library_submodule_function():\n    return 1\n");
  library.commit_all("library");
  FixtureRepo repo;
  write_sample_project(repo);
  repo.git({"-c", "protocol.file.allow=always", "submodule", "add", "-q", library.root(),
            "vendor/library"});
  repo.commit_all("with submodule");
  REQUIRE(repo.exists("vendor/library/lib.py"));

  const JsonValue summary = index_json(repo);
  CHECK(summary["skipped_by_reason"]["submodule"].get_integer() == 1);
  // The sample files plus .gitmodules; nothing from inside the submodule.
  CHECK(summary["indexed"].get_integer() == static_cast<std::int64_t>(sample_file_count()) + 1);
  CHECK_FALSE(contains(ask_paths(repo, "library_submodule_function"), "vendor/library/lib.py"));
}

TEST_CASE("index: an untracked nested git repository is not entered") {
  FixtureRepo repo;
  write_sample_project(repo);
  repo.commit_all("sample");
  repo.write("nested/inner.py", "def nested_repository_function():\n    return 1\n");
  repo.git({"-C", "nested", "init", "-q"});

  index_json(repo);
  CHECK_FALSE(contains(ask_paths(repo, "nested_repository_function"), "nested/inner.py"));
}

TEST_CASE("ask: lines of a CRLF file are numbered like the file's lines") {
  FixtureRepo repo;
  repo.write("crlf.py",
             "import os\r\n\r\n\r\ndef crlf_first_function():\r\n    return 1\r\n\r\n\r\n"
             "def crlf_second_function():\r\n    return 2\r\n");
  repo.commit_all("crlf");
  const RunResult run = repo.kasava({"ask", "crlf_second_function", "--json"});
  INFO(describe(run));
  REQUIRE(run.exit_code == 0);
  const JsonValue best = parse_json_output(run.out)["results"][0];
  CHECK(best["symbol"].as_string() == "crlf_second_function");
  CHECK(best["start_line"].get_integer() == 8);
  CHECK(best["end_line"].get_integer() == 9);

  const RunResult human = repo.kasava({"ask", "crlf_second_function"});
  INFO(describe(human));
  REQUIRE(human.exit_code == 0);
  CHECK_THAT(human.out, Catch::Contains("crlf.py:8-9"));
  CHECK(human.out.find('\r') == std::string::npos);
}

TEST_CASE("ask: file names with spaces and non-ASCII letters come back exactly") {
  FixtureRepo repo;
  const std::string name = "docs/r\xC3\xA9sum\xC3\xA9 notes/hello world.py";
  repo.write(name, "def spaced_unicode_path_function():\n    return 1\n");
  repo.commit_all("odd names");
  const auto paths = ask_paths(repo, "spaced_unicode_path_function");
  REQUIRE_FALSE(paths.empty());
  CHECK(paths.front() == name);

  const RunResult human = repo.kasava({"ask", "spaced_unicode_path_function"});
  INFO(describe(human));
  CHECK_THAT(human.out, Catch::StartsWith(name + ":1-2"));
}

TEST_CASE("index: a plain directory's own .kasava/ is never indexed") {
  FixtureRepo dir(GitInit::no);
  write_sample_project(dir);
  const JsonValue first = index_json(dir);
  const JsonValue second = index_json(dir);
  CHECK(second["files"] == first["files"]);
  CHECK(second["files"].get_integer() == static_cast<std::int64_t>(sample_file_count()));
  CHECK(second["skipped"].get_integer() == 0);
  CHECK(second["parsed"].get_integer() == 0);
}

TEST_CASE("index: a git repository's .git folder and .kasava/ are never indexed") {
  FixtureRepo repo;
  write_sample_project(repo);
  repo.commit_all("sample");
  index_json(repo);
  const JsonValue again = index_json(repo);
  CHECK(again["files"].get_integer() == static_cast<std::int64_t>(sample_file_count()));
  // "sample" is the commit message, in .git/ only.
  CHECK(ask_paths(repo, "COMMIT_EDITMSG HEAD refs").empty());
}

TEST_CASE("index and ask: a split index (core.splitIndex) is read with its shared index") {
  FixtureRepo repo;
  write_sample_project(repo);
  repo.commit_all("sample");
  repo.git({"config", "core.splitIndex", "true"});
  repo.git({"config", "core.untrackedCache", "true"});
  repo.git({"update-index", "--split-index", "--untracked-cache"});
  // Changes the shared index does not hold: an addition, a staged edit, a removal.
  repo.write("src/split_added.py", "def split_index_added_function():\n    return 1\n");
  repo.git({"add", "src/split_added.py"});
  repo.write("internal/config/config.go",
             "package config\n\nfunc splitIndexEditedConfig() int { return 2 }\n");
  repo.git({"add", "internal/config/config.go"});
  repo.git({"rm", "-q", "--cached", "docs/deploy.md"});
  REQUIRE(run_program("git", {"-C", repo.root(), "status", "--porcelain"}).exit_code == 0);

  const JsonValue summary = index_json(repo);
  // The sample files (docs/deploy.md now untracked, still listed) and the new one.
  CHECK(summary["files"].get_integer() == static_cast<std::int64_t>(sample_file_count()) + 1);
  CHECK(contains(ask_paths(repo, "split_index_added_function"), "src/split_added.py"));
  CHECK(contains(ask_paths(repo, "splitIndexEditedConfig"), "internal/config/config.go"));

  // Nothing changed: the second run reads nothing (the listing is the same).
  const JsonValue again = index_json(repo);
  CHECK(again["parsed"].get_integer() == 0);
  CHECK(again["files"] == summary["files"]);
}
