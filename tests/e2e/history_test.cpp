// End-to-end: the history field — what `kasava index` keeps of the commits that touched each
// file, as `status` reports it and as the index file holds it (read with the sqlite3 CLI):
// incremental refreshes, a checkout of an older commit and `--rev` see only reachable
// commits; a plain directory has none.
#include <catch2/catch.hpp>

#include <string>

#include "tests/e2e/harness.hpp"

using namespace kasava::e2e;
using kasava::util::JsonValue;

namespace {

JsonValue status_json(const FixtureRepo& repo) {
  const RunResult run = repo.kasava({"status", "--json"});
  INFO(describe(run));
  REQUIRE(run.exit_code == 0);
  return parse_json_output(run.out);
}

void index(const FixtureRepo& repo, const std::vector<std::string>& extra = {}) {
  std::vector<std::string> args{"index"};
  args.insert(args.end(), extra.begin(), extra.end());
  const RunResult run = repo.kasava(args);
  INFO(describe(run));
  REQUIRE(run.exit_code == 0);
  CHECK(run.err.find("history") == std::string::npos);
}

// One query of the index file through the sqlite3 CLI, its output trimmed.
std::string sql(const FixtureRepo& repo, const std::string& query) {
  const RunResult run = run_program("sqlite3", {repo.index_path(), query});
  INFO(describe(run));
  REQUIRE(run.exit_code == 0);
  std::string out = run.out;
  while (!out.empty() && out.back() == '\n') out.pop_back();
  return out;
}

// The history text stored for `path`.
std::string history_of(const FixtureRepo& repo, const std::string& path) {
  return sql(repo, "SELECT text FROM history_paths WHERE path = '" + path + "'");
}

}  // namespace

TEST_CASE("history: index keeps each file's commit subjects, and refreshes read only new ones") {
  FixtureRepo repo;
  repo.write("src/parser.py", "def parse(text):\n    return text.split()\n");
  repo.write("src/lexer.py", "def lex(text):\n    return list(text)\n");
  const std::string first = repo.commit_all("Add parser and lexer");
  repo.write("src/parser.py", "def parse(text):\n    return text.split(',')\n");
  repo.commit_all("Parser splits on commas\n\nThe old split lost quoted fields.");
  index(repo);

  // Subjects only, newest first.
  CHECK(history_of(repo, "src/parser.py") == "Parser splits on commas\nAdd parser and lexer");
  CHECK(history_of(repo, "src/lexer.py") == "Add parser and lexer");
  JsonValue status = status_json(repo);
  CHECK(status["history_commits"].get_integer() == 2);
  CHECK(status["history_files"].get_integer() == 2);
  const RunResult human = repo.kasava({"status"});
  CHECK(human.out.find("2 commits read, 2 files with a history") != std::string::npos);

  // A no-change refresh reads nothing; a new commit adds one.
  index(repo);
  CHECK(status_json(repo)["history_commits"].get_integer() == 2);
  repo.write("src/lexer.py", "def lex(text):\n    return [c for c in text]\n");
  const std::string third = repo.commit_all("Lexer uses a comprehension");
  index(repo);
  CHECK(history_of(repo, "src/lexer.py") == "Lexer uses a comprehension\nAdd parser and lexer");
  CHECK(status_json(repo)["history_commits"].get_integer() == 3);
  CHECK(sql(repo, "SELECT value FROM meta WHERE key = 'history_tip'") == third);

  // Back to the first commit: what came after it leaves the index.
  repo.git({"checkout", "-q", first});
  index(repo);
  CHECK(history_of(repo, "src/parser.py") == "Add parser and lexer");
  CHECK(history_of(repo, "src/lexer.py") == "Add parser and lexer");
  CHECK(status_json(repo)["history_commits"].get_integer() == 1);
  CHECK(sql(repo, "SELECT count(*) FROM history_paths WHERE instr(text, 'comprehension') > 0") == "0");

  // --rev sees the commits reachable from the revision.
  repo.git({"checkout", "-q", "main"});
  index(repo, {"--rev", third});
  CHECK(history_of(repo, "src/lexer.py") == "Lexer uses a comprehension\nAdd parser and lexer");
  CHECK(sql(repo, "SELECT count(*) FROM history_paths WHERE instr(text, 'comprehension') > 0") == "1");

  // verify does not take the history's tables for damage.
  const RunResult verify = repo.kasava({"verify"});
  INFO(describe(verify));
  CHECK(verify.exit_code == 0);
}

TEST_CASE("history: a plain directory has none") {
  FixtureRepo dir(GitInit::no);
  dir.write("a.py", "def a():\n    return 1\n");
  index(dir);
  CHECK(sql(dir, "SELECT count(*) FROM history_paths") == "0");
  const JsonValue status = status_json(dir);
  CHECK(status["history_commits"].get_integer() == 0);
  const RunResult human = dir.kasava({"status"});
  CHECK(human.out.find("history") != std::string::npos);
  CHECK(human.out.find("(none)") != std::string::npos);
}
