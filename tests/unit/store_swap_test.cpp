// Tests for Store::swap_in and the partial mark (core/store/store.cpp): an index built beside
// another replaces it in one transaction while a reader keeps its snapshot of the old one,
// and writes mark an index partial until mark_complete().
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "core/store/store.hpp"
#include "store_support.hpp"
#include "support.hpp"

namespace fs = std::filesystem;
using kasava::store::FieldWeights;
using kasava::store::FileRecord;
using kasava::store::Store;
using kasava::test::open_store;
using kasava::test::TempDir;
using kasava::types::Chunk;

namespace {

// An index at `path` holding `files` files, each with one chunk whose text names `word`.
void build(const std::string& path, const std::string& word, int files) {
  auto store = open_store(path);
  store->begin();
  for (int i = 0; i < files; ++i) {
    Chunk chunk;
    chunk.kind = "function";
    chunk.symbol = word + std::to_string(i);
    chunk.text = "int " + word + "_" + std::to_string(i) + "() { return " + word + "; }";
    chunk.start_line = 1;
    chunk.end_line = 1;
    store->put_file(FileRecord{"src/" + word + std::to_string(i) + ".c", "blob" + std::to_string(i),
                               "c", 100, ""},
                    {chunk});
  }
  store->commit();
  store->set_meta("indexed_at", "now");
  store->mark_complete();
}

std::size_t found(const Store& store, const std::string& word) {
  auto hits = store.lexical_search(word, FieldWeights{}, 1000);
  REQUIRE(hits.ok());
  return hits->size();
}

}  // namespace

TEST_CASE("store::swap_in: readers keep the old index until the copy commits, then see the new one") {
  TempDir dir;
  const std::string path = dir.path() + "/index.db";
  const std::string built = path + ".rebuild";
  build(path, "alpha", 300);
  build(built, "omega", 500);

  auto reader = open_store(path, kasava::store::OpenMode::read_only);
  {
    const Store::ReadSnapshot snapshot(*reader);
    CHECK(found(*reader, "alpha") == 300);
    const auto swapped = Store::swap_in(built, path);
    if (!swapped) FAIL(swapped.error().message);
    // Within its snapshot, the reader still sees the old index whole.
    CHECK(found(*reader, "alpha") == 300);
    CHECK(found(*reader, "omega") == 0);
  }
  // Its next read sees the new one, through the same connection (same file, no reopen).
  CHECK(found(*reader, "alpha") == 0);
  CHECK(found(*reader, "omega") == 500);
  CHECK_FALSE(fs::exists(built));
  CHECK(open_store(path)->counts().files == 500);
}

TEST_CASE("store::swap_in: a file SQLite cannot open is renamed over") {
  TempDir dir;
  const std::string path = dir.path() + "/index.db";
  const std::string built = path + ".rebuild";
  { std::ofstream(path) << std::string(4096, 'x'); }
  build(built, "omega", 10);
  REQUIRE(Store::swap_in(built, path).ok());
  CHECK(found(*open_store(path, kasava::store::OpenMode::read_only), "omega") == 10);
  CHECK_FALSE(fs::exists(built));
}

TEST_CASE("store::mark_complete: every write marks the index partial until the run completes") {
  TempDir dir;
  const std::string path = dir.path() + "/index.db";
  auto store = open_store(path);
  CHECK(store->marked_complete());  // nothing written yet
  build(path, "alpha", 2);
  CHECK(store->marked_complete());
  store->remove_file("src/alpha0.c");
  CHECK_FALSE(store->marked_complete());
  store->mark_complete();
  CHECK(store->marked_complete());
  // A transaction's first write marks it again, and a rollback takes the mark back.
  store->begin();
  store->remove_file("src/alpha1.c");
  CHECK_FALSE(store->marked_complete());
  store->rollback();
  CHECK(store->marked_complete());
  store->begin();
  store->remove_file("src/alpha1.c");
  store->commit();
  CHECK_FALSE(open_store(path, kasava::store::OpenMode::read_only)->marked_complete());
}
