// Tests for core/repo's sources (source.cpp and the three Source implementations): real git
// repositories made with the git CLI in temporary folders, checked against git's own answers.
#include <catch2/catch.hpp>

#include <sys/stat.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <functional>
#include <thread>

#include "core/repo/source.hpp"
#include "core/repo/untracked_cache.hpp"
#include "support.hpp"

namespace fs = std::filesystem;
using kasava::repo::EntryKind;
using kasava::repo::OpenOptions;
using kasava::repo::Source;
using kasava::repo::SourceEntry;

namespace {

using kasava::test::git;
using kasava::test::run;
using kasava::test::TempDir;
using kasava::test::write;

std::string init_repository(const std::string& dir) {
  run("git init -q -b main '" + dir + "'");
  return dir;
}

std::unique_ptr<Source> open(const std::string& path,
                             std::optional<std::string> revision = std::nullopt) {
  OpenOptions options;
  options.revision = std::move(revision);
  auto source = kasava::repo::open_source(path, options);
  INFO((source ? std::string() : source.error().message));
  REQUIRE(source.ok());
  return std::move(source).value();
}

std::vector<SourceEntry> list(Source& source) {
  auto entries = source.list();
  INFO((entries ? std::string() : entries.error().message));
  REQUIRE(entries.ok());
  return std::move(entries).value();
}

std::vector<std::string> paths_of(const std::vector<SourceEntry>& entries) {
  std::vector<std::string> paths;
  for (const auto& entry : entries) paths.push_back(entry.path);
  return paths;
}

SourceEntry entry_named(const std::vector<SourceEntry>& entries, const std::string& path) {
  const auto found = std::find_if(entries.begin(), entries.end(),
                                  [&](const SourceEntry& e) { return e.path == path; });
  INFO(path);
  REQUIRE(found != entries.end());
  return *found;
}

/// The folders an untracked cache vouches for.
std::vector<std::string> cached_folders(const std::string& text) {
  std::vector<std::string> folders;
  for (const auto& folder : kasava::repo::detail::UntrackedCache::decode(text).folders) {
    folders.push_back(folder.path);
  }
  return folders;
}

/// Sets the mtime of `folders` under `repo` a minute back, out of the untracked cache's
/// racy window.
void age_folders(const std::string& repo, const std::vector<std::string>& folders) {
  for (const std::string& folder : folders) {
    const fs::path path = fs::path(repo) / folder;
    fs::last_write_time(path, fs::last_write_time(path) - std::chrono::minutes(1));
  }
}

std::string read(Source& source, SourceEntry& entry) {
  auto content = source.read(entry);
  INFO(entry.path << ": " << (content ? std::string() : content.error().message));
  REQUIRE(content.ok());
  return std::move(content).value();
}

std::string read_error(Source& source, SourceEntry entry) {
  auto content = source.read(entry);
  REQUIRE_FALSE(content.ok());
  return content.error().message;
}

}  // namespace

TEST_CASE("repo::blob_id_of matches git hash-object") {
  CHECK(kasava::repo::blob_id_of("") == "e69de29bb2d1d6434b8b29ae775ad8c2e48c5391");
  CHECK(kasava::repo::blob_id_of("hello\n") == "ce013625030ba8dba906f756967f9e9ca394464a");
  CHECK(kasava::repo::blob_id_of(std::string("a\0b", 3)) ==
        run("printf 'a\\0b' | git hash-object --stdin"));
}

TEST_CASE("repo::open_source lists a working tree as git sees it") {
  TempDir temp;
  const std::string repo = init_repository(temp.path() + "/work");
  write(repo + "/a.txt", "alpha\n");
  write(repo + "/src/b.cpp", "int b();\n");
  write(repo + "/c.txt", "to be deleted\n");
  write(repo + "/.gitignore", "*.log\nbuild/\n");
  write(repo + "/tracked.log", "tracked although ignored\n");
  git(repo, "add .gitignore a.txt src/b.cpp c.txt");
  git(repo, "add -f tracked.log");
  git(repo, "commit -q -m first");

  write(repo + "/a.txt", "alpha changed\n");
  fs::remove(repo + "/c.txt");
  write(repo + "/new/untracked.py", "print(1)\n");
  write(repo + "/ignored.log", "noise\n");
  write(repo + "/build/out.o", "object\n");
  write(repo + "/.kasava/index.db", "index\n");

  // Opening from a subdirectory finds the root of the work tree.
  auto source = open(repo + "/src");
  CHECK(source->root() == repo);
  CHECK(source->is_git());
  CHECK(source->commit_id() == git(repo, "rev-parse HEAD"));

  auto entries = list(*source);
  CHECK(paths_of(entries) == std::vector<std::string>{".gitignore", "a.txt", "new/untracked.py",
                                                      "src/b.cpp", "tracked.log"});

  SECTION("unchanged tracked files take their id from the index without being read") {
    const SourceEntry b = entry_named(entries, "src/b.cpp");
    CHECK(b.blob_id == git(repo, "rev-parse HEAD:src/b.cpp"));
    CHECK(b.size == 9);
    CHECK(b.kind == EntryKind::regular);
  }

  SECTION("a modified file is read with its new content and id") {
    SourceEntry a = entry_named(entries, "a.txt");
    CHECK(a.blob_id.empty());
    CHECK(a.size == 14);
    CHECK(read(*source, a) == "alpha changed\n");
    CHECK(a.blob_id == git(repo, "hash-object a.txt"));
  }

  SECTION("an untracked file gets its id when read") {
    SourceEntry untracked = entry_named(entries, "new/untracked.py");
    CHECK(untracked.blob_id.empty());
    CHECK(read(*source, untracked) == "print(1)\n");
    CHECK(untracked.blob_id == git(repo, "hash-object new/untracked.py"));
  }

  SECTION("a second list() sees later changes") {
    write(repo + "/src/b.cpp", "int b(int);\n");
    fs::remove(repo + "/new/untracked.py");
    auto again = list(*source);
    CHECK(paths_of(again) ==
          std::vector<std::string>{".gitignore", "a.txt", "src/b.cpp", "tracked.log"});
    SourceEntry b = entry_named(again, "src/b.cpp");
    CHECK(b.blob_id.empty());
    CHECK(read(*source, b) == "int b(int);\n");
    CHECK(b.blob_id == git(repo, "hash-object src/b.cpp"));
  }
}

