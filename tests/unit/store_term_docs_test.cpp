// Tests for core/store/term_docs.cpp: the kept document frequencies of common terms equal
// FTS5's own counts through every kind of write, and a bounded lexical search that reads them
// ranks to the bit as one that counts each term's rows.
#include <catch2/catch.hpp>

#include <cstdint>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "core/store/sqlite.hpp"
#include "core/store/store.hpp"
#include "core/store/tokenizer.hpp"
#include "store_support.hpp"
#include "support.hpp"

using namespace kasava;
namespace sqlite = kasava::store::sqlite;
using kasava::test::open_store;

namespace {

types::Chunk make_chunk(const std::string& symbol, const std::string& text) {
  types::Chunk chunk;
  chunk.kind = "function";
  chunk.symbol = symbol;
  chunk.text = text;
  chunk.start_line = 1;
  chunk.end_line = 2;
  return chunk;
}

store::FileRecord make_file(const std::string& path) { return {path, "b-" + path, "python", 10, ""}; }

// Every index term and the rows of chunks_fts holding it, as FTS5's vocabulary counts them.
std::map<std::string, std::int64_t> fts_counts(const std::string& path) {
  sqlite::Database db(path, SQLITE_OPEN_READWRITE);
  REQUIRE(store::register_tokenizer(db.get()).empty());
  db.exec("CREATE VIRTUAL TABLE temp.v USING fts5vocab(main, chunks_fts, row)");
  std::map<std::string, std::int64_t> counts;
  auto query = db.query("SELECT term, doc FROM temp.v");
  while (query.step()) counts[std::string(query.column_text(0))] = query.column_int64(1);
  return counts;
}

std::map<std::string, std::int64_t> kept_counts(const std::string& path) {
  sqlite::Database db(path, SQLITE_OPEN_READONLY);
  std::map<std::string, std::int64_t> counts;
  auto query = db.query("SELECT term, docs FROM term_docs");
  while (query.step()) counts[std::string(query.column_text(0))] = query.column_int64(1);
  return counts;
}

// Each kept count is FTS5's (a term no row holds any more is kept with 0).
void check_kept(const std::string& path) {
  const auto fts = fts_counts(path);
  const auto kept = kept_counts(path);
  REQUIRE_FALSE(kept.empty());
  for (const auto& [term, docs] : kept) {
    INFO(term);
    const auto found = fts.find(term);
    CHECK(docs == (found == fts.end() ? 0 : found->second));
  }
}

// A two-chunk index whose term counts are kept (every term: the index is tiny).
std::unique_ptr<store::Store> counted_index(const std::string& path) {
  auto index = open_store(path);
  index->set_bounded_search(0);
  index->put_file(make_file("a.py"), {make_chunk("parseConfig", "parse the config file"),
                                      make_chunk("readFile", "read the file")});
  index->update_term_docs();
  return index;
}

}  // namespace

