// Tests for core/store/history.cpp: the history field's rows (one per path, newest lines
// first, capped), its updates (incremental, from scratch, paths without a file dropped), its
// extent, and BM25 over it (history_search).
#include <catch2/catch.hpp>

#include <algorithm>
#include <string>
#include <vector>

#include "core/store/store.hpp"
#include "store_support.hpp"
#include "support.hpp"

using kasava::store::FileRecord;
using kasava::store::HistoryCommitRecord;
using kasava::store::HistoryHit;
using kasava::store::k_history_per_path;
using kasava::store::OpenMode;
using kasava::store::Store;
using kasava::test::open_store;
using kasava::test::TempDir;

namespace {

void add_files(Store& store, const std::vector<std::string>& paths) {
  store.begin();
  for (const auto& path : paths) store.put_file(FileRecord{path, "b1", "cpp", 10, ""}, {});
  store.commit();
}

void put(Store& store, const std::vector<HistoryCommitRecord>& commits, bool replace,
         const std::string& tip, std::int64_t read) {
  store.begin();
  store.put_history(commits, replace, tip, read);
  store.commit();
}

std::vector<std::string> paths_of(const std::vector<HistoryHit>& hits) {
  std::vector<std::string> out;
  for (const auto& hit : hits) out.push_back(hit.path);
  return out;
}

std::vector<std::string> search(const Store& store, const std::string& expression) {
  auto hits = store.history_search(expression, 10);
  if (!hits) FAIL(hits.error().message);
  for (const auto& hit : *hits) CHECK(hit.score > 0);
  return paths_of(*hits);
}

}  // namespace

TEST_CASE("store::Store::history_search ranks files by BM25 over their commits' text") {
  TempDir dir;
  auto store = open_store(dir.file("index.db"));
  add_files(*store, {"src/parser.c", "src/lexer.c", "README.md"});
  put(*store,
      {{"Fix parser crash on empty input", {"src/parser.c"}},
       {"Parser: handle nested brackets", {"src/parser.c", "README.md"}},
       {"Lexer reads unicode escapes", {"src/lexer.c"}}},
      true, std::string(40, 'a'), 3);

  auto parser = search(*store, "\"parser\"");
  std::sort(parser.begin(), parser.end());
  CHECK(parser == std::vector<std::string>{"README.md", "src/parser.c"});
  // Each word of the file's history counts: "crash" is only in parser.c's.
  CHECK(search(*store, "\"parser\" OR \"crash\"").front() == "src/parser.c");
  CHECK(search(*store, "\"unicode\" OR \"escapes\"") == std::vector<std::string>{"src/lexer.c"});
  // Porter stemming, as for chunks: "crashes" finds "crash".
  CHECK(search(*store, "\"crashes\"") == std::vector<std::string>{"src/parser.c"});
  CHECK(search(*store, "\"nothing\"").empty());
  CHECK(search(*store, "  ").empty());
  CHECK_FALSE(store->history_search("\"unterminated", 10));

  const auto extent = store->history_extent();
  CHECK(extent.tip == std::string(40, 'a'));
  CHECK(extent.commits == 3);
  CHECK(extent.paths == 3);

  // A reader sees the same.
  auto reader = open_store(dir.file("index.db"), OpenMode::read_only);
  CHECK(search(*reader, "\"lexer\"") == std::vector<std::string>{"src/lexer.c"});
}

TEST_CASE("store::Store::put_history adds new commits first, caps each path, replaces") {
  TempDir dir;
  auto store = open_store(dir.file("index.db"));
  add_files(*store, {"hot.c", "cold.c"});
  put(*store, {{"oldest words zebra", {"hot.c", "cold.c"}}}, true, "t1", 1);

  // One new commit at a time, as incremental runs add them.
  for (std::size_t i = 0; i < k_history_per_path; ++i) {
    std::string text = "change number ";
    text += std::to_string(i);
    std::string tip = "t";
    tip += std::to_string(i + 2);
    put(*store, {{text, {"hot.c"}}}, false, tip, 1);
  }
  // hot.c kept its newest k_history_per_path lines: the oldest fell off; cold.c kept it.
  CHECK(search(*store, "\"zebra\"") == std::vector<std::string>{"cold.c"});
  CHECK(search(*store, "\"change\"") == std::vector<std::string>{"hot.c"});
  auto extent = store->history_extent();
  CHECK(extent.commits == static_cast<std::int64_t>(k_history_per_path) + 1);

  // In one call, too: only the newest lines of a path are kept.
  std::vector<HistoryCommitRecord> many;
  for (std::size_t i = 0; i < k_history_per_path + 5; ++i) {
    many.push_back({i == k_history_per_path + 4 ? "ancient giraffe" : "recent work", {"cold.c"}});
  }
  put(*store, many, false, "t100", static_cast<std::int64_t>(many.size()));
  CHECK(search(*store, "\"giraffe\"").empty());
  CHECK(search(*store, "\"zebra\"").empty());

  // From scratch: the old history leaves.
  put(*store, {{"brand new history", {"cold.c"}}}, true, "t200", 7);
  CHECK(search(*store, "\"change\"").empty());
  CHECK(search(*store, "\"recent\"").empty());
  CHECK(search(*store, "\"brand\"") == std::vector<std::string>{"cold.c"});
  extent = store->history_extent();
  CHECK(extent.tip == "t200");
  CHECK(extent.commits == 7);
  CHECK(extent.paths == 1);
}

TEST_CASE("store::Store::put_history keeps no row for a path without a file") {
  TempDir dir;
  auto store = open_store(dir.file("index.db"));
  add_files(*store, {"kept.c", "removed.c"});
  put(*store, {{"touch both files", {"kept.c", "removed.c", "never-indexed.c"}}}, true, "t1", 1);
  CHECK(store->history_extent().paths == 2);
  store->begin();
  store->remove_file("removed.c");
  store->commit();
  put(*store, {{"another change", {"kept.c"}}}, false, "t2", 1);
  CHECK(search(*store, "\"touch\"") == std::vector<std::string>{"kept.c"});
  CHECK(store->history_extent().paths == 1);
  // The history field leaves the listing digest and the completeness mark alone.
  store->set_meta("listing_digest", "d");
  put(*store, {{"third change", {"kept.c"}}}, false, "t3", 1);
  CHECK(store->meta("listing_digest") == "d");
}

TEST_CASE("store::Store::history_search: an index without history has no hits") {
  TempDir dir;
  auto store = open_store(dir.file("index.db"));
  CHECK(search(*store, "\"anything\"").empty());
  const auto extent = store->history_extent();
  CHECK(extent.tip.empty());
  CHECK(extent.commits == 0);
  CHECK(extent.paths == 0);
}

TEST_CASE("store::Store::history_extent: a damaged count is none, and a new count starts over") {
  TempDir dir;
  auto store = open_store(dir.file("index.db"));
  add_files(*store, {"a.c"});
  put(*store, {{"first", {"a.c"}}}, true, "t1", 5);
  store->set_meta("history_commits", "12x");
  CHECK(store->history_extent().commits == 0);
  put(*store, {{"second", {"a.c"}}}, false, "t2", 2);
  CHECK(store->history_extent().commits == 2);
}
