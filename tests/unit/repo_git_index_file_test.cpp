// Tests for core/repo/git_index_file.cpp: git's index file read by our own reader, checked
// against what git itself says of the same index (`git ls-files --stage --debug`).
#include <catch2/catch.hpp>

#include <filesystem>
#include <sstream>

#include "core/repo/git_index_file.hpp"
#include "support.hpp"

using kasava::repo::detail::GitIndexEntry;
using kasava::repo::detail::parse_git_index;
using kasava::repo::detail::read_git_index;
using kasava::test::git;
using kasava::test::run;
using kasava::test::TempDir;
using kasava::test::write;

namespace {

std::string hex(const GitIndexEntry& entry) {
  static constexpr char k_digits[] = "0123456789abcdef";
  std::string text;
  for (const std::uint8_t byte : entry.id) {
    text += k_digits[byte >> 4];
    text += k_digits[byte & 15];
  }
  return text;
}

/// git's own view: "mode id stage\tpath" per entry, and its stat fields.
std::string describe(const GitIndexEntry& entry) {
  std::ostringstream out;
  out << std::oct << entry.mode << std::dec << ' ' << hex(entry) << ' '
      << static_cast<int>(entry.stage) << '\t' << entry.path << '\n'
      << "  ctime: " << entry.ctime_s << ':' << entry.ctime_ns << '\n'
      << "  mtime: " << entry.mtime_s << ':' << entry.mtime_ns << '\n'
      << "  dev: " << entry.dev << "\tino: " << entry.ino << '\n'
      << "  uid: " << entry.uid << "\tgid: " << entry.gid << '\n'
      << "  size: " << entry.size << "\tflags: ";
  return out.str();
}

}  // namespace

TEST_CASE("repo::detail::read_git_index reads what git wrote, in every version") {
  TempDir temp;
  const std::string repo = temp.path() + "/work";
  run("git init -q -b main '" + repo + "'");
  for (int i = 0; i < 20; ++i)
    write(
        repo + "/d" + std::to_string(i % 4) + "/a-long-shared-prefix-" + std::to_string(i) + ".txt",
        std::string(static_cast<std::size_t>(i), 'x'));
  write(repo + "/exec.sh", "#!/bin/sh\n");
  run("chmod +x '" + repo + "/exec.sh'");
  std::filesystem::create_symlink("exec.sh", repo + "/link");
  git(repo, "add .");
  git(repo, "commit -q -m first");
  write(repo + "/new.txt", "intent\n");
  git(repo, "add -N new.txt");
  git(repo, "update-index --skip-worktree d1/a-long-shared-prefix-1.txt");

  const std::string version = GENERATE("2", "3", "4");
  if (version != "3") {
    // Version 2 cannot hold extended flags, so git keeps 3 while any entry has them.
    git(repo, "update-index --no-skip-worktree d1/a-long-shared-prefix-1.txt");
    run("git -C '" + repo + "' rm -q --cached new.txt");
  }
  git(repo, "update-index --index-version " + version);
  INFO("version " << version);
  REQUIRE(run("od -An -tu1 -j7 -N1 '" + repo + "/.git/index' | tr -d ' '") == version);

  const auto index = read_git_index(repo + "/.git/index");
  REQUIRE(index.has_value());
  CHECK(index->mtime_ns != 0);
  // git ls-files --debug prints the flags field after the size; compare everything before it.
  std::istringstream expected(git(repo, "ls-files --stage --debug"));
  std::string all((std::istreambuf_iterator<char>(expected)), std::istreambuf_iterator<char>());
  std::size_t at = 0;
  for (const GitIndexEntry& entry : index->entries) {
    const std::string mine = describe(entry);
    INFO(entry.path);
    REQUIRE(all.compare(at, mine.size(), mine) == 0);
    at = all.find('\n', at + mine.size());
    at = at == std::string::npos ? all.size() : at + 1;
    CHECK(entry.skip_worktree == (version == "3" && entry.path == "d1/a-long-shared-prefix-1.txt"));
    CHECK(entry.intent_to_add == (version == "3" && entry.path == "new.txt"));
  }
  CHECK(at == all.size());
  CHECK(index->entries.size() == (version == "3" ? 23u : 22u));
}

