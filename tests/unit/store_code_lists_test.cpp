// Tests for core/store/code_lists.cpp and the store's code lists: the partition keeps clusters
// together and orders lists by distance; a store with lists answers nearest_codes as the
// exhaustive scan does when it probes every list, follows files written, replaced and removed
// after the lists were built, and builds them again once enough files changed. And the
// lexical search's bound on common terms (store.cpp) gives the plain query's page, to the bit.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <random>
#include <set>

#include "core/store/code_lists.hpp"
#include "core/store/store.hpp"
#include "core/store/vectors.hpp"
#include "store_support.hpp"
#include "support.hpp"

using namespace kasava;

namespace {

constexpr int k_dims = 64;

std::vector<float> random_unit_vector(std::mt19937& random, int dims) {
  std::normal_distribution<float> normal;
  std::vector<float> vector(static_cast<std::size_t>(dims));
  double norm = 0.0;
  for (float& value : vector) {
    value = normal(random);
    norm += static_cast<double>(value) * value;
  }
  for (float& value : vector) value = static_cast<float>(value / std::sqrt(norm));
  return vector;
}

types::Chunk make_chunk(int file, int line) {
  types::Chunk chunk;
  chunk.kind = "function";
  chunk.symbol = "f" + std::to_string(file) + "_" + std::to_string(line);
  chunk.start_line = line;
  chunk.end_line = line + 1;
  chunk.text = "def " + chunk.symbol + "():\n    pass\n";
  return chunk;
}

// Writes file `f` with `chunks` random vectors (in its own transaction).
void put_random_file(store::Store& store, std::mt19937& random, int f, int chunks) {
  std::vector<types::Chunk> list;
  std::vector<store::QuantizedVector> vectors;
  for (int c = 0; c < chunks; ++c) {
    list.push_back(make_chunk(f, 1 + 3 * c));
    vectors.push_back(store::quantize(random_unit_vector(random, k_dims)));
  }
  store.put_file({"src/" + std::to_string(f) + ".py", "blob" + std::to_string(f), "python", 10, ""},
                 list, vectors);
}

// What the exhaustive scan answers (a filter that takes every file forces it).
std::vector<store::CodeHit> exhaustive(const store::Store& store, const std::vector<std::uint8_t>& code,
                                       int limit) {
  return store.nearest_codes(code, limit, [](std::string_view, std::string_view) { return true; });
}

void check_same(const std::vector<store::CodeHit>& a, const std::vector<store::CodeHit>& b) {
  REQUIRE(a.size() == b.size());
  for (std::size_t i = 0; i < a.size(); ++i) {
    CHECK(a[i].chunk_id == b[i].chunk_id);
    CHECK(a[i].distance == b[i].distance);
  }
}

using kasava::test::open_store;

}  // namespace

TEST_CASE("store::partition_codes keeps clusters together and lists_by_distance finds the nearest") {
  // Four far-apart centres, 200 codes each within a few bits of theirs.
  std::mt19937 random(3);
  constexpr std::size_t bytes = 32;
  std::vector<std::vector<std::uint8_t>> centres(4, std::vector<std::uint8_t>(bytes));
  for (auto& centre : centres) {
    for (auto& b : centre) b = static_cast<std::uint8_t>(random() & 0xFF);
  }
  std::vector<std::uint8_t> codes;
  std::vector<int> cluster;
  for (int i = 0; i < 800; ++i) {
    auto code = centres[static_cast<std::size_t>(i % 4)];
    for (int flip = 0; flip < 6; ++flip) {
      const auto bit = random() % (bytes * 8);
      code[bit / 8] = static_cast<std::uint8_t>(code[bit / 8] ^ (1u << (bit % 8)));
    }
    codes.insert(codes.end(), code.begin(), code.end());
    cluster.push_back(i % 4);
  }
  const auto partition = store::partition_codes(codes.data(), 800, bytes, 4, 2);
  REQUIRE(partition.lists == 4);
  REQUIRE(partition.list_of.size() == 800);
  REQUIRE(partition.shares.size() == 4 * bytes * 8);
  // Each cluster in one list, each list one cluster.
  std::set<std::pair<int, std::uint32_t>> pairs;
  for (std::size_t i = 0; i < 800; ++i) pairs.insert({cluster[i], partition.list_of[i]});
  CHECK(pairs.size() == 4);
  // The same input, the same partition.
  const auto again = store::partition_codes(codes.data(), 800, bytes, 4, 1);
  CHECK(again.list_of == partition.list_of);
  CHECK(again.shares == partition.shares);
  // A centre's own list comes first.
  for (std::size_t c = 0; c < 4; ++c) {
    const auto order = store::lists_by_distance(partition.shares, centres[c]);
    REQUIRE(order.size() == 4);
    const auto own = std::find(cluster.begin(), cluster.end(), static_cast<int>(c)) - cluster.begin();
    CHECK(order.front() == partition.list_of[static_cast<std::size_t>(own)]);
  }
  CHECK(store::code_list_count(1'440'000) == 600);
  CHECK(store::code_list_count(0) == 1);
}

