// End-to-end: the index follows the working tree — unchanged re-runs parse nothing, edits,
// deletions and untracked files show up in `ask` (auto-refresh), ignored files never do —
// and `--rev` indexes a commit's tree instead.
#include <catch2/catch.hpp>

#include "tests/e2e/harness.hpp"

using namespace kasava::e2e;
using kasava::util::JsonValue;

namespace {

JsonValue ask_json(const FixtureRepo& repo, const std::string& query,
                   std::vector<std::string> extra = {}) {
  std::vector<std::string> args = {"ask", query, "--json"};
  args.insert(args.end(), extra.begin(), extra.end());
  const RunResult run = repo.kasava(args);
  INFO(describe(run));
  REQUIRE((run.exit_code == 0 || run.exit_code == 1));
  const JsonValue document = parse_json_output(run.out);
  CHECK((run.exit_code == 1) == (document["results"].size() == 0));
  return document;
}

bool has_path(const JsonValue& document, const std::string& path) {
  for (const auto& found : result_paths(document)) {
    if (found == path) return true;
  }
  return false;
}

bool has_symbol(const JsonValue& document, const std::string& symbol) {
  for (const auto& result : document["results"].as_array()) {
    if (result["symbol"].as_string() == symbol) return true;
  }
  return false;
}

JsonValue index_json(const FixtureRepo& repo, std::vector<std::string> extra = {}) {
  std::vector<std::string> args = {"index", "--json"};
  args.insert(args.end(), extra.begin(), extra.end());
  const RunResult run = repo.kasava(args);
  INFO(describe(run));
  REQUIRE(run.exit_code == 0);
  return parse_json_output(run.out);
}

}  // namespace

TEST_CASE("index: a second run with nothing changed parses nothing") {
  FixtureRepo repo;
  write_sample_project(repo);
  repo.commit_all("sample");
  const JsonValue first = index_json(repo);
  const auto files = static_cast<std::int64_t>(sample_file_count());
  CHECK(first["parsed"].get_integer() == files);

  const JsonValue second = index_json(repo);
  CHECK(second["parsed"].get_integer() == 0);
  CHECK(second["unchanged"].get_integer() == files);
  CHECK(second["removed"].get_integer() == 0);
  CHECK(second["chunks_written"].get_integer() == 0);
  CHECK(second["indexed"].get_integer() == files);
  CHECK(second["chunks"] == first["chunks"]);
}

TEST_CASE("index: an uncommitted edit re-parses only that file") {
  FixtureRepo repo;
  write_sample_project(repo);
  repo.commit_all("sample");
  index_json(repo);
  repo.append("src/lib.rs", "\n/// Reverses the bytes.\npub fn reverse_bytes() {}\n");
  const JsonValue summary = index_json(repo);
  CHECK(summary["parsed"].get_integer() == 1);
  CHECK(summary["unchanged"].get_integer() == static_cast<std::int64_t>(sample_file_count()) - 1);
}

TEST_CASE("ask: refreshes the index first, so an uncommitted edit is found") {
  FixtureRepo repo;
  write_sample_project(repo);
  repo.commit_all("sample");
  REQUIRE(repo.kasava({"index"}).exit_code == 0);
  CHECK_FALSE(
      has_symbol(ask_json(repo, "quarantineSuspiciousUpload"), "quarantineSuspiciousUpload"));

  repo.append("internal/config/config.go",
              "\n// quarantineSuspiciousUpload moves an upload that failed the virus scan aside.\n"
              "func quarantineSuspiciousUpload(name string) error {\n\treturn nil\n}\n");
  const JsonValue found = ask_json(repo, "quarantineSuspiciousUpload");
  REQUIRE(found["results"].size() >= 1);
  CHECK(found["results"][0]["symbol"].as_string() == "quarantineSuspiciousUpload");
  CHECK(found["results"][0]["path"].as_string() == "internal/config/config.go");
  CHECK(found["results"][0]["start_line"].as_integer() >= 25);

  // --no-refresh searches the index as it is: after another edit, the new name is not there.
  repo.append("src/lib.rs", "\npub fn zebra_crossing_signal() {}\n");
  const JsonValue stale = ask_json(repo, "zebra_crossing_signal", {"--no-refresh"});
  CHECK_FALSE(has_symbol(stale, "zebra_crossing_signal"));
  CHECK(has_symbol(ask_json(repo, "zebra_crossing_signal"), "zebra_crossing_signal"));
}

TEST_CASE("ask: a deleted file's results disappear") {
  FixtureRepo repo;
  write_sample_project(repo);
  repo.commit_all("sample");
  REQUIRE(repo.kasava({"index"}).exit_code == 0);
  const std::string query = "CRC-32 checksum of a memory block";
  REQUIRE(has_path(ask_json(repo, query), "native/checksum.c"));

  repo.remove("native/checksum.c");  // deleted in the work tree, still in HEAD
  CHECK_FALSE(has_path(ask_json(repo, query), "native/checksum.c"));
  const JsonValue summary = index_json(repo);
  CHECK(summary["indexed"].get_integer() == static_cast<std::int64_t>(sample_file_count()) - 1);

  // Deleted and committed: still gone.
  repo.commit_all("remove checksum");
  CHECK_FALSE(has_path(ask_json(repo, query), "native/checksum.c"));
}

