// Tests for core/store/chunk_lengths.cpp: the chunk lengths the writer keeps equal FTS5's own,
// kasava_bm25 scores every row as FTS5's bm25() does, indexes without lengths still rank the
// same, and verify finds a wrong length.
#include <catch2/catch.hpp>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "core/store/chunk_lengths.hpp"
#include "core/store/sqlite.hpp"
#include "core/store/store.hpp"
#include "core/store/tokenizer.hpp"
#include "store_support.hpp"
#include "support.hpp"

using kasava::store::ChunkLengths;
using kasava::store::FieldWeights;
using kasava::store::FileRecord;
using kasava::store::OpenMode;
using kasava::store::Store;
using kasava::types::Chunk;
namespace sqlite = kasava::store::sqlite;

namespace {

using kasava::test::TempDir;

using kasava::test::open_store;

Chunk make_chunk(std::string symbol, std::string text, std::string doc = "") {
  Chunk chunk;
  chunk.kind = "function";
  chunk.symbol = std::move(symbol);
  chunk.text = std::move(text);
  chunk.doc = std::move(doc);
  chunk.start_line = 1;
  chunk.end_line = 3;
  return chunk;
}

FileRecord make_file(std::string path) {
  return FileRecord{std::move(path), "b1", "cpp", 100, ""};
}

// A few files whose chunks differ in length and in how often the query words occur.
void fill(Store& store) {
  store.begin();
  store.put_file(make_file("src/config/parse_config.cpp"),
                 {make_chunk("parseConfig", "Config parseConfig(const char* path) { return read_file(path); }",
                             "Parses the config file at path."),
                  make_chunk("readFile", "std::string read_file(const char* path) { /* open, read */ }")});
  store.put_file(make_file("src/net/retry.cpp"),
                 {make_chunk("retryWithBackoff",
                             "void retry_with_backoff(Request request) { for (int i = 0; i < 5; ++i) "
                             "{ sleep(backoff(i)); if (send(request)) return; } }",
                             "Retries a request with exponential backoff.")});
  std::string long_body;
  for (int i = 0; i < 300; ++i) long_body += "config value " + std::to_string(i) + " file ";
  store.put_file(make_file("docs/long_file.txt"), {make_chunk("", long_body)});
  store.commit();
  // Outside a transaction, too: each file is its own.
  store.put_file(make_file("src/file.cpp"),
                 {make_chunk("openFile", "File open_file(const char* name) { return File(name); }",
                             "Opens the file called name.")});
}

// rowid, bm25() and kasava_bm25() of every row that matches, on a connection of our own.
struct Scored {
  std::int64_t rowid;
  double bm25;
  double ours;
};

std::vector<Scored> score_both(sqlite::Database& db, const std::string& expression) {
  std::vector<Scored> rows;
  auto query = db.query(
      "SELECT rowid, bm25(chunks_fts, 4.0, 1.5, 2.0, 1.0), kasava_bm25(chunks_fts, 4.0, 1.5, 2.0, 1.0)"
      " FROM chunks_fts WHERE chunks_fts MATCH ?1");
  query.bind(1, expression);
  while (query.step()) {
    rows.push_back(Scored{query.column_int64(0), query.column_double(1), query.column_double(2)});
  }
  return rows;
}

// The same chunks with the same scores, to the bit, in the same order.
void check_same_hits(const std::vector<kasava::store::LexicalHit>& after,
                     const std::vector<kasava::store::LexicalHit>& before) {
  REQUIRE(after.size() == before.size());
  for (std::size_t i = 0; i < after.size(); ++i) {
    CHECK(after[i].chunk_id == before[i].chunk_id);
    CHECK(after[i].score == before[i].score);
  }
}

const std::vector<std::string> k_expressions = {
    "config", "file", "config OR file", "parse OR config OR file", "retry OR backoff OR request",
    "\"read file\"", "path OR name OR open"};

} // namespace

TEST_CASE("store: kasava_bm25 scores every row exactly as bm25() does, with the kept lengths") {
  TempDir dir;
  const auto path = dir.file("index.db");
  fill(*open_store(path));

  sqlite::Database db(path, SQLITE_OPEN_READONLY);
  REQUIRE(kasava::store::register_tokenizer(db.get()).empty());
  ChunkLengths lengths(db);
  REQUIRE(kasava::store::register_ranking(db.get(), &lengths).empty());
  for (const auto& expression : k_expressions) {
    INFO(expression);
    const auto rows = score_both(db, expression);
    REQUIRE_FALSE(rows.empty());
    for (const auto& row : rows) {
      INFO("row " << row.rowid);
      CHECK(row.bm25 < 0);
      CHECK(row.ours == row.bm25);
      CHECK(lengths.tokens(row.rowid) > 0);  // kept, so FTS5 was not asked
    }
  }
}

