// Unit tests of core/store/verify.cpp: check_index() on sound and damaged index files.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <string>

#include "core/store/store.hpp"
#include "support.hpp"

namespace {

using kasava::store::check_index;
using kasava::store::FileRecord;
using kasava::store::OpenMode;
using kasava::store::Store;
using kasava::test::TempDir;
using kasava::types::Chunk;

Chunk chunk_named(const std::string& symbol) {
  Chunk chunk;
  chunk.kind = "function";
  chunk.symbol = symbol;
  chunk.text = "void " + symbol + "() {}";
  chunk.start_line = 1;
  chunk.end_line = 1;
  return chunk;
}

void fill(const std::string& path) {
  auto store = Store::open(path, OpenMode::read_write).value_or_throw();
  store->begin();
  store->put_file(FileRecord{"a.cpp", "b1", "cpp", 10, ""}, {chunk_named("alpha"), chunk_named("beta")});
  store->put_file(FileRecord{"b.cpp", "b2", "cpp", 10, ""}, {chunk_named("gamma")});
  store->put_file(FileRecord{"c.bin", "b3", "", 10, "binary"}, {});
  store->commit();
  store->remove_file("b.cpp");  // a delete from the contentless FTS table must leave it sound
}

}  // namespace

TEST_CASE("store::check_index: a sound index has no problems and counts its rows") {
  TempDir dir;
  const auto path = dir.file("index.db");
  fill(path);
  auto check = check_index(path);
  REQUIRE(check);
  CHECK(check->problems.empty());
  CHECK(check->inconsistent_paths.empty());
  CHECK(check->files == 2);
  CHECK(check->chunks == 2);
  CHECK(check->fts_rows == 2);
  CHECK(check->vectors == 0);
  CHECK(check->embedding_model.empty());
}

TEST_CASE("store::check_index: damage in the file is a problem, not an exception") {
  TempDir dir;
  const auto path = dir.file("index.db");
  fill(path);
  const auto size = std::filesystem::file_size(path);
  {
    std::fstream file(path, std::ios::in | std::ios::out | std::ios::binary);
    file.seekp(static_cast<std::streamoff>(size / 2));
    const std::string junk(static_cast<std::size_t>(size / 2), '\xab');
    file.write(junk.data(), static_cast<std::streamsize>(junk.size()));
  }
  auto check = check_index(path);
  if (check) CHECK(!check->problems.empty());  // else: the file cannot even be opened
}

TEST_CASE("store::check_index: a missing file is an error naming it") {
  TempDir dir;
  auto check = check_index(dir.file("missing.db"));
  REQUIRE(!check);
  CHECK(check.error().message.find("missing.db") != std::string::npos);
}

TEST_CASE("store::check_index: chunk text that does not decode is damage that needs a rebuild") {
  // Each way packed text can be damaged, made with the sqlite3 CLI: the damage is named, and
  // reading the chunk is an error that says to rebuild, never wrong text.
  struct Damage {
    const char* sql;
    const char* named;
  };
  const Damage damages[] = {
      {"UPDATE text_packs SET data = substr(data, 1, length(data) - 2)",
       "damaged compressed data"},
      {"DELETE FROM text_packs", "its pack is missing"},
      {"UPDATE chunks SET text = x'02' WHERE id = (SELECT min(id) FROM chunks)",
       "its reference is malformed"},
      {"UPDATE chunks SET text = x'02010000ff7f00' WHERE id = (SELECT min(id) FROM chunks)",
       "it lies outside its pack"},
  };
  for (const Damage& damage : damages) {
    INFO(damage.sql);
    TempDir dir;
    const auto path = dir.file("index.db");
    fill(path);
    kasava::test::run(std::string("sqlite3 '") + path + "' \"" + damage.sql + "\"");
    auto check = check_index(path);
    REQUIRE(check);
    REQUIRE(check->problems.size() == 1);
    CHECK(check->problems[0].find("chunks' text does not decode (chunk 1 of 'a.cpp': ") !=
          std::string::npos);
    CHECK(check->problems[0].find(damage.named) != std::string::npos);

    auto store = Store::open(path, OpenMode::read_only).value_or_throw();
    try {
      store->chunks_by_id({1, 2});
      FAIL("no error");
    } catch (const kasava::util::Failure& failure) {
      const std::string message = failure.what();
      CHECK(message.find("is damaged") != std::string::npos);
      CHECK(message.find("kasava index --rebuild") != std::string::npos);
    }
    // Its head (no text) still reads.
    CHECK(store->chunks_by_id({1}, Store::Detail::head).size() == 1);
  }
}

TEST_CASE("store::check_index: a pack of text no chunk refers to is damage") {
  TempDir dir;
  const auto path = dir.file("index.db");
  fill(path);
  kasava::test::run("sqlite3 '" + path + "' \"INSERT INTO text_packs(data) VALUES(x'00')\"");
  auto check = check_index(path);
  REQUIRE(check);
  CHECK(check->problems == std::vector<std::string>{"1 packs of chunk text belong to no chunk"});
}

TEST_CASE("store::check_index: the history field is no damage after updates") {
  TempDir dir;
  const auto path = dir.file("index.db");
  fill(path);
  {
    auto store = Store::open(path, OpenMode::read_write).value_or_throw();
    for (const char* tip : {"t1", "t2"}) {
      store->begin();
      store->put_history({{std::string("change of ") + tip, {"a.cpp", "c.bin"}}}, false, tip, 1);
      store->commit();
    }
  }
  auto sound = check_index(path);
  REQUIRE(sound);
  CHECK(sound->problems.empty());
}
