// Tests for core/repo/history.cpp: the commits read_history() walks on real repositories made
// with the git CLI (merges skipped, renames and deletions, the bounds, incremental walks from a
// known tip, a tip that does not descend from it) and what commit_text() keeps of a message.
#include <catch2/catch.hpp>

#include <algorithm>
#include <string>
#include <vector>

#include "core/repo/history.hpp"
#include "support.hpp"

using kasava::repo::commit_text;
using kasava::repo::HistoryLimits;
using kasava::repo::HistoryWalk;
using kasava::repo::read_history;

namespace {

using kasava::test::git;
using kasava::test::TempDir;
using kasava::test::write;

// Commits everything in `dir` with `message`; returns the commit id.
std::string commit(const TempDir& dir, const std::string& message) {
  git(dir.path(), "add -A");
  git(dir.path(), "commit -q --allow-empty -m '" + message + "'");
  return git(dir.path(), "rev-parse HEAD");
}

HistoryWalk walk(const TempDir& dir, const std::string& tip, const std::string& known = "",
                 HistoryLimits limits = {}) {
  auto result = read_history(dir.path(), tip, known, limits);
  if (!result) FAIL(result.error().message);
  return std::move(result).value();
}

std::vector<std::string> texts(const HistoryWalk& history) {
  std::vector<std::string> out;
  for (const auto& entry : history.commits) out.push_back(entry.text);
  return out;
}

void init(const TempDir& dir) { git(dir.path(), "init -q -b main"); }

}  // namespace

TEST_CASE("repo::read_history lists each commit's changed files, newest first") {
  TempDir dir;
  init(dir);
  write(dir.file("a.txt"), "a\n");
  write(dir.file("sub/deep/b.txt"), "b\n");
  const std::string first = commit(dir, "Add a and b");
  write(dir.file("a.txt"), "a2\n");
  const std::string second = commit(dir, "Change a\n\nBecause a was wrong.\nSigned-off-by: x <x@x>");
  HistoryLimits with_body;
  with_body.body_lines = 2;
  write(dir.file("sub/deep/b.txt"), "b2\n");
  write(dir.file("sub/c.txt"), "c\n");
  const std::string third = commit(dir, "Change b, add c");

  const HistoryWalk history = walk(dir, third, "", with_body);
  CHECK(history.from_scratch);
  CHECK(history.walked == 3);
  REQUIRE(history.commits.size() == 3);
  CHECK(history.commits[0].id == third);
  CHECK(history.commits[0].paths == std::vector<std::string>{"sub/c.txt", "sub/deep/b.txt"});
  CHECK(history.commits[1].id == second);
  CHECK(history.commits[1].text == "Change a ; Because a was wrong.");
  CHECK(history.commits[1].paths == std::vector<std::string>{"a.txt"});
  CHECK(history.commits[2].id == first);  // the root commit: every file added
  CHECK(history.commits[2].paths == std::vector<std::string>{"a.txt", "sub/deep/b.txt"});

  // --rev of an older commit: only what is reachable from it.
  CHECK(texts(walk(dir, second)) == std::vector<std::string>{"Change a", "Add a and b"});
}

TEST_CASE("repo::read_history skips merges and keeps both sides' commits") {
  TempDir dir;
  init(dir);
  write(dir.file("a.txt"), "a\n");
  commit(dir, "Base");
  git(dir.path(), "checkout -q -b side");
  write(dir.file("side.txt"), "s\n");
  commit(dir, "Side work");
  git(dir.path(), "checkout -q main");
  write(dir.file("a.txt"), "main\n");
  commit(dir, "Main work");
  git(dir.path(), "-c user.email=t@t -c user.name=t merge -q --no-ff -m 'Merge side' side");
  const std::string tip = git(dir.path(), "rev-parse HEAD");

  const HistoryWalk history = walk(dir, tip);
  auto found = texts(history);
  std::sort(found.begin(), found.end());
  CHECK(found == std::vector<std::string>{"Base", "Main work", "Side work"});
  CHECK(history.walked == 4);  // the merge is walked, not kept
}

TEST_CASE("repo::read_history: renames start the new path's history, deletions list nothing") {
  TempDir dir;
  init(dir);
  write(dir.file("old.txt"), "content\n");
  write(dir.file("gone.txt"), "x\n");
  commit(dir, "Start");
  git(dir.path(), "mv old.txt new.txt");
  const std::string renamed = commit(dir, "Rename old to new");
  git(dir.path(), "rm -q gone.txt");
  const std::string deleted = commit(dir, "Delete gone");

  const HistoryWalk history = walk(dir, deleted);
  REQUIRE(history.commits.size() == 2);  // the deletion changed no file that exists
  CHECK(history.commits[0].id == renamed);
  CHECK(history.commits[0].paths == std::vector<std::string>{"new.txt"});
  CHECK(history.walked == 3);
}