TEST_CASE("repo::detail::read_git_index lists each stage of a conflict") {
  TempDir temp;
  const std::string repo = temp.path() + "/work";
  run("git init -q -b main '" + repo + "'");
  write(repo + "/c.txt", "base\n");
  git(repo, "add c.txt");
  git(repo, "commit -q -m base");
  git(repo, "checkout -q -b other");
  write(repo + "/c.txt", "other\n");
  git(repo, "commit -q -am other");
  git(repo, "checkout -q main");
  write(repo + "/c.txt", "main\n");
  git(repo, "commit -q -am main");
  run("git -C '" + repo + "' -c user.email=t@t -c user.name=t merge -q other || true");

  const auto index = read_git_index(repo + "/.git/index");
  REQUIRE(index.has_value());
  REQUIRE(index->entries.size() == 3);
  for (int stage = 1; stage <= 3; ++stage) {
    CHECK(index->entries[static_cast<std::size_t>(stage - 1)].path == "c.txt");
    CHECK(index->entries[static_cast<std::size_t>(stage - 1)].stage == stage);
  }
}

TEST_CASE("repo::detail::parse_git_index declines what it does not understand") {
  TempDir temp;
  const std::string repo = temp.path() + "/work";
  run("git init -q -b main '" + repo + "'");
  write(repo + "/a.txt", "a\n");
  git(repo, "add a.txt");

  SECTION("an absent index is an empty one") {
    const auto index = read_git_index(repo + "/.git/no-such-index");
    REQUIRE(index.has_value());
    CHECK(index->entries.empty());
  }
  SECTION("a split index whose shared index is gone") {
    git(repo, "update-index --split-index");
    REQUIRE(read_git_index(repo + "/.git/index").has_value());
    run("rm '" + repo + "'/.git/sharedindex.*");
    CHECK_FALSE(read_git_index(repo + "/.git/index").has_value());
  }
  SECTION("another required extension") {
    const std::string bytes = run("od -An -v -tx1 '" + repo + "/.git/index' | tr -d ' \\n'");
    std::string raw;
    for (std::size_t i = 0; i + 1 < bytes.size(); i += 2)
      raw += static_cast<char>(std::stoi(bytes.substr(i, 2), nullptr, 16));
    REQUIRE(parse_git_index(raw).has_value());
    // An empty "sdir" extension (sparse index) before the checksum.
    raw.insert(raw.size() - 20, std::string("sdir\0\0\0\0", 8));
    CHECK_FALSE(parse_git_index(raw).has_value());
  }
  SECTION("damaged bytes") {
    const std::string bytes = run("od -An -v -tx1 '" + repo + "/.git/index' | tr -d ' \\n'");
    std::string raw;
    for (std::size_t i = 0; i + 1 < bytes.size(); i += 2)
      raw += static_cast<char>(std::stoi(bytes.substr(i, 2), nullptr, 16));
    REQUIRE(parse_git_index(raw).has_value());
    CHECK_FALSE(parse_git_index(raw.substr(0, raw.size() / 2)).has_value());
    CHECK_FALSE(parse_git_index("DIRC").has_value());
    std::string wrong_version = raw;
    wrong_version[7] = 9;
    CHECK_FALSE(parse_git_index(wrong_version).has_value());
    std::string huge_count = raw;
    huge_count[8] = '\x7f';
    CHECK_FALSE(parse_git_index(huge_count).has_value());
  }
}