TEST_CASE("store: kept term counts stay FTS5's through adds, replacements, removals and rollbacks") {
  test::TempDir dir;
  const auto path = dir.file("index.db");
  auto index = open_store(path);
  index->set_bounded_search(0);  // a bounded search at any size, so the counts are kept
  index->begin();
  index->put_file(make_file("a.py"), {make_chunk("parseConfig", "config = parse(path) # parses parsed config"),
                                      make_chunk("readFile", "read the file at path, then parse it")});
  index->put_file(make_file("b.py"), {make_chunk("retry", "retry the request with backoff: retries, retrying")});
  index->put_file(make_file("c.py"), {make_chunk("openFile", "open a file by name; the file is opened")});
  index->commit();
  index->update_term_docs();
  // The share of a tiny index is under one row: every term is kept.
  CHECK(kept_counts(path).size() == fts_counts(path).size());
  check_kept(path);

  SECTION("a transaction that adds, replaces and removes files") {
    index->begin();
    index->put_file(make_file("d.py"), {make_chunk("configPath", "the path of the config file")});
    index->put_file(make_file("a.py"), {make_chunk("parse", "parse one line")});  // replaced
    index->remove_file("b.py");
    index->commit();
    check_kept(path);
    CHECK(kept_counts(path).at("retri") == 0);  // b.py was the only row with it
  }
  SECTION("writes outside a transaction, each its own") {
    index->put_file(make_file("e.py"), {make_chunk("fileName", "file name and file path")});
    index->remove_file("c.py");
    check_kept(path);
  }
  SECTION("a rolled-back transaction counts nothing") {
    const auto before = kept_counts(path);
    index->begin();
    index->put_file(make_file("f.py"), {make_chunk("parseFile", "parse the file, the config, the path")});
    index->remove_file("a.py");
    index->rollback();
    CHECK(kept_counts(path) == before);
    check_kept(path);
    index->put_file(make_file("g.py"), {make_chunk("openConfig", "open config")});
    check_kept(path);
  }
  SECTION("another connection, opened later, goes on counting") {
    index.reset();
    auto again = open_store(path);
    again->put_file(make_file("h.py"), {make_chunk("readConfig", "read config file")});
    check_kept(path);
  }
  SECTION("an index that grew by a quarter is counted afresh, with its new terms") {
    index->begin();
    for (int i = 0; i < 4; ++i) {
      index->put_file(make_file("new" + std::to_string(i) + ".py"),
                      {make_chunk("walkTree" + std::to_string(i), "walk the directory tree")});
    }
    index->commit();
    CHECK(kept_counts(path).count("walk") == 0);
    index->update_term_docs();
    CHECK(kept_counts(path).at("walk") == 4);
    CHECK(kept_counts(path).size() == fts_counts(path).size());
  }
  SECTION("an index below the bounded search's size keeps none") {
    index->set_bounded_search(1'000'000);
    index->update_term_docs();
    CHECK(kept_counts(path).empty());
  }
}

TEST_CASE("store: term counts made on another connection while this one merges are the ones kept") {
  // `kasava index` counts the common terms on a second connection while the first merges the
  // full-text index (commands/index.cpp): the counts it writes must be FTS5's.
  test::TempDir dir;
  const auto path = dir.file("index.db");
  auto index = open_store(path);
  index->set_bounded_search(0);
  index->set_merging(store::Store::Merging::deferred);  // as a first index: many segments
  for (int f = 0; f < 40; ++f) {
    const std::string n = std::to_string(f);
    index->put_file(make_file("f" + n + ".py"), {make_chunk("parse" + n, "parse the config file " + n),
                                                 make_chunk("read" + n, f % 3 == 0 ? "read it" : "read the file")});
  }
  const auto due = index->term_docs_refill_due();
  REQUIRE(due);
  CHECK(due->largest_id == 80);
  std::vector<std::pair<std::string, std::int64_t>> counted;
  std::thread counting([&] { counted = open_store(path)->count_common_terms(due->min_docs); });
  index->set_merging(store::Store::Merging::automatic);
  index->optimize();
  counting.join();
  index->refill_term_docs(*due, counted);
  CHECK(kept_counts(path).size() == fts_counts(path).size());
  CHECK(kept_counts(path).at("file") == 40 + 26);  // every parse chunk; read chunks of f not a multiple of 3
  check_kept(path);
  CHECK_FALSE(index->term_docs_refill_due());  // update_term_docs has nothing left to do
  index->put_file(make_file("new.py"), {make_chunk("walk", "walk the file tree")});
  check_kept(path);  // and the writer keeps them exact from there
}