TEST_CASE("repo::open_source hashes changed files through git's clean filters") {
  TempDir temp;
  const std::string repo = init_repository(temp.path() + "/work");
  write(repo + "/.gitattributes", "*.txt text eol=crlf\n");
  write(repo + "/a.txt", "one\r\ntwo\r\n");
  git(repo, "add .gitattributes a.txt");
  git(repo, "commit -q -m first");
  write(repo + "/a.txt", "one\r\ntwo\r\nthree\r\n");
  const bool split = GENERATE(false, true);
  INFO("split index " << split);
  if (split) git(repo, "update-index --split-index");

  auto source = open(repo);
  SourceEntry a = entry_named(list(*source), "a.txt");
  CHECK(read(*source, a) == "one\r\ntwo\r\nthree\r\n");  // the content as it is on disk
  CHECK(a.blob_id == git(repo, "hash-object a.txt"));    // the id git would store
  CHECK(a.blob_id != kasava::repo::blob_id_of("one\r\ntwo\r\nthree\r\n"));
}

TEST_CASE("repo::open_source hashes raw content only where no clean filter can apply") {
  // A changed file with CRLF line ends: git converts them when a filter applies (from
  // core.autocrlf or attributes in any of their places) and keeps them otherwise. The id must
  // be git's in every case, whether or not kasava asked libgit2 for the filters.
  const std::string crlf = "one\r\ntwo\r\n";
  const auto changed_id = [&](const std::function<void(const std::string&)>& configure) {
    TempDir temp;
    const std::string repo = init_repository(temp.path() + "/work");
    git(repo, "config core.autocrlf false");
    write(repo + "/sub/a.txt", "one\n");  // no CRLF in the index: libgit2 then converts too
    git(repo, "add sub/a.txt");
    git(repo, "commit -q -m first");
    write(repo + "/sub/a.txt", crlf);
    configure(repo);
    auto source = open(repo);
    SourceEntry a = entry_named(list(*source), "sub/a.txt");
    CHECK(read(*source, a) == crlf);
    CHECK(a.blob_id == git(repo, "hash-object sub/a.txt"));
    return a.blob_id;
  };
  const std::string raw = kasava::repo::blob_id_of(crlf);
  CHECK(changed_id([](const std::string&) {}) == raw);
  CHECK(changed_id([](const std::string& repo) { git(repo, "config core.autocrlf true"); }) != raw);
  // An untracked attributes file on the path's way, one in info/, one named by the config.
  CHECK(changed_id([](const std::string& repo) { write(repo + "/sub/.gitattributes", "*.txt text\n"); }) != raw);
  CHECK(changed_id([](const std::string& repo) { write(repo + "/.git/info/attributes", "*.txt text\n"); }) != raw);
  CHECK(changed_id([](const std::string& repo) {
          write(repo + "/../attributes", "*.txt text\n");
          git(repo, "config core.attributesFile '" + repo + "/../attributes'");
        }) != raw);
  // A tracked attributes file elsewhere in the tree: libgit2 decides (here: no filter).
  CHECK(changed_id([](const std::string& repo) {
          write(repo + "/other/.gitattributes", "*.txt text\n");
          git(repo, "add other/.gitattributes");
        }) == raw);
}

TEST_CASE("repo::open_source with a revision lists the committed tree") {
  TempDir temp;
  const std::string repo = init_repository(temp.path() + "/work");
  write(repo + "/a.txt", "first\n");
  write(repo + "/dir/b.txt", "bee\n");
  write(repo + "/dir/sub/c.txt", "sea\n");
  write(repo + "/a-b.txt", "order\n");
  fs::create_symlink("a.txt", repo + "/link");
  git(repo, "add .");
  git(repo, "commit -q -m first");
  const std::string first = git(repo, "rev-parse HEAD");
  write(repo + "/a.txt", "second\n");
  write(repo + "/d.txt", "dee\n");
  git(repo, "add .");
  git(repo, "commit -q -m second");
  write(repo + "/a.txt", "uncommitted\n");

  auto source = open(repo, "HEAD~1");
  CHECK(source->root() == repo);
  CHECK(source->commit_id() == first);
  auto entries = list(*source);

  // Same paths and ids as git ls-tree -r, in path order.
  std::vector<std::string> expected_paths;
  std::map<std::string, std::string> expected_ids;
  std::istringstream tree(git(repo, "ls-tree -r HEAD~1"));
  for (std::string line; std::getline(tree, line);) {
    const std::string path = line.substr(line.find('\t') + 1);
    expected_paths.push_back(path);
    expected_ids[path] = line.substr(line.find(' ', line.find(' ') + 1) + 1, 40);
  }
  std::sort(expected_paths.begin(), expected_paths.end());
  CHECK(paths_of(entries) == expected_paths);
  for (const auto& entry : entries) {
    INFO(entry.path);
    CHECK(entry.blob_id == expected_ids[entry.path]);
  }

  SourceEntry a = entry_named(entries, "a.txt");
  CHECK(a.size == 6);
  CHECK(read(*source, a) == "first\n");
  SourceEntry c = entry_named(entries, "dir/sub/c.txt");
  CHECK(read(*source, c) == "sea\n");
  SourceEntry link = entry_named(entries, "link");
  CHECK(link.kind == EntryKind::symlink);
  CHECK(read_error(*source, link) == "symlink");

  SECTION("an entry without an id is found by path") {
    SourceEntry by_path{"dir/b.txt", "", 0, EntryKind::regular};
    CHECK(read(*source, by_path) == "bee\n");
    CHECK(by_path.blob_id == git(repo, "rev-parse HEAD~1:dir/b.txt"));
  }
}