TEST_CASE("store: a lexical search of OR-ed terms ranks as ORDER BY bm25(), rowid, ties included") {
  // lexical_search scores an OR query's rows after the scan, with document frequencies counted
  // from the rows themselves: it must give what bm25() ordered by SQLite gives. Many short
  // chunks of a small vocabulary, so that scores tie and terms are common and rare.
  TempDir dir;
  const auto path = dir.file("index.db");
  const std::vector<std::string> words = {"open", "file", "config", "parse", "retry", "socket", "read", "write"};
  std::mt19937 random(7);
  {
    auto store = open_store(path);
    store->begin();
    for (int f = 0; f < 60; ++f) {
      std::vector<Chunk> chunks;
      for (int c = 0; c < 4; ++c) {
        std::string text;
        const int length = 1 + static_cast<int>(random() % 6);
        for (int w = 0; w < length; ++w) text += words[random() % words.size()] + " ";
        chunks.push_back(make_chunk(c % 2 == 0 ? words[random() % words.size()] : "", text,
                                    c == 3 ? words[random() % words.size()] : ""));
      }
      store->put_file(make_file("src/" + words[f % words.size()] + "/f" + std::to_string(f) + ".cpp"), chunks);
    }
    store->commit();
  }
  auto reader = open_store(path, OpenMode::read_only);
  sqlite::Database db(path, SQLITE_OPEN_READONLY);
  REQUIRE(kasava::store::register_tokenizer(db.get()).empty());
  const FieldWeights weights;
  for (const std::string expression :
       {"\"file\"", "\"open\" OR \"file\"", "\"retry\" OR \"socket\" OR \"config\"",
        "\"open\" OR \"file\" OR \"config\" OR \"parse\" OR \"read\"", "\"src\" OR \"write\""}) {
    for (const int limit : {1, 7, 40, 1000}) {
      INFO(expression << " limit " << limit);
      std::vector<std::pair<std::int64_t, double>> expected;
      auto query = db.query(
          "SELECT rowid, bm25(chunks_fts, ?1, ?2, ?3, ?4) AS score FROM chunks_fts WHERE chunks_fts MATCH ?5"
          " ORDER BY score, rowid LIMIT ?6");
      query.bind(1, weights.symbol).bind(2, weights.path).bind(3, weights.doc).bind(4, weights.body);
      query.bind(5, expression).bind(6, static_cast<std::int64_t>(limit));
      while (query.step()) expected.emplace_back(query.column_int64(0), -query.column_double(1));
      REQUIRE_FALSE(expected.empty());
      const auto hits = reader->lexical_search(expression, weights, limit).value();
      REQUIRE(hits.size() == expected.size());
      for (std::size_t i = 0; i < hits.size(); ++i) {
        INFO("rank " << i);
        CHECK(hits[i].chunk_id == expected[i].first);
        CHECK(hits[i].score == expected[i].second);
      }
    }
  }
}

TEST_CASE("store: the kept length of each chunk is FTS5's own") {
  TempDir dir;
  const auto path = dir.file("index.db");
  fill(*open_store(path));
  sqlite::Database db(path, SQLITE_OPEN_READONLY);
  ChunkLengths lengths(db);
  auto query = db.query("SELECT id, sz FROM chunks_fts_docsize");
  int rows = 0;
  while (query.step()) {
    const auto sz = query.column_blob(1);
    const auto total = kasava::store::docsize_total(sz.data(), sz.size());
    REQUIRE(total);
    CHECK(lengths.tokens(query.column_int64(0)) == *total);
    ++rows;
  }
  CHECK(rows == 5);
}

TEST_CASE("store: kept lengths from an empty or short blob read as unknown, not past its end") {
  CHECK(kasava::store::decode_lengths({}) == std::vector<std::uint16_t>(kasava::store::k_lengths_per_block, 0));
  const std::vector<std::uint8_t> three_bytes = {0x34, 0x12, 0x77};
  const auto values = kasava::store::decode_lengths(three_bytes);
  REQUIRE(values.size() == static_cast<std::size_t>(kasava::store::k_lengths_per_block));
  CHECK(values[0] == 0x1234);
  CHECK(values[1] == 0);  // the odd byte is not half a length

  // A damaged file whose blocks are empty: every search still ranks, with FTS5's lengths.
  TempDir dir;
  const auto path = dir.file("index.db");
  std::vector<kasava::store::LexicalHit> before;
  {
    auto store = open_store(path);
    fill(*store);
    before = store->lexical_search("config OR file", FieldWeights{}, 100).value();
  }
  REQUIRE_FALSE(before.empty());
  kasava::test::run("sqlite3 '" + path + "' \"UPDATE chunk_sizes SET sizes = X''\"");
  sqlite::Database db(path, SQLITE_OPEN_READONLY);
  ChunkLengths lengths(db);
  CHECK(lengths.tokens(before.front().chunk_id) == 0);
  auto reader = open_store(path, OpenMode::read_only);
  check_same_hits(reader->lexical_search("config OR file", FieldWeights{}, 100).value(), before);
}

