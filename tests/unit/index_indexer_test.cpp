// Unit tests for core/index: skip rules, index location, and an incremental run on a
// plain directory.
#include <catch2/catch.hpp>

#include <filesystem>
#include <cstdlib>
#include <fstream>
#include <unistd.h>

#include "core/index/indexer.hpp"
#include "core/index/locate.hpp"
#include "support.hpp"

using namespace kasava;
namespace fs = std::filesystem;

namespace {

// A temporary folder with a write() for files relative to it.
struct Folder : test::TempDir {
  fs::path root() const { return path(); }
  void write(const std::string& relative, const std::string& content) const {
    test::write(file(relative), content);
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
  Folder dir;
  CHECK_FALSE(index::find_index_upward((dir.root()).string()).has_value());
  dir.write(".kasava/index.db", "");
  fs::create_directories(dir.root() / "a" / "b");
  const auto found = index::find_index_upward((dir.root() / "a" / "b").string());
  REQUIRE(found.has_value());
  CHECK(*found == index::default_index_path(dir.root().string()));
}

TEST_CASE("index::exclude_from_git adds .kasava/ once") {
  Folder dir;
  index::exclude_from_git(dir.root().string());  // not a repository: nothing happens
  CHECK_FALSE(fs::exists(dir.root() / ".git"));
  REQUIRE(std::system(("git init -q '" + dir.root().string() + "'").c_str()) == 0);
  index::exclude_from_git(dir.root().string());
  index::exclude_from_git(dir.root().string());
  std::ifstream in(dir.root() / ".git" / "info" / "exclude");
  int lines = 0;
  for (std::string line; std::getline(in, line);) lines += line == ".kasava/";
  CHECK(lines == 1);
}

TEST_CASE("index::run_index is incremental on a plain directory") {
  Folder dir;
  dir.write("src/auth.py", "def login(user):\n    \"\"\"Log a user in.\"\"\"\n    return user\n");
  dir.write("src/util.go", "package util\n\nfunc Retry() {}\n");
  dir.write("data.bin", std::string("\0\1\2", 3));
  auto store = store::Store::open((dir.root() / ".kasava" / "index.db").string(),
                                  store::OpenMode::read_write);
  REQUIRE(store.ok());
  auto source = repo::open_source(dir.root().string(), {});
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

  fs::remove(dir.root() / "src" / "util.go");
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