TEST_CASE("repo::open_source reports bad paths and revisions") {
  TempDir temp;
  OpenOptions options;

  auto missing = kasava::repo::open_source(temp.path() + "/nope", options);
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.error().message == "'" + temp.path() + "/nope': no such file or directory");

  write(temp.path() + "/file.txt", "x");
  auto file = kasava::repo::open_source(temp.path() + "/file.txt", options);
  REQUIRE_FALSE(file.ok());
  CHECK(file.error().message == "'" + temp.path() + "/file.txt': not a directory");

  const std::string repo = init_repository(temp.path() + "/work");
  write(repo + "/a.txt", "a\n");
  git(repo, "add a.txt");
  git(repo, "commit -q -m first");
  options.revision = "no-such-branch";
  auto unknown = kasava::repo::open_source(repo, options);
  REQUIRE_FALSE(unknown.ok());
  CHECK(unknown.error().message == "unknown revision 'no-such-branch'");

  auto plain_with_revision = kasava::repo::open_source(temp.path(), options);
  REQUIRE_FALSE(plain_with_revision.ok());
  CHECK_THAT(plain_with_revision.error().message, Catch::Contains("not a git repository"));
}

TEST_CASE("repo::open_source needs --rev for a bare repository") {
  TempDir temp;
  const std::string repo = init_repository(temp.path() + "/work");
  write(repo + "/a.txt", "a\n");
  git(repo, "add a.txt");
  git(repo, "commit -q -m first");
  run("git clone -q --bare '" + repo + "' '" + temp.path() + "/bare.git'");

  auto bare = kasava::repo::open_source(temp.path() + "/bare.git", OpenOptions{});
  REQUIRE_FALSE(bare.ok());
  CHECK_THAT(bare.error().message, Catch::Contains("bare repository") && Catch::Contains("--rev"));

  auto source = open(temp.path() + "/bare.git", "main");
  CHECK(source->commit_id() == git(repo, "rev-parse HEAD"));
  auto entries = list(*source);
  REQUIRE(paths_of(entries) == std::vector<std::string>{"a.txt"});
  CHECK(read(*source, entries[0]) == "a\n");
}

TEST_CASE("repo::open_source on a repository without commits") {
  TempDir temp;
  const std::string repo = init_repository(temp.path() + "/work");
  write(repo + "/draft.md", "# draft\n");
  write(repo + "/.kasava/index.db", "index\n");

  auto source = open(repo);
  CHECK(source->commit_id().empty());
  auto entries = list(*source);
  REQUIRE(paths_of(entries) == std::vector<std::string>{"draft.md"});
  CHECK(read(*source, entries[0]) == "# draft\n");
  CHECK(entries[0].blob_id == git(repo, "hash-object draft.md"));

  OpenOptions options;
  options.revision = "HEAD";
  auto revision = kasava::repo::open_source(repo, options);
  REQUIRE_FALSE(revision.ok());
  CHECK_THAT(revision.error().message, Catch::StartsWith("unknown revision 'HEAD'"));
}

TEST_CASE("repo::open_source lists submodules and nested repositories without entering them") {
  TempDir temp;
  const std::string repo = init_repository(temp.path() + "/work");
  write(repo + "/a.txt", "a\n");
  git(repo, "add a.txt");
  git(repo, "commit -q -m first");
  const std::string commit = git(repo, "rev-parse HEAD");
  // A gitlink, as `git submodule add` records it (its folder is not even checked out).
  git(repo, "update-index --add --cacheinfo 160000," + commit + ",vendor/lib");
  git(repo, "commit -q -m submodule");
  // An untracked folder holding its own repository.
  const std::string nested = init_repository(repo + "/nested");
  write(nested + "/inner.txt", "inner\n");

  auto source = open(repo);
  auto entries = list(*source);
  CHECK(paths_of(entries) == std::vector<std::string>{"a.txt", "nested", "vendor/lib"});
  CHECK(entry_named(entries, "vendor/lib").kind == EntryKind::submodule);
  CHECK(entry_named(entries, "nested").kind == EntryKind::submodule);
  CHECK(read_error(*source, entry_named(entries, "vendor/lib")) == "submodule");

  auto revision = open(repo, "HEAD");
  auto tree = list(*revision);
  CHECK(paths_of(tree) == std::vector<std::string>{"a.txt", "vendor/lib"});
  CHECK(entry_named(tree, "vendor/lib").kind == EntryKind::submodule);
}

