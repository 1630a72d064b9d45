// The lexical search's bound on common terms (core/store/store.cpp, Store::lexical_search):
// in a large index, rows that hold only common terms are not visited when a bound on their
// BM25 shows they cannot enter the page; the page must be the plain query's, to the bit.
#include <catch2/catch.hpp>

#include <random>
#include <set>

#include "core/store/store.hpp"
#include "store_support.hpp"
#include "support.hpp"

using namespace kasava;

namespace {

types::Chunk make_chunk(int file, int line) {
  types::Chunk chunk;
  chunk.kind = "function";
  chunk.symbol = "f" + std::to_string(file) + "_" + std::to_string(line);
  chunk.start_line = line;
  chunk.end_line = line + 1;
  chunk.text = "def " + chunk.symbol + "():\n    pass\n";
  return chunk;
}

using kasava::test::open_store;

}  // namespace

TEST_CASE("store::Store::lexical_search gives the plain query's page with its bound on common terms") {
  test::TempDir dir;
  auto store = open_store(dir.file("index.db"));
  // "common" in every chunk, "often" in half, "rare" in a few, with varied lengths and places.
  std::mt19937 random(17);
  store->begin();
  for (int f = 0; f < 40; ++f) {
    std::vector<types::Chunk> chunks;
    for (int c = 0; c < 10; ++c) {
      types::Chunk chunk = make_chunk(f, 1 + 3 * c);
      const int n = f * 10 + c;
      chunk.text = "common value " + std::string(static_cast<std::size_t>(random() % 5), 'x');
      for (int w = 0; w < static_cast<int>(random() % 6); ++w) chunk.text += " filler word";
      if (n % 2 == 0) chunk.text += " often often";
      if (n % 37 == 0) chunk.text += " rare";
      if (n % 53 == 0) chunk.symbol = "rare_thing";
      if (n % 11 == 0) chunk.text += " seldom";
      chunks.push_back(chunk);
    }
    store->put_file({"src/" + std::to_string(f) + ".py", "b" + std::to_string(f), "python", 10, ""}, chunks);
  }
  store->commit();
  const store::FieldWeights weights;
  for (const char* expression :
       {"\"common\" OR \"rare\"", "\"often\" OR \"rare\" OR \"common\"", "\"seldom\" OR \"often\"",
        "\"rare\" OR \"seldom\" OR \"common\" OR \"often\"", "\"common\" OR \"often\"", "\"rare\""}) {
    for (const int limit : {1, 3, 5, 20, 400}) {
      INFO(expression << " limit " << limit);
      store->set_bounded_search(1'000'000'000);  // the plain query
      const auto plain = store->lexical_search(expression, weights, limit);
      store->set_bounded_search(0);
      const auto bounded = store->lexical_search(expression, weights, limit);
      REQUIRE(plain);
      REQUIRE(bounded);
      REQUIRE(plain->size() == bounded->size());
      for (std::size_t i = 0; i < plain->size(); ++i) {
        CHECK((*plain)[i].score == (*bounded)[i].score);  // to the bit
        if ((*plain)[i].score != (*bounded)[i].score) break;
      }
      // The same set of chunks at each score (ties may come in either order).
      std::multiset<std::pair<double, std::int64_t>> a, b;
      for (const auto& hit : *plain) a.insert({hit.score, hit.chunk_id});
      for (const auto& hit : *bounded) b.insert({hit.score, hit.chunk_id});
      store->set_bounded_search(1'000'000'000);
      const auto more = store->lexical_search(expression, weights, limit + 1);
      REQUIRE(more);
      const auto at = static_cast<std::size_t>(limit);
      if (more->size() <= at || (*more)[at].score != (*more)[at - 1].score) CHECK(a == b);
    }
  }
  // Not an OR of quoted terms, or an invalid one: the plain query's answer or error.
  store->set_bounded_search(0);
  CHECK(store->lexical_search("common AND rare", weights, 5));
  CHECK_FALSE(store->lexical_search("\"common\" OR", weights, 5));
}