TEST_CASE("store: without kept lengths (an older index, a chunk too long) ranking uses FTS5's") {
  TempDir dir;
  const auto path = dir.file("index.db");
  std::vector<kasava::store::LexicalHit> before;
  {
    auto store = open_store(path);
    fill(*store);
    // Longer than a kept length can say: recorded as unknown.
    std::string huge;
    for (int i = 0; i < 70000; ++i) huge += "config ";
    store->put_file(make_file("huge.txt"), {make_chunk("", huge)});
    before = store->lexical_search("config OR file", FieldWeights{}, 100).value();
  }
  {
    sqlite::Database db(path, SQLITE_OPEN_READONLY);
    ChunkLengths lengths(db);
    auto query = db.query("SELECT c.id FROM chunks c JOIN files f ON f.id = c.file_id WHERE f.path = 'huge.txt'");
    REQUIRE(query.step());
    CHECK(lengths.tokens(query.column_int64(0)) == 0);
  }
  // An index of schema 4: no chunk_sizes table at all.
  kasava::test::run("sqlite3 '" + path +
                    "' \"DROP TABLE chunk_sizes; UPDATE meta SET value = '4' WHERE key = 'schema_version'\"");
  REQUIRE(Store::schema_version(path) == 4);
  {
    auto reader = open_store(path, OpenMode::read_only);
    check_same_hits(reader->lexical_search("config OR file", FieldWeights{}, 100).value(), before);
  }
  // Opening it for writing makes it schema 5 and copies the lengths from FTS5's docsize.
  {
    auto store = open_store(path);
    CHECK(store->meta("schema_version") == std::to_string(kasava::store::k_schema_version));
    store->put_file(make_file("new.cpp"), {make_chunk("configFile", "int config_file() { return 0; }")});
    const auto after = store->lexical_search("config OR file", FieldWeights{}, 100).value();
    REQUIRE(after.size() == before.size() + 1);
  }
  {
    sqlite::Database db(path, SQLITE_OPEN_READONLY);
    ChunkLengths lengths(db);
    auto query = db.query(
        "SELECT c.id, f.path FROM chunks c JOIN files f ON f.id = c.file_id WHERE f.path != 'huge.txt'");
    int kept = 0;
    while (query.step()) {
      INFO(query.column_text(1));
      CHECK(lengths.tokens(query.column_int64(0)) > 0);
      ++kept;
    }
    CHECK(kept == 6);
  }
  auto check = kasava::store::check_index(path);
  REQUIRE(check);
  CHECK(check->problems.empty());
  CHECK(check->inconsistent_paths.empty());
}

TEST_CASE("store: a write rolled back leaves no kept lengths behind") {
  TempDir dir;
  const auto path = dir.file("index.db");
  {
    auto store = open_store(path);
    store->begin();
    store->put_file(make_file("a.cpp"), {make_chunk("alpha", "int alpha() { return 1; }")});
    store->rollback();
    // The next commit, of a file without chunks, must not write what was rolled back.
    store->begin();
    FileRecord skipped = make_file("b.bin");
    skipped.skip_reason = "binary";
    store->put_file(skipped, {});
    store->commit();
  }
  CHECK(kasava::test::run("sqlite3 '" + path + "' 'SELECT count(*) FROM chunk_sizes'") == "0");
}

TEST_CASE("store::check_index names the file of a chunk whose kept length is wrong") {
  TempDir dir;
  const auto path = dir.file("index.db");
  fill(*open_store(path));
  {
    auto sound = kasava::store::check_index(path);
    REQUIRE(sound);
    REQUIRE(sound->inconsistent_paths.empty());
  }
  // Chunk 1 (the first of parse_config.cpp) is slot 1 of block 0: bytes 2 and 3.
  kasava::test::run("sqlite3 '" + path +
                    "' \"UPDATE chunk_sizes SET sizes = substr(sizes, 1, 2) || X'3412' || substr(sizes, 5)"
                    " WHERE block = 0\"");
  auto check = kasava::store::check_index(path);
  REQUIRE(check);
  CHECK(check->problems.empty());
  CHECK(check->inconsistent_paths == std::vector<std::string>{"src/config/parse_config.cpp"});
}