TEST_CASE("repo::open_source follows symlinks only inside the root") {
  TempDir temp;
  const bool use_git = GENERATE(true, false);
  const std::string root = temp.path() + "/root";
  fs::create_directories(root);
  if (use_git) init_repository(root);
  write(root + "/real/target.txt", "target\n");
  write(temp.path() + "/outside.txt", "secret\n");
  fs::create_symlink("real/target.txt", root + "/inside");
  fs::create_symlink("../outside.txt", root + "/leaves");
  fs::create_symlink(temp.path() + "/outside.txt", root + "/absolute");
  fs::create_symlink("loop_b", root + "/loop_a");
  fs::create_symlink("loop_a", root + "/loop_b");
  fs::create_symlink("missing.txt", root + "/dangling");
  fs::create_symlink("real", root + "/directory_link");
  if (use_git) {
    git(root, "add .");
    git(root, "commit -q -m links");
  }

  auto source = open(root);
  CHECK(source->is_git() == use_git);
  auto entries = list(*source);
  // The directory link is listed as a link, never walked into.
  CHECK(paths_of(entries) == std::vector<std::string>{"absolute", "dangling", "directory_link",
                                                      "inside", "leaves", "loop_a", "loop_b",
                                                      "real/target.txt"});
  for (const auto& entry : entries) {
    INFO(entry.path);
    CHECK((entry.kind == EntryKind::symlink) == (entry.path != "real/target.txt"));
  }

  SourceEntry inside = entry_named(entries, "inside");
  CHECK(read(*source, inside) == "target\n");
  // The id is the content's, so it changes when the target does.
  CHECK(inside.blob_id == kasava::repo::blob_id_of("target\n"));
  CHECK(read_error(*source, entry_named(entries, "leaves")) == "symlink leaves the repository");
  CHECK(read_error(*source, entry_named(entries, "absolute")) == "symlink leaves the repository");
  CHECK(read_error(*source, entry_named(entries, "loop_a")) == "symlink loop");
  CHECK(read_error(*source, entry_named(entries, "dangling")) == "dangling symlink");
  CHECK(read_error(*source, entry_named(entries, "directory_link")) == "symlink to a directory");
}

TEST_CASE("repo::open_source walks a plain directory") {
  TempDir temp;
  const std::string root = temp.path() + "/plain";
  write(root + "/main.c", "int main(void) { return 0; }\n");
  write(root + "/lib/util.h", "#pragma once\n");
  write(root + "/.config/settings.toml", "x = 1\n");
  write(root + "/.git/HEAD", "not really a repository\n");
  write(root + "/.kasava/index.db", "index\n");
  write(root + "/deep/.kasava/other", "also skipped\n");
  fs::create_directories(root + "/empty");

  auto source = open(root + "/./lib/..");
  CHECK(source->root() == root);
  CHECK_FALSE(source->is_git());
  CHECK(source->commit_id().empty());
  auto entries = list(*source);
  CHECK(paths_of(entries) ==
        std::vector<std::string>{".config/settings.toml", "lib/util.h", "main.c"});
  SourceEntry main_c = entry_named(entries, "main.c");
  CHECK(main_c.size == 29);
  CHECK(main_c.blob_id.empty());
  CHECK(read(*source, main_c) == "int main(void) { return 0; }\n");
  CHECK(main_c.blob_id == run("git hash-object '" + root + "/main.c'"));

  write(temp.path() + "/outside.txt", "secret\n");
  CHECK(read_error(*source, SourceEntry{"../outside.txt", "", 0, EntryKind::regular}) ==
        "invalid path");
  CHECK(read_error(*source, SourceEntry{"lib/../../outside.txt", "", 0, EntryKind::regular}) ==
        "invalid path");
  CHECK(read_error(*source, SourceEntry{"missing.c", "", 0, EntryKind::regular}) ==
        "no such file or directory");
}

TEST_CASE("repo::open_source lists a large plain directory as a walk with lstat finds it") {
  // More files than one stat thread's share, links, special files and names never listed.
  TempDir temp;
  const std::string root = temp.path() + "/plain";
  for (int i = 0; i < 700; ++i)
    write(root + "/d" + std::to_string(i % 9) + "/s" + std::to_string(i % 4) + "/f" +
              std::to_string(i) + ".c",
          std::string(static_cast<std::size_t>(i % 50), 'x'));
  write(root + "/a-b.txt", "'-' sorts before '/'\n");
  write(root + "/a/b.txt", "in a\n");
  write(root + "/d2/.git/HEAD", "a folder named .git is never listed\n");
  write(root + "/d3/.git", "nor a file\n");
  write(root + "/d1/.kasava/index.db", "never listed\n");
  fs::create_symlink("a/b.txt", root + "/link-to-file");
  fs::create_symlink("d1", root + "/link-to-folder");
  fs::create_symlink("missing", root + "/dangling");
  REQUIRE(::mkfifo((root + "/fifo").c_str(), 0600) == 0);

  auto source = open(root);
  auto entries = list(*source);
  std::vector<std::string> expected;
  for (auto it = fs::recursive_directory_iterator(root); it != fs::recursive_directory_iterator();
       ++it) {
    const std::string name = it->path().filename().string();
    if (name == ".git" || name == ".kasava") {
      it.disable_recursion_pending();
      continue;
    }
    if (it->is_symlink() || it->is_regular_file())
      expected.push_back(it->path().string().substr(root.size() + 1));
  }
  std::sort(expected.begin(), expected.end());
  REQUIRE(paths_of(entries) == expected);
  CHECK(expected.size() == 705);
  for (const SourceEntry& entry : entries) {
    INFO(entry.path);
    struct stat info {};
    REQUIRE(::lstat((root + "/" + entry.path).c_str(), &info) == 0);
    CHECK(entry.size == static_cast<std::uint64_t>(info.st_size));
    CHECK(entry.blob_id.empty());
    if (S_ISLNK(info.st_mode)) {
      CHECK(entry.kind == EntryKind::symlink);
    } else {
      CHECK(entry.kind == EntryKind::regular);
      CHECK(entry.stat.inode == static_cast<std::uint64_t>(info.st_ino));
      CHECK(entry.stat.mtime_ns == info.st_mtim.tv_sec * 1000000000LL + info.st_mtim.tv_nsec);
    }
  }
  CHECK(entry_named(entries, "link-to-file").size == 7);
}