TEST_CASE("ask: a renamed file is found under its new path only") {
  FixtureRepo repo;
  write_sample_project(repo);
  repo.commit_all("sample");
  REQUIRE(repo.kasava({"index"}).exit_code == 0);
  repo.git({"mv", "src/lib.rs", "src/encoding.rs"});
  const JsonValue document = ask_json(repo, "run_length_encode");
  CHECK(has_path(document, "src/encoding.rs"));
  CHECK_FALSE(has_path(document, "src/lib.rs"));
}

TEST_CASE("ask: untracked files are searchable, files ignored by .gitignore are not") {
  FixtureRepo repo;
  write_sample_project(repo);
  repo.write(".gitignore", "build/\n*.log\n");
  repo.commit_all("sample");
  repo.write(
      "notes/untracked_helper.py",
      "def summarize_quarterly_revenue(rows):\n    \"\"\"Adds up revenue per quarter.\"\"\"\n"
      "    return sum(rows)\n");
  repo.write("build/generated_code.py", "def ignored_generated_marker():\n    return 1\n");
  repo.write("debug.log", "ignored_log_marker happened here\n");

  const JsonValue summary = index_json(repo);
  // The sample, .gitignore and the untracked helper; not the two ignored files.
  CHECK(summary["files"].get_integer() == static_cast<std::int64_t>(sample_file_count()) + 2);

  const JsonValue untracked = ask_json(repo, "summarize_quarterly_revenue");
  REQUIRE(untracked["results"].size() >= 1);
  CHECK(untracked["results"][0]["path"].as_string() == "notes/untracked_helper.py");

  CHECK_FALSE(has_path(ask_json(repo, "ignored_generated_marker"), "build/generated_code.py"));
  CHECK_FALSE(has_path(ask_json(repo, "ignored_log_marker"), "debug.log"));

  // Ignoring a file later drops it from the index.
  repo.write(".gitignore", "build/\n*.log\nnotes/\n");
  CHECK_FALSE(has_path(ask_json(repo, "summarize_quarterly_revenue"), "notes/untracked_helper.py"));
}

TEST_CASE("index --rev HEAD~1: indexes the older commit's tree, not the work tree") {
  FixtureRepo repo;
  write_sample_project(repo);
  repo.write("src/legacy.py",
             "def legacy_checksum_algorithm(data):\n    \"\"\"Old adler checksum.\"\"\"\n"
             "    return sum(data) % 65521\n");
  const std::string old_commit = repo.commit_all("old");
  repo.remove("src/legacy.py");
  repo.write("src/modern.py",
             "def modern_checksum_algorithm(data):\n    return hash(bytes(data))\n");
  repo.commit_all("new");
  repo.write("src/draft.py", "def uncommitted_draft_feature():\n    return 42\n");
  repo.append("src/cli.py", "\ndef uncommitted_edit_marker():\n    pass\n");

  const JsonValue summary = index_json(repo, {"--rev", "HEAD~1"});
  CHECK(summary["commit"].as_string() == old_commit);
  CHECK(summary["files"].get_integer() == static_cast<std::int64_t>(sample_file_count()) + 1);

  // ask on an index of a commit does not refresh it from the work tree.
  const JsonValue legacy = ask_json(repo, "legacy_checksum_algorithm");
  REQUIRE(legacy["results"].size() >= 1);
  CHECK(legacy["results"][0]["path"].as_string() == "src/legacy.py");
  CHECK(legacy["results"][0]["symbol"].as_string() == "legacy_checksum_algorithm");
  CHECK_FALSE(has_symbol(ask_json(repo, "modern_checksum_algorithm"), "modern_checksum_algorithm"));
  CHECK_FALSE(has_symbol(ask_json(repo, "uncommitted_draft_feature"), "uncommitted_draft_feature"));
  CHECK_FALSE(has_symbol(ask_json(repo, "uncommitted_edit_marker"), "uncommitted_edit_marker"));

  // Back to the work tree: everything current is found, the old file is gone.
  index_json(repo);
  CHECK(has_symbol(ask_json(repo, "uncommitted_draft_feature"), "uncommitted_draft_feature"));
  CHECK(has_symbol(ask_json(repo, "modern_checksum_algorithm"), "modern_checksum_algorithm"));
  CHECK_FALSE(has_path(ask_json(repo, "legacy_checksum_algorithm"), "src/legacy.py"));
}

