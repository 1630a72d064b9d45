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
  SECTION("a split index (required extension 'link')") {
    git(repo, "update-index --split-index");
    CHECK_FALSE(read_git_index(repo + "/.git/index").has_value());
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