TEST_CASE("repo::find_work_tree") {
  TempDir temp;
  const std::string repo = init_repository(temp.path() + "/work");
  fs::create_directories(repo + "/a/b");
  CHECK(kasava::repo::find_work_tree(repo + "/a/b") == repo);
  CHECK(kasava::repo::find_work_tree(repo) == repo);
  CHECK_FALSE(kasava::repo::find_work_tree(temp.path()).has_value());
  CHECK_FALSE(kasava::repo::find_work_tree(temp.path() + "/missing").has_value());
}

TEST_CASE("repo::Source::read can be called from several threads") {
  TempDir temp;
  const std::string repo = init_repository(temp.path() + "/work");
  write(repo + "/.gitattributes", "*.txt text\n");
  for (int i = 0; i < 40; ++i)
    write(repo + "/f" + std::to_string(i) + ".txt", "file " + std::to_string(i) + "\n");
  git(repo, "add .");
  git(repo, "commit -q -m first");
  for (int i = 0; i < 40; i += 2)
    write(repo + "/f" + std::to_string(i) + ".txt", "changed " + std::to_string(i) + "\n");

  auto source = open(repo);
  auto entries = list(*source);
  REQUIRE(entries.size() == 41);
  std::vector<std::string> contents(entries.size());
  std::vector<std::thread> threads;
  for (std::size_t t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (std::size_t i = t; i < entries.size(); i += 4) {
        auto content = source->read(entries[i]);
        if (content) contents[i] = *content;
      }
    });
  }
  for (auto& thread : threads) thread.join();
  for (std::size_t i = 0; i < entries.size(); ++i) {
    INFO(entries[i].path);
    CHECK(contents[i] == run("cat '" + repo + "/" + entries[i].path + "'") + "\n");
    CHECK(entries[i].blob_id == git(repo, "hash-object '" + entries[i].path + "'"));
  }
}

TEST_CASE("repo::open_source sees a same-size edit whose mtime is new") {
  TempDir temp;
  const std::string repo = init_repository(temp.path() + "/work");
  write(repo + "/a.txt", "alpha\n");
  git(repo, "add a.txt");
  git(repo, "commit -q -m first");
  write(repo + "/a.txt", "omega\n");  // same size
  run("touch -d '2001-02-03 04:05:06' '" + repo + "/a.txt'");

  auto source = open(repo);
  SourceEntry a = entry_named(list(*source), "a.txt");
  CHECK(a.blob_id.empty());
  CHECK(a.size == 6);
  CHECK(a.stat.mtime_ns != 0);  // the index's own stat cache can tell it next time
  CHECK(read(*source, a) == "omega\n");
  CHECK(a.blob_id == git(repo, "hash-object a.txt"));
}

TEST_CASE("repo::open_source does not trust stat data of racily clean files") {
  TempDir temp;
  const std::string repo = init_repository(temp.path() + "/work");
  write(repo + "/a.txt", "alpha\n");
  write(repo + "/b.txt", "bravo\n");
  git(repo, "add a.txt b.txt");
  git(repo, "commit -q -m first");
  // An index written before its files' mtimes: git's "racy clean" case, where a file edited in
  // the same timestamp tick as the index was written would keep its stat data.
  run("touch -d '2001-02-03 04:05:06' '" + repo + "/.git/index'");

  SECTION("an unchanged racy file is hashed, and keeps the index's id") {
    auto source = open(repo);
    const SourceEntry a = entry_named(list(*source), "a.txt");
    CHECK(a.blob_id == git(repo, "rev-parse :a.txt"));
    CHECK(a.stat.mtime_ns == 0);
  }
  SECTION("a racy file edited to the same size and mtime is read again") {
    const std::string mtime = run("stat -c %y '" + repo + "/b.txt'");
    write(repo + "/b.txt", "brave\n");
    run("touch -d '" + mtime + "' '" + repo + "/b.txt'");
    auto source = open(repo);
    SourceEntry b = entry_named(list(*source), "b.txt");
    CHECK(b.blob_id.empty());
    CHECK(read(*source, b) == "brave\n");
    CHECK(b.blob_id == git(repo, "hash-object b.txt"));
  }
  SECTION("an entry git smudged (size 0: racily clean but modified) is read again") {
    // A same-size edit with the same mtime, then an index write that ignores ctime: git finds
    // the entry racily clean, sees the content differ, and writes its size as 0.
    run("touch -d '2099-01-01' '" + repo + "/a.txt'");
    git(repo, "add a.txt");
    write(repo + "/a.txt", "omega\n");
    run("touch -d '2099-01-01' '" + repo + "/a.txt'");
    write(repo + "/c.txt", "c\n");
    git(repo, "-c core.trustctime=false -c core.checkStat=minimal update-index --add c.txt");
    REQUIRE_THAT(git(repo, "ls-files --debug a.txt"), Catch::Contains("size: 0"));
    auto source = open(repo);
    SourceEntry a = entry_named(list(*source), "a.txt");
    CHECK(a.blob_id.empty());
    CHECK(read(*source, a) == "omega\n");
    CHECK(a.blob_id == git(repo, "hash-object a.txt"));
  }
}

