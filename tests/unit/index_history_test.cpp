// Tests for core/index/history.cpp through run_index: the history field follows the indexed
// commit (read on its own thread, written after the files), a dry run writes none, and a
// repository without commits or a plain directory has none.
#include <catch2/catch.hpp>

#include <filesystem>
#include <string>

#include "core/index/history.hpp"
#include "core/index/indexer.hpp"
#include "support.hpp"

using namespace kasava;

namespace {

std::unique_ptr<store::Store> open_index(const test::TempDir& dir) {
  auto store = store::Store::open(dir.file(".kasava/index.db"), store::OpenMode::read_write);
  REQUIRE(store.ok());
  return std::move(*store);
}

std::unique_ptr<repo::Source> open_source(const test::TempDir& dir) {
  auto source = repo::open_source(dir.path(), {});
  REQUIRE(source.ok());
  return std::move(*source);
}

std::string commit(const test::TempDir& dir, const std::string& message) {
  test::git(dir.path(), "add -A");
  test::git(dir.path(), "commit -q -m '" + message + "'");
  return test::git(dir.path(), "rev-parse HEAD");
}

}  // namespace

TEST_CASE("index::run_index brings the history to the indexed commit, not in a dry run") {
  test::TempDir dir;
  test::git(dir.path(), "init -q -b main");
  test::write(dir.file(".gitignore"), ".kasava/\n");
  test::write(dir.file("parse.py"), "def parse():\n    return 1\n");
  const std::string first = commit(dir, "Add the parser");
  auto store = open_index(dir);

  index::IndexOptions dry;
  dry.dry_run = true;
  REQUIRE(index::run_index(*open_source(dir), *store, dry, {}).ok());
  CHECK(store->history_extent().tip.empty());

  REQUIRE(index::run_index(*open_source(dir), *store, {}, {}).ok());
  auto extent = store->history_extent();
  CHECK(extent.tip == first);
  CHECK(extent.commits == 1);
  CHECK(extent.paths == 2);

  test::write(dir.file("parse.py"), "def parse():\n    return 2\n");
  const std::string second = commit(dir, "Parser returns two");
  REQUIRE(index::run_index(*open_source(dir), *store, {}, {}).ok());
  extent = store->history_extent();
  CHECK(extent.tip == second);
  CHECK(extent.commits == 2);
  auto hits = store->history_search("\"two\"", 10);
  REQUIRE(hits.ok());
  REQUIRE(hits->size() == 1);
  CHECK((*hits)[0].path == "parse.py");

  // The step alone: current, so nothing is read or written.
  index::HistoryStep step(*open_source(dir), *store);
  auto update = step.finish(*store);
  REQUIRE(update.ok());
  CHECK(update->commits_read == 0);
}

TEST_CASE("index::run_index: no history without commits") {
  test::TempDir dir;
  test::git(dir.path(), "init -q -b main");
  test::write(dir.file("a.py"), "def a():\n    return 1\n");
  auto store = open_index(dir);
  REQUIRE(index::run_index(*open_source(dir), *store, {}, {}).ok());
  const auto extent = store->history_extent();
  CHECK(extent.tip.empty());
  CHECK(extent.paths == 0);
}
