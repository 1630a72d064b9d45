// Unit tests for core/search/search.cpp: query expressions and ranking on a real store.
#include <catch2/catch.hpp>

#include "core/search/search.hpp"
#include "support.hpp"

using namespace kasava;

namespace {

types::Chunk make_chunk(std::string kind, std::string symbol, int start, std::string text) {
  types::Chunk chunk;
  chunk.kind = std::move(kind);
  chunk.symbol = std::move(symbol);
  chunk.start_line = start;
  chunk.end_line = start + 2;
  chunk.text = std::move(text);
  return chunk;
}

struct TempStore {
  test::TempDir dir;
  std::unique_ptr<store::Store> store =
      std::move(store::Store::open(dir.file("index.db"), store::OpenMode::read_write).value());
};

} // namespace

TEST_CASE("search::match_expression quotes and ORs the query terms") {
  CHECK(search::match_expression("where is parseConfig") ==
        R"("parseconfig" OR "parse" OR "config")");
  CHECK(search::match_expression("  ?? ") == "");
  CHECK(search::match_expression("say \"hi\"") == R"("say" OR "hi")");
}

TEST_CASE("search::qualified_name uses the language's separator") {
  store::ChunkRecord record;
  record.chunk.symbol = "open";
  CHECK(search::qualified_name(record) == "open");
  record.chunk.parent = "Store";
  record.language = "cpp";
  CHECK(search::qualified_name(record) == "Store::open");
  record.language = "go";
  CHECK(search::qualified_name(record) == "Store.open");
}

TEST_CASE("search::search ranks symbol matches first and groups by file") {
  TempStore temp;
  auto& store = *temp.store;
  store.begin();
  std::vector<types::Chunk> big;
  for (int i = 0; i < 6; ++i) {
    big.push_back(make_chunk("function", "helper" + std::to_string(i), 1 + i * 3,
                             "def helper():\n    retry the upload\n    retry again\n"));
  }
  store.put_file({"a/many.py", "1111", "python", 100, ""}, big);
  store.put_file({"b/upload.py", "2222", "python", 50, ""},
                 {make_chunk("function", "retry_upload", 1, "def retry_upload():\n    pass\n")});
  store.put_file({"c/notes.md", "3333", "markdown", 10, ""},
                 {make_chunk("block", "", 1, "nothing relevant here\n")});
  store.commit();

  search::SearchOptions options;
  options.query = "retry upload";
  options.limit = 4;
  auto hits = search::search(store, options, nullptr);
  REQUIRE(hits.ok());
  REQUIRE(hits->size() == 4);
  CHECK((*hits)[0].record.path == "b/upload.py");
  CHECK((*hits)[0].rank == 1);
  CHECK((*hits)[0].score > 0.0);
  CHECK((*hits)[0].score <= 1.0);
  // At most max_per_file (3) chunks of a/many.py before the list is full.
  int from_many = 0;
  for (const auto& hit : *hits) from_many += hit.record.path == "a/many.py";
  CHECK(from_many == 3);

  options.language = "markdown";
  CHECK(search::search(store, options, nullptr)->empty());
  options.language = "";
  options.path_glob = "a/**";
  auto filtered = search::search(store, options, nullptr);
  REQUIRE(filtered->size() == 4);
  for (const auto& hit : *filtered) CHECK(hit.record.path == "a/many.py");

  options.path_glob = "";
  options.min_score = 0.999;
  CHECK(search::search(store, options, nullptr)->empty());

  options.min_score = 0;
  options.mode = search::Mode::semantic;
  auto semantic = search::search(store, options, nullptr);
  REQUIRE_FALSE(semantic.ok());
  CHECK(semantic.error().message.find("--mode lexical") != std::string::npos);
}
