// Tests for core/repo/remote.cpp: URL recognition and redaction, cache paths, and cloning or
// fetching a real local repository over file://.
#include <catch2/catch.hpp>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "core/repo/source.hpp"
#include "support.hpp"

namespace fs = std::filesystem;
using kasava::repo::clone_path_for;
using kasava::repo::is_url;
using kasava::repo::redact_url;

namespace {

using kasava::test::git;
using kasava::test::run;
using kasava::test::TempDir;
using kasava::test::write;

/// A file's content without its final newline.
std::string slurp(const std::string& path) {
  return run("cat '" + path + "'");
}

std::vector<std::string> names_in(const std::string& dir) {
  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator(dir))
    names.push_back(entry.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

}  // namespace

TEST_CASE("repo::is_url") {
  CHECK(is_url("https://github.com/org/repo"));
  CHECK(is_url("http://example.com/repo.git"));
  CHECK(is_url("HTTPS://github.com/org/repo"));
  CHECK(is_url("ssh://git@github.com/org/repo.git"));
  CHECK(is_url("git://example.com/repo"));
  CHECK(is_url("file:///srv/git/repo.git"));
  CHECK(is_url("git@github.com:org/repo.git"));
  CHECK(is_url("https://user:secret@example.com:8443/org/repo"));

  CHECK_FALSE(is_url(""));
  CHECK_FALSE(is_url("."));
  CHECK_FALSE(is_url("src/project"));
  CHECK_FALSE(is_url("/home/me/project"));
  CHECK_FALSE(is_url("C:\\Users\\me\\project"));
  CHECK_FALSE(is_url("C:/Users/me/project"));
  CHECK_FALSE(is_url("notes:v2"));
  CHECK_FALSE(is_url("./me@host:path"));
  CHECK_FALSE(is_url("https://"));
  CHECK_FALSE(is_url("ftp://example.com/repo"));
  CHECK_FALSE(is_url("my project@host:x y"));
}

TEST_CASE("repo::redact_url") {
  CHECK(redact_url("https://user:secret@example.com/org/repo.git") ==
        "https://example.com/org/repo.git");
  CHECK(redact_url("https://ghp_token@github.com/org/repo") == "https://github.com/org/repo");
  CHECK(redact_url("http://u:p@127.0.0.1:8080/x.git") == "http://127.0.0.1:8080/x.git");
  CHECK(redact_url("https://example.com/org/repo") == "https://example.com/org/repo");
  CHECK(redact_url("https://example.com/a@b/repo") == "https://example.com/a@b/repo");
  CHECK(redact_url("file:///srv/repo.git") == "file:///srv/repo.git");
  CHECK(redact_url("git@github.com:org/repo.git") == "git@github.com:org/repo.git");
}

TEST_CASE("repo::clone_path_for") {
  const std::string cache = "/cache/kasava";
  CHECK(clone_path_for("https://github.com/org/repo.git", cache) ==
        "/cache/kasava/repos/github.com/org/repo");
  CHECK(clone_path_for("https://user:pw@GitHub.com:8443/org/repo/", cache) ==
        "/cache/kasava/repos/github.com/org/repo");
  CHECK(clone_path_for("git@github.com:org/repo.git", cache) ==
        "/cache/kasava/repos/github.com/org/repo");
  CHECK(clone_path_for("ssh://git@example.com/~me/repo.git", cache) ==
        "/cache/kasava/repos/example.com/~me/repo");
  CHECK(clone_path_for("file:///srv/git/repo.git", cache) ==
        "/cache/kasava/repos/local/srv/git/repo");
  CHECK(clone_path_for("https://example.com/../../etc/passwd", cache) ==
        "/cache/kasava/repos/example.com/etc/passwd");
  CHECK(clone_path_for("https://example.com/org/repo?x=1#top", cache) ==
        "/cache/kasava/repos/example.com/org/repo");
  CHECK(clone_path_for("https://example.com/", cache) == "/cache/kasava/repos/example.com/repo");
}

TEST_CASE("repo::clone_or_fetch clones a file:// repository, then fetches new commits") {
  TempDir temp;
  const std::string upstream = temp.path() + "/upstream";
  run("git init -q -b main '" + upstream + "'");
  write(upstream + "/a.txt", "one\n");
  git(upstream, "add a.txt");
  git(upstream, "commit -q -m first");
  const std::string bare = temp.path() + "/bare.git";
  run("git clone -q --bare '" + upstream + "' '" + bare + "'");
  const std::string url = "file://" + bare;
  const std::string destination = clone_path_for(url, temp.path() + "/cache");

  auto cloned = kasava::repo::clone_or_fetch(url, destination);
  INFO((cloned ? std::string() : cloned.error().message));
  REQUIRE(cloned.ok());
  CHECK(*cloned == destination);
  CHECK(slurp(destination + "/a.txt") == "one");
  CHECK(git(destination, "rev-parse HEAD") == git(upstream, "rev-parse HEAD"));
  // Nothing left beside the clone by the clone-then-rename.
  CHECK(names_in(fs::path(destination).parent_path().string()) == std::vector<std::string>{"bare"});

  write(upstream + "/a.txt", "two\n");
  write(upstream + "/b.txt", "new\n");
  git(upstream, "add a.txt b.txt");
  git(upstream, "commit -q -m second");
  git(upstream, "push -q '" + bare + "' main");

  auto fetched = kasava::repo::clone_or_fetch(url, destination);
  INFO((fetched ? std::string() : fetched.error().message));
  REQUIRE(fetched.ok());
  CHECK(slurp(destination + "/a.txt") == "two");
  CHECK(slurp(destination + "/b.txt") == "new");
  CHECK(git(destination, "rev-parse HEAD") == git(upstream, "rev-parse HEAD"));
}

TEST_CASE("repo::clone_or_fetch fails fast on an unreachable URL without leaking credentials") {
  TempDir temp;
  const std::string destination = temp.path() + "/cache/repos/127.0.0.1/x";
  const auto start = std::chrono::steady_clock::now();
  auto result = kasava::repo::clone_or_fetch("http://user:hunter2@127.0.0.1:1/x.git", destination);
  const auto elapsed = std::chrono::steady_clock::now() - start;
  REQUIRE_FALSE(result.ok());
  const std::string& message = result.error().message;
  INFO(message);
  CHECK_THAT(message, Catch::StartsWith("cloning 'http://127.0.0.1:1/x.git': "));
  CHECK(message.find("hunter2") == std::string::npos);
  CHECK(message.find("user") == std::string::npos);
  CHECK(message.find('\n') == std::string::npos);
  CHECK(elapsed < std::chrono::seconds(10));
  CHECK_FALSE(fs::exists(destination));
  // Nor the folders made on the way: the cache is left as it was found.
  CHECK_FALSE(fs::exists(temp.path() + "/cache"));
}

TEST_CASE("repo::owner_and_name names a repository from its clone URL") {
  using kasava::repo::owner_and_name;
  CHECK(owner_and_name("https://github.com/acme/widget.git") == "acme/widget");
  CHECK(owner_and_name("https://github.com/acme/widget/") == "acme/widget");
  CHECK(owner_and_name("git@github.com:acme/widget.git") == "acme/widget");
  CHECK(owner_and_name("ssh://git@host:2222/group/sub/widget") == "sub/widget");
  CHECK(owner_and_name("widget") == "widget");
  CHECK(owner_and_name("") == "");
}

TEST_CASE("repo::identity_of reads origin (credentials removed) and the branch") {
  TempDir temp;
  const std::string root = temp.path() + "/repo";
  run("git init -q -b trunk '" + root + "'");
  CHECK(kasava::repo::identity_of(root).branch == "trunk");  // unborn: HEAD names no commit yet
  write(root + "/a.txt", "one\n");
  git(root, "add a.txt");
  git(root, "commit -q -m first");
  git(root, "remote add origin https://user:s3cret@example.com/acme/widget.git");
  const kasava::repo::Identity identity = kasava::repo::identity_of(root);
  CHECK(identity.branch == "trunk");
  CHECK(identity.origin_url == "https://example.com/acme/widget.git");
  git(root, "checkout -q --detach");
  CHECK(kasava::repo::identity_of(root).branch.empty());
  CHECK(kasava::repo::identity_of(temp.path()).origin_url.empty());  // not a repository
}