TEST_CASE("repo::detail::read_git_index reads a split index as git does") {
  TempDir temp;
  const std::string repo = temp.path() + "/work";
  run("git init -q -b main '" + repo + "'");
  const std::string version = GENERATE("2", "4");
  git(repo, "config splitIndex.maxPercentChange 60");
  git(repo, "update-index --index-version " + version);
  // 150 entries, so that the bitmaps need more than one word and a run.
  for (int i = 0; i < 150; ++i)
    write(repo + "/d" + std::to_string(i % 5) + "/file-" + std::to_string(i) + ".txt",
          std::to_string(i) + "\n");
  git(repo, "add .");
  git(repo, "commit -q -m first");
  git(repo, "update-index --split-index");
  // After the split: replaced (staged edits), deleted and added entries, and a conflict.
  for (int i = 0; i < 150; i += 7) write(repo + "/d" + std::to_string(i % 5) + "/file-" +
                                         std::to_string(i) + ".txt", "edited\n");
  git(repo, "add -u");
  for (int i = 3; i < 150; i += 11)
    git(repo, "rm -q --cached d" + std::to_string(i % 5) + "/file-" + std::to_string(i) + ".txt");
  write(repo + "/added/new.txt", "new\n");
  write(repo + "/d2/zz-added.txt", "new\n");
  write(repo + "/0-first.txt", "sorts before every shared entry\n");
  git(repo, "add added/new.txt d2/zz-added.txt 0-first.txt");
  const std::string conflict_id = git(repo, "hash-object -w d0/file-0.txt");
  run("printf '0 " + std::string(40, '0') + "\\td1/file-1.txt\\n100644 " + conflict_id +
      " 1\\td1/file-1.txt\\n100644 " + conflict_id + " 2\\td1/file-1.txt\\n' | git -C '" + repo +
      "' update-index --index-info");

  // Still split, with both bitmaps in its link, and the shared index unchanged.
  REQUIRE(run("ls '" + repo + "/.git' | grep -c '^sharedindex'") == "1");
  REQUIRE(run("grep -c link '" + repo + "/.git/index' || true") != "0");
  const auto index = read_git_index(repo + "/.git/index");
  REQUIRE(index.has_value());
  INFO("version " << version);
  CHECK(index->split);
  CHECK_FALSE(index->link.has_value());
  std::string mine;
  for (const GitIndexEntry& entry : index->entries) {
    mine += describe(entry);
    mine += '\n';
  }
  // Everything of git's view before each entry's flags (split bookkeeping lives there).
  std::istringstream expected(git(repo, "ls-files --stage --debug"));
  std::string theirs;
  for (std::string line; std::getline(expected, line);) {
    const std::size_t flags = line.find("\tflags: ");
    theirs += flags == std::string::npos ? line + "\n" : line.substr(0, flags + 8) + "\n";
  }
  CHECK(mine == theirs);
  CHECK(index->entries.size() == 150 - 14 + 3 + 1);
}

TEST_CASE("repo::detail::read_git_index skips the untracked cache and fsmonitor extensions") {
  TempDir temp;
  const std::string repo = temp.path() + "/work";
  run("git init -q -b main '" + repo + "'");
  write(repo + "/a/one.txt", "1\n");
  write(repo + "/b/two.txt", "2\n");
  git(repo, "add .");
  // A fsmonitor hook (protocol 2) that reports everything as possibly changed.
  write(repo + "/.git/fsmonitor-hook", "#!/bin/sh\nprintf 'token\\0/\\0'\n");
  run("chmod +x '" + repo + "/.git/fsmonitor-hook'");
  git(repo, "config core.fsmonitor .git/fsmonitor-hook");
  git(repo, "config core.untrackedCache true");
  write(repo + "/untracked.txt", "u\n");
  git(repo, "status --porcelain");
  git(repo, "update-index --untracked-cache --fsmonitor");
  git(repo, "status --porcelain");
  REQUIRE(run("grep -c UNTR '" + repo + "/.git/index' || true") == "1");
  REQUIRE(run("grep -c FSMN '" + repo + "/.git/index' || true") == "1");
  const auto index = read_git_index(repo + "/.git/index");
  REQUIRE(index.has_value());
  REQUIRE(index->entries.size() == 2);
  CHECK(index->entries[0].path == "a/one.txt");
  CHECK(index->entries[1].path == "b/two.txt");
}