TEST_CASE("store: a bounded search ranks with kept term counts as with counted ones, to the bit") {
  test::TempDir dir;
  const auto path = dir.file("index.db");
  auto index = open_store(path);
  index->set_bounded_search(0);
  std::mt19937 random(5);
  index->begin();
  for (int f = 0; f < 30; ++f) {
    std::vector<types::Chunk> chunks;
    for (int c = 0; c < 10; ++c) {
      const int n = f * 10 + c;
      std::string text = "common value";
      for (int w = 0; w < static_cast<int>(random() % 6); ++w) text += " filler word";
      if (n % 2 == 0) text += " often often";
      if (n % 37 == 0) text += " rare";
      if (n % 11 == 0) text += " seldom";
      chunks.push_back(make_chunk("f" + std::to_string(n), text));
    }
    index->put_file(make_file("src/" + std::to_string(f) + ".py"), chunks);
  }
  index->commit();
  index->update_term_docs();
  REQUIRE(kept_counts(path).count("often") == 1);
  const store::FieldWeights weights;
  const std::vector<std::string> expressions = {
      "\"common\" OR \"rare\"", "\"often\" OR \"rare\" OR \"common\"", "\"seldom\" OR \"often\"",
      "\"rare\" OR \"seldom\" OR \"common\" OR \"often\"", "\"values\" OR \"rare\"",
      "\"filler word\" OR \"rare\""};
  const auto search_all = [&] {
    std::vector<std::vector<store::LexicalHit>> pages;
    for (const auto& expression : expressions) {
      for (const int limit : {1, 5, 40}) {
        auto page = index->lexical_search(expression, weights, limit);
        REQUIRE(page);
        pages.push_back(*page);
      }
    }
    return pages;
  };
  const auto with_kept = search_all();
  test::run("sqlite3 '" + path + "' \"UPDATE term_docs SET docs = docs - 7 WHERE term = 'often'\"");
  const auto with_wrong = search_all();
  test::run("sqlite3 '" + path + "' \"DELETE FROM term_docs\"");
  const auto counted = search_all();
  REQUIRE(with_kept.size() == counted.size());
  bool any_differs = false;
  for (std::size_t p = 0; p < counted.size(); ++p) {
    REQUIRE(with_kept[p].size() == counted[p].size());
    for (std::size_t i = 0; i < counted[p].size(); ++i) {
      CHECK(with_kept[p][i].chunk_id == counted[p][i].chunk_id);
      CHECK(with_kept[p][i].score == counted[p][i].score);
      if (i < with_wrong[p].size() && with_wrong[p][i].score != counted[p][i].score) any_differs = true;
    }
  }
  CHECK(any_differs);  // so the search did read the kept counts
}

TEST_CASE("store: an index of schema 8 is read without kept counts and gets them when written") {
  test::TempDir dir;
  const auto path = dir.file("index.db");
  counted_index(path);
  test::run("sqlite3 '" + path + "' \"DROP TABLE term_docs; UPDATE meta SET value = '8' WHERE key = 'schema_version'\"");
  {
    auto reader = open_store(path, store::OpenMode::read_only);
    reader->set_bounded_search(0);
    const auto page = reader->lexical_search("\"file\" OR \"config\"", store::FieldWeights{}, 5);
    REQUIRE(page);
    CHECK(page->size() == 2);
  }
  auto index = open_store(path);
  index->set_bounded_search(0);
  CHECK(index->meta("schema_version") == std::to_string(store::k_schema_version));
  CHECK(kept_counts(path).empty());
  index->update_term_docs();
  CHECK(kept_counts(path).at("file") == 2);
  check_kept(path);
}

TEST_CASE("store::check_index finds a kept term count that differs from FTS5's") {
  test::TempDir dir;
  const auto path = dir.file("index.db");
  {
    auto index = counted_index(path);
    index->remove_file("a.py");
    index->put_file(make_file("b.py"), {make_chunk("openFile", "open the file")});
  }
  auto sound = store::check_index(path);
  REQUIRE(sound);
  CHECK(sound->problems.empty());
  test::run("sqlite3 '" + path + "' \"UPDATE term_docs SET docs = docs + 1 WHERE term = 'file'\"");
  auto damaged = store::check_index(path);
  REQUIRE(damaged);
  REQUIRE(damaged->problems.size() == 1);
  CHECK(damaged->problems[0] == "the kept document counts of 1 terms (first 'file') differ from the full-text index");
}
