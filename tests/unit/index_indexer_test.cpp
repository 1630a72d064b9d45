// Unit tests for core/index: skip rules, index location, and an incremental run on a
// plain directory.
#include <catch2/catch.hpp>

#include <filesystem>
#include <cstdlib>
#include <fstream>
#include <unistd.h>

#include "core/index/indexer.hpp"
#include "core/index/locate.hpp"

using namespace kasava;
namespace fs = std::filesystem;

namespace {

struct TempDir {
  fs::path path;
  explicit TempDir(const std::string& name) {
    path = fs::temp_directory_path() / ("kasava-" + name + "-" + std::to_string(::getpid()));
    fs::remove_all(path);
    fs::create_directories(path);
  }
  ~TempDir() { fs::remove_all(path); }
  void write(const std::string& relative, const std::string& content) const {
    fs::create_directories((path / relative).parent_path());
    std::ofstream(path / relative, std::ios::binary) << content;
  }
};

} // namespace

TEST_CASE("index::skip_reason_for_content") {
  CHECK(index::skip_reason_for_content("a.py", "def f():\n    pass\n") == "");
  CHECK(index::skip_reason_for_content("a.bin", std::string("ab\0cd", 5)) == "binary");
  CHECK(index::skip_reason_for_content("web/app.min.js", "var a=1;") == "minified");
  CHECK(index::skip_reason_for_content("app.js", std::string(6000, 'x')) == "minified");
  CHECK(index::skip_reason_for_content("x/package-lock.json", "{}") == "generated");
}

TEST_CASE("index::find_index_upward and default_index_path") {
  TempDir dir("locate");
  CHECK_FALSE(index::find_index_upward((dir.path).string()).has_value());
  dir.write(".kasava/index.db", "");
  fs::create_directories(dir.path / "a" / "b");
  const auto found = index::find_index_upward((dir.path / "a" / "b").string());
  REQUIRE(found.has_value());
  CHECK(*found == index::default_index_path(dir.path.string()));
}

TEST_CASE("index::exclude_from_git adds .kasava/ once") {
  TempDir dir("exclude");
  index::exclude_from_git(dir.path.string());  // not a repository: nothing happens
  CHECK_FALSE(fs::exists(dir.path / ".git"));
  REQUIRE(std::system(("git init -q '" + dir.path.string() + "'").c_str()) == 0);
  index::exclude_from_git(dir.path.string());
  index::exclude_from_git(dir.path.string());
  std::ifstream in(dir.path / ".git" / "info" / "exclude");
  int lines = 0;
  for (std::string line; std::getline(in, line);) lines += line == ".kasava/";
  CHECK(lines == 1);
}

TEST_CASE("index::run_index is incremental on a plain directory") {
  TempDir dir("run");
  dir.write("src/auth.py", "def login(user):\n    \"\"\"Log a user in.\"\"\"\n    return user\n");
  dir.write("src/util.go", "package util\n\nfunc Retry() {}\n");
  dir.write("data.bin", std::string("\0\1\2", 3));
  auto store = store::Store::open((dir.path / ".kasava" / "index.db").string(),
                                  store::OpenMode::read_write);
  REQUIRE(store.ok());
  auto source = repo::open_source(dir.path.string(), {});
  REQUIRE(source.ok());

  auto first = index::run_index(**source, **store, {}, {});
  REQUIRE(first.ok());
  CHECK(first->files == 3);
  CHECK(first->parsed == 2);
  CHECK(first->indexed == 2);
  CHECK(first->skipped.at("binary") == 1);
  CHECK(first->chunks >= 2);

  auto second = index::run_index(**source, **store, {}, {});
  REQUIRE(second.ok());
  CHECK(second->parsed == 0);
  CHECK(second->unchanged == 2);
  CHECK(second->skipped.at("binary") == 1);

  fs::remove(dir.path / "src" / "util.go");
  dir.write("src/auth.py", "def logout(user):\n    return None\n");
  auto third = index::run_index(**source, **store, {}, {});
  REQUIRE(third.ok());
  CHECK(third->parsed == 1);
  CHECK(third->removed == 1);
  CHECK(third->indexed == 1);
  const auto states = (*store)->file_states();
  CHECK(states.count("src/util.go") == 0);
  CHECK(states.count("src/auth.py") == 1);
}