TEST_CASE("repo::read_history bounds: commits walked and files per commit") {
  TempDir dir;
  init(dir);
  std::vector<std::string> ids;
  for (int i = 0; i < 6; ++i) {
    write(dir.file("f.txt"), std::to_string(i) + "\n");
    ids.push_back(commit(dir, "Commit " + std::to_string(i)));
  }
  write(dir.file("x/1.txt"), "1");
  write(dir.file("x/2.txt"), "2");
  write(dir.file("x/3.txt"), "3");
  const std::string wide = commit(dir, "Reformat everything");

  HistoryLimits limits;
  limits.max_commits = 3;
  limits.max_paths_per_commit = 2;
  const HistoryWalk history = walk(dir, wide, "", limits);
  CHECK(history.walked == 3);
  // The wide commit is walked but kept for no file.
  CHECK(texts(history) == std::vector<std::string>{"Commit 5", "Commit 4"});

  // More new commits since the known tip than one walk reads: read from scratch.
  const HistoryWalk again = walk(dir, wide, ids[0], limits);
  CHECK(again.from_scratch);
  CHECK(texts(again) == std::vector<std::string>{"Commit 5", "Commit 4"});
}

TEST_CASE("repo::read_history from a known tip: only new commits, or from scratch off its line") {
  TempDir dir;
  init(dir);
  write(dir.file("a.txt"), "1\n");
  const std::string one = commit(dir, "One");
  write(dir.file("a.txt"), "2\n");
  const std::string two = commit(dir, "Two");
  write(dir.file("b.txt"), "3\n");
  const std::string three = commit(dir, "Three");

  const HistoryWalk incremental = walk(dir, three, one);
  CHECK_FALSE(incremental.from_scratch);
  CHECK(incremental.walked == 2);
  CHECK(texts(incremental) == std::vector<std::string>{"Three", "Two"});

  const HistoryWalk same = walk(dir, three, three);
  CHECK_FALSE(same.from_scratch);
  CHECK(same.commits.empty());
  CHECK(same.walked == 0);

  // Back to an older commit: the known tip does not descend from it.
  const HistoryWalk older = walk(dir, one, three);
  CHECK(older.from_scratch);
  CHECK(texts(older) == std::vector<std::string>{"One"});

  // Another branch from `one`: its tip does not descend from `three` either.
  git(dir.path(), "checkout -q -b other " + one);
  write(dir.file("c.txt"), "c\n");
  const std::string other = commit(dir, "Other branch");
  const HistoryWalk branch = walk(dir, other, three);
  CHECK(branch.from_scratch);
  CHECK(texts(branch) == std::vector<std::string>{"Other branch", "One"});

  // A known tip that is no commit of this repository: from scratch too.
  const HistoryWalk unknown = walk(dir, three, std::string(40, 'a'));
  CHECK(unknown.from_scratch);
  CHECK(unknown.commits.size() == 3);
}

TEST_CASE("repo::read_history errors: no repository, unknown commit") {
  TempDir dir;
  CHECK_FALSE(read_history(dir.path(), std::string(40, 'b'), "", {}));
  init(dir);
  write(dir.file("a.txt"), "a\n");
  commit(dir, "A");
  CHECK_FALSE(read_history(dir.path(), std::string(40, 'b'), "", {}));
  CHECK_FALSE(read_history(dir.path(), "HEAD", "", {}));
}

TEST_CASE("repo::commit_text keeps the subject and body lines if asked, cleaned and bounded") {
  CHECK(commit_text("Fix the parser\n\nIt broke on tabs.\nNow it does not.\nThird line.\n") == "Fix the parser");
  CHECK(commit_text("Fix the parser\n\nIt broke on tabs.\nNow it does not.\nThird line.\n", 2) ==
        "Fix the parser ; It broke on tabs. ; Now it does not.");
  CHECK(commit_text("\n\n  Subject  with   spaces \n") == "Subject with spaces");
  CHECK(commit_text("Subject\n\nCo-authored-by: a <a@a>\nSigned-off-by: b <b@b>\nBody\n", 2) ==
        "Subject ; Body");
  CHECK(commit_text("Bell\a and \x1b[31mescape\x1b[0m\tand tab") == "Bell and [31mescape [0m and tab");
  CHECK(commit_text("") == "");

  const std::string long_line(500, 'x');
  CHECK(commit_text(long_line) == std::string(200, 'x'));
  // Cut at a UTF-8 boundary: "é" is two bytes, the 200th byte would split one.
  std::string accented(199, 'y');
  accented += "\xc3\xa9 more";
  CHECK(commit_text(accented) == std::string(199, 'y'));
}

TEST_CASE("repo::commit_text drops the lines holding a secret") {
  const std::string token = "ghp_" + std::string("a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8");
  CHECK(commit_text("Rotate the token\n\ntoken is " + token + "\nSafe line\n", 2) ==
        "Rotate the token ; Safe line");
  CHECK(commit_text("Leak " + token) == "");
  CHECK(commit_text("Set password\n\ndb_password: \"Kq9zR2mW4xVb\"\n", 2) == "Set password");
  // A key pair across lines: no single line shows it, the whole message keeps nothing.
  const std::string id = std::string("AK") + "IAP4JFOAFLKMUQ8RUV";
  const std::string secret = std::string("twcLfq1sPjkFrq6Wo8jn") + "Jx/pxLcQE7//q7kmCHnB";
  CHECK(commit_text("Keys\n\nid " + id + "\nsecret " + secret + "\n", 2) == "");
}