TEST_CASE("index --rev HEAD twice, then after a new commit: unchanged folders are not re-read") {
  FixtureRepo repo;
  write_sample_project(repo);
  repo.commit_all("sample");
  const auto files = static_cast<std::int64_t>(sample_file_count());
  const JsonValue first = index_json(repo, {"--rev", "HEAD"});
  CHECK(first["parsed"].get_integer() == files);

  const JsonValue second = index_json(repo, {"--rev", "HEAD"});
  CHECK(second["files"].get_integer() == files);
  CHECK(second["parsed"].get_integer() == 0);
  CHECK(second["unchanged"].get_integer() == first["indexed"].get_integer());
  CHECK(second["chunks"].get_integer() == first["chunks"].get_integer());

  repo.write("src/added.py",
             "def freshly_committed_helper():\n    \"\"\"Added by a new commit.\"\"\"\n"
             "    return 7\n");
  const std::string commit = repo.commit_all("add a helper");
  const JsonValue third = index_json(repo, {"--rev", "HEAD"});
  CHECK(third["commit"].as_string() == commit);
  CHECK(*third["files"].get_integer() == files + 1);
  CHECK(third["parsed"].get_integer() == 1);
  CHECK(third["removed"].get_integer() == 0);
  CHECK(*third["indexed"].get_integer() == *first["indexed"].get_integer() + 1);
  CHECK(has_symbol(ask_json(repo, "freshly_committed_helper"), "freshly_committed_helper"));

  // The same as a clean index of that commit.
  const JsonValue clean = index_json(repo, {"--rev", "HEAD", "--rebuild"});
  CHECK(clean["files"].get_integer() == third["files"].get_integer());
  CHECK(clean["indexed"].get_integer() == third["indexed"].get_integer());
  CHECK(clean["chunks"].get_integer() == third["chunks"].get_integer());
}

TEST_CASE("index --rev: an unknown revision is an error naming it") {
  FixtureRepo repo;
  write_sample_project(repo);
  repo.commit_all("sample");
  const RunResult run = repo.kasava({"index", "--rev", "no-such-branch"});
  INFO(describe(run));
  CHECK(run.exit_code == 2);
  CHECK(run.out.empty());
  CHECK(lines_of(run.err).size() == 1);
  CHECK_THAT(run.err, Catch::StartsWith("kasava: error: ") && Catch::Contains("no-such-branch"));
}

namespace {

// A committed text file of about 2 MiB (many short lines, so not "minified").
void write_big_text(const FixtureRepo& repo) {
  std::string big;
  for (int i = 0; big.size() < 2 * 1024 * 1024; ++i) {
    big += "line " + std::to_string(i) + " of the oversized_ledger_marker notes\n";
  }
  repo.write("data/ledger.txt", big);
}

}  // namespace

TEST_CASE("index --max-file-size: a larger limit holds for the refresh that ask and status do") {
  FixtureRepo repo;
  write_sample_project(repo);
  repo.commit_all("sample");
  write_big_text(repo);  // untracked: its content is read from disk on every refresh
  const JsonValue summary = index_json(repo, {"--max-file-size", "4000000"});
  CHECK(summary["skipped"].get_integer() == 0);
  CHECK(has_path(ask_json(repo, "oversized_ledger_marker", {"--no-refresh"}), "data/ledger.txt"));

  // Nothing changed since: status sees nothing stale, and ask still finds the big file.
  {
    const RunResult status = repo.kasava({"status", "--json"});
    INFO(describe(status));
    CHECK(parse_json_output(status.out)["stale_files"].get_integer() == 0);
  }
  CHECK(has_path(ask_json(repo, "oversized_ledger_marker"), "data/ledger.txt"));
}

TEST_CASE("index --max-file-size: changing the limit applies to files already seen") {
  FixtureRepo repo;
  write_sample_project(repo);
  write_big_text(repo);
  repo.commit_all("big");
  const JsonValue first = index_json(repo);
  CHECK(first["skipped_by_reason"]["too large"].get_integer() == 1);

  // Raised: the file skipped as too large is indexed now, though its content did not change.
  const JsonValue raised = index_json(repo, {"--max-file-size", "4000000"});
  CHECK(raised["skipped"].get_integer() == 0);
  CHECK(raised["indexed"].get_integer() == static_cast<std::int64_t>(sample_file_count()) + 1);
  CHECK(has_path(ask_json(repo, "oversized_ledger_marker", {"--no-refresh"}), "data/ledger.txt"));

  // Lowered: files above the new limit leave the index.
  const JsonValue lowered = index_json(repo, {"--max-file-size", "300"});
  CHECK(lowered["skipped_by_reason"]["too large"].get_integer().value_or(0) >= 5);
  CHECK_FALSE(
      has_path(ask_json(repo, "oversized_ledger_marker", {"--no-refresh"}), "data/ledger.txt"));
}

TEST_CASE("index --rev in a plain directory is an error that says --rev needs git") {
  FixtureRepo dir(GitInit::no);
  write_sample_project(dir);
  const RunResult run = dir.kasava({"index", "--rev", "HEAD"});
  INFO(describe(run));
  CHECK(run.exit_code == 2);
  CHECK(run.out.empty());
  CHECK(lines_of(run.err).size() == 1);
  CHECK_THAT(run.err, Catch::StartsWith("kasava: error: ") && Catch::Contains("--rev"));
}