TEST_CASE(
    "repo::open_source lists a staged file with the index's id, and re-reads it once modified") {
  TempDir temp;
  const std::string repo = init_repository(temp.path() + "/work");
  write(repo + "/a.txt", "committed\n");
  write(repo + "/b.txt", "committed\n");
  git(repo, "add a.txt b.txt");
  git(repo, "commit -q -m first");
  write(repo + "/a.txt", "staged a\n");
  write(repo + "/b.txt", "staged b\n");
  git(repo, "add a.txt b.txt");
  write(repo + "/b.txt", "staged, then modified\n");
  run("touch -d '2001-02-03 04:05:06' '" + repo + "/b.txt'");

  auto source = open(repo);
  auto entries = list(*source);
  SourceEntry a = entry_named(entries, "a.txt");
  CHECK(a.blob_id == git(repo, "rev-parse :a.txt"));  // staged, unchanged since
  CHECK(a.blob_id != git(repo, "rev-parse HEAD:a.txt"));
  SourceEntry b = entry_named(entries, "b.txt");
  CHECK(b.blob_id.empty());
  CHECK(read(*source, b) == "staged, then modified\n");
  CHECK(b.blob_id == git(repo, "hash-object b.txt"));
}

TEST_CASE("repo::open_source skips reading folders the untracked cache vouches for") {
  TempDir temp;
  const std::string repo = init_repository(temp.path() + "/work");
  write(repo + "/.gitignore", "*.log\n");
  write(repo + "/a/one.c", "int one;\n");
  write(repo + "/a/b/two.c", "int two;\n");
  write(repo + "/c/three.c", "int three;\n");
  write(repo + "/c/d/four.c", "int four;\n");
  git(repo, "add .");
  git(repo, "commit -q -m first");
  const std::vector<std::string> all = {".gitignore", "a/b/two.c", "a/one.c", "c/d/four.c",
                                        "c/three.c"};
  age_folders(repo, {"", "a", "a/b", "c", "c/d"});

  // A first listing learns every folder: each holds only tracked files and folders.
  auto first = open(repo);
  first->use_untracked_cache("");
  CHECK(paths_of(list(*first)) == all);
  const std::string learnt = first->untracked_cache();
  CHECK(cached_folders(learnt) == std::vector<std::string>{"", "a/", "a/b/", "c/", "c/d/"});

  // Unchanged: the same listing, the same cache.
  auto again = open(repo);
  again->use_untracked_cache(learnt);
  CHECK(paths_of(list(*again)) == all);
  CHECK(again->untracked_cache() == learnt);

  // A new file changes its folder only: c/ is not read, but its folders are still walked.
  write(repo + "/c/d/new.c", "int added;\n");
  write(repo + "/a/b/build.log", "ignored\n");
  auto changed = open(repo);
  changed->use_untracked_cache(learnt);
  CHECK(paths_of(list(*changed)) == std::vector<std::string>{".gitignore", "a/b/two.c", "a/one.c",
                                                             "c/d/four.c", "c/d/new.c",
                                                             "c/three.c"});
  // Neither folder holds only tracked files now, so neither is vouched for.
  const std::string relearnt = changed->untracked_cache();
  CHECK(cached_folders(relearnt) == std::vector<std::string>{"", "a/", "c/"});

  // Untracking a file changes no folder, but the cache holds only for the same tracked paths.
  git(repo, "rm -q --cached a/one.c");
  auto untracked = open(repo);
  untracked->use_untracked_cache(relearnt);
  auto entries = list(*untracked);
  CHECK(paths_of(entries) == std::vector<std::string>{".gitignore", "a/b/two.c", "a/one.c",
                                                      "c/d/four.c", "c/d/new.c", "c/three.c"});
  CHECK(entry_named(entries, "a/one.c").blob_id.empty());  // untracked now: read() ids it

  // A folder changed within the last two seconds is not vouched for: it could change again
  // and keep its mtime.
  fs::remove(repo + "/a/b/build.log");
  auto recent = open(repo);
  recent->use_untracked_cache(learnt);
  list(*recent);
  CHECK(cached_folders(recent->untracked_cache()) == std::vector<std::string>{"", "c/"});

  // Damaged text is no cache at all.
  auto damaged = open(repo);
  damaged->use_untracked_cache("kasava-untracked-cache 1 12\nnot a line\n");
  CHECK(paths_of(list(*damaged)) == paths_of(entries));
}

TEST_CASE("repo::detail::UntrackedCache reads back what it wrote, and nothing else") {
  using kasava::repo::detail::UntrackedCache;
  UntrackedCache cache;
  cache.tracked_digest = 1234567890123ull;
  cache.folders = {
      {"", {1, 2, 3}}, {"a b/", {-4, 5, 6}}, {"a\nb/", {7, 8, 9}}, {"z/", {10, 11, 12}}};
  const UntrackedCache read = UntrackedCache::decode(cache.encode());
  CHECK(read.tracked_digest == cache.tracked_digest);
  // A path with a newline cannot be written: left out.
  REQUIRE(read.folders.size() == 3);
  CHECK(read.folders[1].path == "a b/");
  CHECK(read.folders[1].stat == kasava::repo::FileStat{-4, 5, 6});
  REQUIRE(read.find("z/") != nullptr);
  CHECK(read.find("z/")->inode == 12);
  CHECK(read.find("y/") == nullptr);
  CHECK(read.find("")->mtime_ns == 1);
  for (const std::string& damaged :
       {std::string(), std::string("kasava-untracked-cache 2 1\n"),
        std::string("kasava-untracked-cache 1 x\n"),
        cache.encode().substr(0, cache.encode().size() - 1),  // a line cut short
        std::string("kasava-untracked-cache 1 1\n1 2 3 b/\n1 2 3 a/\n")}) {  // out of order
    INFO(damaged);
    const UntrackedCache nothing = UntrackedCache::decode(damaged);
    CHECK(nothing.tracked_digest == 0);
    CHECK(nothing.folders.empty());
  }
}