TEST_CASE("store::Store code lists answer as the full scan and follow later writes") {
  test::TempDir dir;
  auto store = open_store(dir.file("index.db"));
  std::mt19937 random(11);
  store->begin();
  for (int f = 0; f < 60; ++f) put_random_file(*store, random, f, 1 + f % 9);
  store->commit();

  // Below the threshold: no lists, nothing written.
  CHECK_FALSE(store->update_code_lists());
  CHECK_FALSE(store->meta("code_lists"));
  CHECK_FALSE(store->update_code_lists(100'000));

  REQUIRE(store->update_code_lists(10));
  const auto stamp = store->meta("code_lists");
  REQUIRE(stamp);
  CHECK(stamp->rfind(std::to_string(store::code_bytes(k_dims)) + " ", 0) == 0);
  // Nothing changed since: nothing to do.
  CHECK_FALSE(store->update_code_lists(10));

  const auto query = store::binary_code(random_unit_vector(random, k_dims));
  store->set_code_lists_probe(1.0);  // every list: the exhaustive answer exactly
  for (const int k : {1, 10, 40, 1000}) check_same(store->nearest_codes(query, k), exhaustive(*store, query, k));

  // Written after the lists: a replaced file (new chunk ids), a new file, a removed one. The
  // lists' members of the first and last are skipped, the new rows read.
  store->begin();
  put_random_file(*store, random, 3, 5);
  put_random_file(*store, random, 100, 4);
  store->commit();
  store->remove_file("src/7.py");
  CHECK(test::run("sqlite3 '" + store->path() + "' 'SELECT count(*) FROM code_lists_stale'") != "0");
  check_same(store->nearest_codes(query, 1000), exhaustive(*store, query, 1000));
  check_same(store->nearest_codes(query, 5), exhaustive(*store, query, 5));

  // Probing the fewest lists still reads the files changed since: a new chunk's own code
  // finds it first.
  store->set_code_lists_probe(0.0);
  const auto added = store->file_export("src/100.py");
  REQUIRE(added);
  REQUIRE_FALSE(added->codes.empty());
  const auto own = store->nearest_codes(added->codes.front(), 1);
  REQUIRE(own.size() == 1);
  CHECK(own.front().distance == 0);
  const auto all = exhaustive(*store, query, 1000);
  std::set<std::int64_t> ids;
  for (const auto& hit : all) ids.insert(hit.chunk_id);
  for (const auto& hit : store->nearest_codes(query, 3)) CHECK(ids.count(hit.chunk_id) == 1);

  // More than a tenth of the files changed: built again, and the stale rows are gone.
  store->begin();
  for (int f = 10; f < 20; ++f) put_random_file(*store, random, f, 2);
  store->commit();
  CHECK(store->update_code_lists(10));
  CHECK(test::run("sqlite3 '" + store->path() + "' 'SELECT count(*) FROM code_lists_stale'") == "0");
  store->set_code_lists_probe(1.0);
  check_same(store->nearest_codes(query, 1000), exhaustive(*store, query, 1000));
}

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
