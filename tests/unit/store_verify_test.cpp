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