TEST_CASE("repo::open_source never looks for untracked files inside an ignored folder") {
  TempDir temp;
  const std::string repo = init_repository(temp.path() + "/work");
  write(repo + "/.gitignore", "build/\n");
  write(repo + "/build/kept.txt", "tracked although its folder is ignored\n");
  write(repo + "/src/main.c", "int main(void);\n");
  git(repo, "add .gitignore src/main.c");
  git(repo, "add -f build/kept.txt");
  git(repo, "commit -q -m first");
  write(repo + "/build/out.o", "object\n");
  write(repo + "/build/deep/more.o", "object\n");
  write(repo + "/src/build/gen.c", "ignored too: the pattern has no leading slash\n");
  write(repo + "/src/new.c", "int added(void);\n");
  // An ignored folder holding its own repository is not listed either.
  init_repository(repo + "/build/vendored");

  auto source = open(repo);
  CHECK(paths_of(list(*source)) ==
        std::vector<std::string>{".gitignore", "build/kept.txt", "src/main.c", "src/new.c"});
}

TEST_CASE("repo::open_source applies nested .gitignore files, negations and info/exclude") {
  TempDir temp;
  const std::string repo = init_repository(temp.path() + "/work");
  write(repo + "/.gitignore", "*.log\n");
  write(repo + "/sub/.gitignore", "*.tmp\n!keep.tmp\n");
  write(repo + "/sub/tracked.txt", "t\n");
  git(repo, "add .");
  git(repo, "commit -q -m first");
  write(repo + "/.git/info/exclude", "secret/\nlocal.cfg\n");
  write(repo + "/top.tmp", "not ignored above sub/\n");
  write(repo + "/sub/a.tmp", "ignored by sub/.gitignore\n");
  write(repo + "/sub/keep.tmp", "re-included\n");
  write(repo + "/sub/deeper/b.tmp", "ignored: sub/.gitignore applies below it\n");
  write(repo + "/sub/deeper/c.txt", "listed\n");
  write(repo + "/sub/x.log", "ignored by the root .gitignore\n");
  write(repo + "/secret/key.txt", "excluded by info/exclude\n");
  write(repo + "/sub/local.cfg", "excluded by info/exclude at any depth\n");

  auto source = open(repo);
  CHECK(paths_of(list(*source)) == std::vector<std::string>{".gitignore", "sub/.gitignore",
                                                            "sub/deeper/c.txt", "sub/keep.tmp",
                                                            "sub/tracked.txt", "top.tmp"});
}

TEST_CASE("repo::open_source lists files under a folder that replaced a tracked file") {
  TempDir temp;
  const std::string repo = init_repository(temp.path() + "/work");
  write(repo + "/thing", "a file\n");
  write(repo + "/other.txt", "o\n");
  git(repo, "add .");
  git(repo, "commit -q -m first");
  fs::remove(repo + "/thing");
  write(repo + "/thing/inside.txt", "now a folder\n");
  fs::remove(repo + "/other.txt");
  fs::create_symlink("thing/inside.txt", repo + "/other.txt");

  auto source = open(repo);
  auto entries = list(*source);
  CHECK(paths_of(entries) == std::vector<std::string>{"other.txt", "thing/inside.txt"});
  SourceEntry link = entry_named(entries, "other.txt");
  CHECK(link.kind == EntryKind::symlink);
  CHECK(read(*source, link) == "now a folder\n");
}

TEST_CASE("repo::open_source skips skip-worktree files and reads intent-to-add ones") {
  TempDir temp;
  const std::string repo = init_repository(temp.path() + "/work");
  write(repo + "/a.txt", "a\n");
  write(repo + "/sparse.txt", "s\n");
  git(repo, "add .");
  git(repo, "commit -q -m first");
  git(repo, "update-index --skip-worktree sparse.txt");
  write(repo + "/later.txt", "intent to add\n");
  git(repo, "add -N later.txt");

  auto source = open(repo);
  auto entries = list(*source);
  CHECK(paths_of(entries) == std::vector<std::string>{"a.txt", "later.txt"});
  SourceEntry later = entry_named(entries, "later.txt");
  CHECK(later.blob_id.empty());
  CHECK(read(*source, later) == "intent to add\n");
}

TEST_CASE("repo::open_source lists the same files for every index format git writes") {
  TempDir temp;
  const std::string repo = init_repository(temp.path() + "/work");
  for (int i = 0; i < 30; ++i)
    write(repo + "/dir" + std::to_string(i % 3) + "/file-" + std::to_string(i) + ".txt",
          std::to_string(i) + "\n");
  write(repo + "/a-b.txt", "order: '-' sorts before '/'\n");
  git(repo, "add .");
  git(repo, "commit -q -m first");
  write(repo + "/dir1/file-1.txt", "changed\n");
  write(repo + "/untracked.txt", "u\n");
  const std::string version = GENERATE("2", "3", "4", "split", "split-4");
  const std::string format = version == "split" ? "2" : version == "split-4" ? "4" : version;
  git(repo, "update-index --index-version " + format);
  if (version == "3") git(repo, "update-index --skip-worktree dir2/file-2.txt");
  if (version.rfind("split", 0) == 0) {
    // libgit2 cannot read a split index; ours applies the shared index. Changes made after
    // the split live in .git/index only: an edit, a removal, an addition.
    git(repo, "update-index --split-index");
    write(repo + "/dir0/file-3.txt", "staged after the split\n");
    git(repo, "add dir0/file-3.txt");
    git(repo, "rm -q --cached dir2/file-5.txt");
    write(repo + "/dir1/added.txt", "added after the split\n");
    git(repo, "add dir1/added.txt");
    REQUIRE(run("ls '" + repo + "/.git' | grep -c '^sharedindex'") == "1");
  }

  auto source = open(repo);
  auto entries = list(*source);
  INFO("index version " << version);
  std::vector<std::string> expected;
  std::istringstream listed(git(repo, "ls-files --cached --others --exclude-standard"));
  for (std::string line; std::getline(listed, line);) {
    if (version != "3" || line != "dir2/file-2.txt") expected.push_back(line);
  }
  std::sort(expected.begin(), expected.end());
  CHECK(paths_of(entries) == expected);
  for (const auto& entry : entries) {
    INFO(entry.path);
    const bool split = version.rfind("split", 0) == 0;
    if (entry.path == "dir1/file-1.txt" || entry.path == "untracked.txt" ||
        (split && entry.path == "dir2/file-5.txt")) {
      CHECK(entry.blob_id.empty());
    } else {
      CHECK(entry.blob_id == git(repo, "rev-parse ':" + entry.path + "'"));
    }
  }
}

TEST_CASE("repo::open_source lists a large untracked tree like git does") {
  // Past a few hundred ignore lookups, an untracked folder is handed to libgit2's status;
  // with a split index, which libgit2 cannot read, it is walked with lookups all the same.
  TempDir temp;
  const std::string repo = init_repository(temp.path() + "/work");
  write(repo + "/.gitignore", "*.log\n");
  write(repo + "/tracked.txt", "t\n");
  git(repo, "add .");
  git(repo, "commit -q -m first");
  const bool split = GENERATE(false, true);
  INFO("split index " << split);
  if (split) git(repo, "update-index --split-index");
  for (int i = 0; i < 1200; ++i) {
    const std::string dir = repo + "/fresh/d" + std::to_string(i % 7) + "/";
    write(dir + "f" + std::to_string(i) + (i % 5 == 0 ? ".log" : ".txt"), "x\n");
  }
  write(repo + "/fresh/d3/.gitignore", "*.txt\n!keep.txt\n");
  write(repo + "/fresh/d3/keep.txt", "kept\n");
  write(repo + "/fresh/ignored-dir/build.log/inside.txt", "a folder named like an ignored file\n");
  init_repository(repo + "/fresh/d1/nested");
  write(repo + "/fresh/d1/nested/inner.txt", "inner\n");
  write(repo + "/small/one.txt", "a small untracked folder\n");

  auto source = open(repo);
  auto entries = list(*source);
  std::vector<std::string> expected;
  std::istringstream listed(git(repo, "ls-files --cached --others --exclude-standard"));
  for (std::string line; std::getline(listed, line);) {
    // git shows an untracked folder holding its own repository as "dir/".
    if (!line.empty() && line.back() == '/') line.pop_back();
    expected.push_back(line);
  }
  std::sort(expected.begin(), expected.end());
  CHECK(paths_of(entries) == expected);
  CHECK(entry_named(entries, "fresh/d1/nested").kind == EntryKind::submodule);
  CHECK(entry_named(entries, "fresh/d3/keep.txt").kind == EntryKind::regular);
}

TEST_CASE("repo::Source::list_changed skips folders whose tree id is known") {
  TempDir temp;
  const std::string repo = init_repository(temp.path() + "/work");
  write(repo + "/top.txt", "top\n");
  write(repo + "/a/one.txt", "one\n");
  write(repo + "/b/two.txt", "two\n");
  write(repo + "/b/c/three.txt", "three\n");
  write(repo + "/b/d/four.txt", "four\n");
  git(repo, "add .");
  git(repo, "commit -q -m first");

  auto first = open(repo, "HEAD");
  auto everything = first->list_changed({});
  REQUIRE(everything.has_value());
  REQUIRE(everything->ok());
  CHECK(paths_of((*everything)->entries) == paths_of(list(*first)));
  CHECK((*everything)->unchanged.empty());
  const auto& trees = (*everything)->trees;
  std::vector<std::string> folders;
  for (const auto& [path, id] : trees) {
    folders.push_back(path);
    CHECK(id == git(repo, "rev-parse 'HEAD:" + path + "'"));
  }
  CHECK(folders == std::vector<std::string>{"", "a", "b", "b/c", "b/d"});

  SECTION("the same commit again: nothing is walked") {
    auto again = first->list_changed(trees);
    REQUIRE(again.has_value());
    REQUIRE(again->ok());
    CHECK((*again)->entries.empty());
    CHECK((*again)->unchanged == std::vector<std::string>{""});
  }
  SECTION("a later commit: only the folders on the way to a change are walked") {
    write(repo + "/b/c/three.txt", "three, changed\n");
    write(repo + "/b/c/new.txt", "new\n");
    git(repo, "add .");
    git(repo, "commit -q -m second");
    auto second = open(repo, "HEAD");
    auto changed = second->list_changed(trees);
    REQUIRE(changed.has_value());
    REQUIRE(changed->ok());
    CHECK(paths_of((*changed)->entries) ==
          std::vector<std::string>{"b/c/new.txt", "b/c/three.txt", "b/two.txt", "top.txt"});
    CHECK(entry_named((*changed)->entries, "b/c/three.txt").blob_id ==
          git(repo, "rev-parse HEAD:b/c/three.txt"));
    CHECK(entry_named((*changed)->entries, "b/c/three.txt").size == 15);
    CHECK((*changed)->unchanged == std::vector<std::string>{"a", "b/d"});
  }
  SECTION("a work tree has no tree ids to compare") {
    auto work_tree = open(repo);
    CHECK_FALSE(work_tree->list_changed(trees).has_value());
  }
}
