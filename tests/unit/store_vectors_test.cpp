// Tests for core/store/vectors.cpp and the vector side of the store: quantization error bound,
// Hamming kernel against a plain loop, stored vectors round trip, Hamming top-k against brute
// force, filters, deletion with the file, and verify's view of vectors.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <span>
#include <thread>

#include "core/util/code_partitions.hpp"
#include "core/util/hamming.hpp"
#include "core/store/store.hpp"
#include "core/store/vectors.hpp"
#include "store_support.hpp"
#include "support.hpp"

using namespace kasava;

namespace {

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

types::Chunk make_chunk(const std::string& symbol, int line) {
  types::Chunk chunk;
  chunk.kind = "function";
  chunk.symbol = symbol;
  chunk.start_line = line;
  chunk.end_line = line + 1;
  chunk.text = "def ";
  chunk.text += symbol;
  chunk.text += "():\n    pass\n";
  return chunk;
}

using kasava::test::open_store;

// Stores src/F.py (blob `blob`) with 1 + F % 5 chunks of random vectors of `dims`
// dimensions; the second chunk of every fourth file waits for its vector (pending).
void put_numbered_file(store::Store& store, std::mt19937& random, int dims, int f, const std::string& blob) {
  std::vector<types::Chunk> chunks;
  std::vector<store::QuantizedVector> vectors;
  for (int c = 0; c < 1 + f % 5; ++c) {
    chunks.push_back(make_chunk(std::string(1, 'f') += std::to_string(c), 1 + 3 * c));
    vectors.push_back(c == 1 && f % 4 == 0 ? store::QuantizedVector{}
                                           : store::quantize(random_unit_vector(random, dims)));
  }
  std::string file = "src/";
  file += std::to_string(f);
  file += ".py";
  store.put_file({file, blob, "python", 10, ""}, chunks, vectors);
}

// Writes both code-scan tests check the scans after: src/3.py and src/300.py replaced and
// src/599.py removed in a transaction, src/257.py replaced and src/1.py removed outside one.
void replace_and_remove_files(store::Store& store, std::mt19937& random, int dims) {
  store.begin();
  put_numbered_file(store, random, dims, 3, "b");
  put_numbered_file(store, random, dims, 300, "b");
  store.remove_file("src/599.py");
  store.commit();
  put_numbered_file(store, random, dims, 257, "c");
  store.remove_file("src/1.py");
}

// Gives every chunk waiting for its vector one; how many there were.
std::size_t add_pending_vectors(store::Store& store, std::mt19937& random, int dims) {
  std::vector<std::int64_t> pending;
  for (const auto& chunk : store.pending_chunks(0, 1000)) pending.push_back(chunk.id);
  std::vector<store::QuantizedVector> late;
  for (std::size_t i = 0; i < pending.size(); ++i) late.push_back(store::quantize(random_unit_vector(random, dims)));
  store.put_vectors(pending, late);
  return pending.size();
}

} // namespace

TEST_CASE("store::quantize reconstructs every value within half a step") {
  std::mt19937 random(7);
  for (const int dims : {1, 7, 64, 256, 300}) {
    const auto vector = random_unit_vector(random, dims);
    const auto quantized = store::quantize(vector);
    REQUIRE(quantized.values.size() == vector.size());
    REQUIRE(quantized.code.size() == store::code_bytes(dims));
    for (std::size_t i = 0; i < vector.size(); ++i) {
      CHECK(std::fabs(vector[i] - quantized.scale * quantized.values[i]) <=
            quantized.scale / 2 + 1e-7f);
      CHECK(((quantized.code[i / 8] >> (i % 8)) & 1) == (vector[i] > 0 ? 1 : 0));
    }
    for (const auto value : quantized.values) CHECK(std::abs(value) <= store::k_value_limit);
    // Cosine against the 4-bit values stays close to the float cosine: the rounding errors
    // average out over the dimensions (standard deviation 0.008 at 256, 0.015 at 64).
    const auto query = random_unit_vector(random, dims);
    double exact = 0.0;
    for (std::size_t i = 0; i < vector.size(); ++i) exact += static_cast<double>(query[i]) * vector[i];
    CHECK(std::fabs(store::int8_cosine(query, quantized.values) - exact) < (dims >= 64 ? 0.05 : 0.15));
  }
  const auto zero = store::quantize(std::vector<float>(16, 0.0f));
  CHECK(zero.scale == 0.0f);
  CHECK(store::int8_cosine(std::vector<float>(16, 0.5f), zero.values) == 0.0);
}

TEST_CASE("store::QueryCosine equals the cosine summed one dimension at a time") {
  std::mt19937 random(11);
  for (const int dims : {1, 3, 4, 7, 64, 256, 301}) {
    const auto query = random_unit_vector(random, dims);
    const store::QueryCosine cosine(query);
    for (int trial = 0; trial < 20; ++trial) {
      std::vector<std::int8_t> values(static_cast<std::size_t>(dims));
      for (auto& v : values) v = static_cast<std::int8_t>(static_cast<int>(random() % 255) - 127);
      double dot = 0.0, query_norm = 0.0, values_norm = 0.0;
      for (std::size_t i = 0; i < values.size(); ++i) {
        dot += static_cast<double>(query[i]) * values[i];
        query_norm += static_cast<double>(query[i]) * query[i];
        values_norm += static_cast<double>(values[i]) * values[i];
      }
      const double expected = values_norm > 0 ? dot / std::sqrt(query_norm * values_norm) : 0.0;
      CHECK(cosine(values) == Approx(expected).margin(1e-12));
      CHECK(store::int8_cosine(query, values) == cosine(values));
    }
  }
  const std::vector<float> query(8, 0.5f);
  CHECK(store::QueryCosine(query)(std::vector<std::int8_t>(8, 0)) == 0.0);
  CHECK(store::QueryCosine(query)(std::vector<std::int8_t>(7, 1)) == 0.0);  // lengths differ
  CHECK(store::QueryCosine(std::vector<float>(8, 0.0f))(std::vector<std::int8_t>(8, 1)) == 0.0);
}

TEST_CASE("store::quantize rounds halves away from zero and codes only positive values") {
  // The largest magnitude is 7, so each value is its own step.
  const std::vector<float> vector = {7.0f, 2.5f, -2.5f, 0.5f, -0.5f, -0.0f, 0.0f, -7.0f, 1.49f};
  const auto quantized = store::quantize(vector);
  CHECK(quantized.scale == 1.0f);
  CHECK(quantized.values == std::vector<std::int8_t>{7, 3, -3, 1, -1, 0, 0, -7, 1});
  CHECK(quantized.code == std::vector<std::uint8_t>{0x0B, 0x01});
}

TEST_CASE("store::pack_values stores two values per byte, round-trips and rejects wrong lengths") {
  std::mt19937 random(3);
  for (const int dims : {1, 2, 31, 32, 256}) {
    const auto quantized = store::quantize(random_unit_vector(random, dims));
    const auto blob = store::pack_values(quantized);
    const std::size_t value_bytes = dims == 1 ? 1 : (static_cast<std::size_t>(dims) + 1) / 2;
    CHECK(blob.size() == value_bytes + sizeof(float));
    std::vector<std::int8_t> values;
    float scale = 0.0f;
    REQUIRE(store::unpack_values(blob, dims, values, scale));
    CHECK(values == quantized.values);
    CHECK(scale == quantized.scale);
    CHECK_FALSE(store::unpack_values(blob, dims + 2, values, scale));
    CHECK_FALSE(store::unpack_values(std::span(blob).first(blob.size() - 1), dims, values, scale));
  }
  // Every value of the range, negative ones too, survives the nibbles; the first of each pair
  // is in the low nibble.
  store::QuantizedVector all;
  for (int v = -store::k_value_limit; v <= store::k_value_limit; ++v) {
    all.values.push_back(static_cast<std::int8_t>(v));
  }
  all.scale = 0.5f;
  const auto blob = store::pack_values(all);
  CHECK(blob.front() == 0xA9);  // -7 = 0x9 in the low nibble, -6 = 0xA in the high one
  std::vector<std::int8_t> values;
  float scale = 0.0f;
  REQUIRE(store::unpack_values(blob, static_cast<int>(all.values.size()), values, scale));
  CHECK(values == all.values);
  CHECK(scale == 0.5f);
  CHECK_FALSE(store::unpack_values(blob, 0, values, scale));
}

TEST_CASE("store::pack_values quantizes an older kasava's int8 values again, to 4 bits") {
  // As a vector cache written by an older kasava gives them back: values up to 127.
  store::QuantizedVector old;
  old.values = {127, -127, 64, -9, 0, 18};
  old.scale = 0.01f;
  const auto blob = store::pack_values(old);
  CHECK(blob.size() == 3 + sizeof(float));
  std::vector<std::int8_t> values;
  float scale = 0.0f;
  REQUIRE(store::unpack_values(blob, 6, values, scale));
  // 127 / 7 per step: 64 -> 3.53 -> 4, -9 -> -0.50 -> 0, 18 -> 0.99 -> 1.
  CHECK(values == std::vector<std::int8_t>{7, -7, 4, 0, 0, 1});
  CHECK(scale == Approx(0.01 * 127 / 7));
  // The same vector: its cosine with a query barely moves.
  const std::vector<float> query = {0.5f, -0.4f, 0.3f, -0.2f, 0.1f, 0.6f};
  CHECK(store::int8_cosine(query, values) == Approx(store::int8_cosine(query, old.values)).margin(0.05));
}

TEST_CASE("store::unpack_values reads the older form, one int8 value per byte") {
  const std::vector<std::int8_t> old_values = {127, -127, 5, -1, 0};
  const float old_scale = 0.25f;
  std::vector<std::uint8_t> blob(old_values.size() + sizeof(float));
  std::memcpy(blob.data(), old_values.data(), old_values.size());
  std::memcpy(blob.data() + old_values.size(), &old_scale, sizeof old_scale);
  std::vector<std::int8_t> values;
  float scale = 0.0f;
  REQUIRE(store::unpack_values(blob, 5, values, scale));
  CHECK(values == old_values);
  CHECK(scale == old_scale);
}

TEST_CASE("store::Store vectors round trip, Hamming top-k equals brute force, filters apply") {
  test::TempDir dir;
  auto store = open_store(dir.file("index.db"));
  constexpr int dims = 64;
  std::mt19937 random(5);
  struct Expected {
    std::vector<float> vector;
    std::string path;
  };
  std::vector<Expected> stored;  // in insertion order = chunk id order
  store->begin();
  for (int f = 0; f < 40; ++f) {
    std::string path = f % 2 == 0 ? "src/" : "test/";
    path += std::to_string(f);
    path += ".py";
    std::vector<types::Chunk> chunks;
    std::vector<store::QuantizedVector> vectors;
    for (int c = 0; c < 1 + f % 7; ++c) {
      chunks.push_back(make_chunk(std::string(1, 'f') += std::to_string(c), 1 + 3 * c));
      auto vector = random_unit_vector(random, dims);
      vectors.push_back(store::quantize(vector));
      stored.push_back({vector, path});
    }
    store->put_file({path, std::to_string(f), f % 3 == 0 ? "go" : "python", 10, ""},
                    chunks, vectors);
  }
  store->commit();

  const auto query = random_unit_vector(random, dims);
  const auto code = store::binary_code(query);
  // Brute force over what was stored: (distance, id) ascending; ids are 1..n in order.
  std::vector<store::CodeHit> all;
  for (std::size_t i = 0; i < stored.size(); ++i) {
    const auto other = store::binary_code(stored[i].vector);
    all.push_back({static_cast<std::int64_t>(i + 1),
                   util::hamming_distance(code.data(), other.data(), code.size())});
  }
  std::sort(all.begin(), all.end(), [](const auto& a, const auto& b) {
    return a.distance != b.distance ? a.distance < b.distance : a.chunk_id < b.chunk_id;
  });
  for (const int k : {1, 10, 25, 1000}) {
    const auto hits = store->nearest_codes(code, k);
    REQUIRE(hits.size() == std::min<std::size_t>(static_cast<std::size_t>(k), all.size()));
    for (std::size_t i = 0; i < hits.size(); ++i) {
      CHECK(hits[i].chunk_id == all[i].chunk_id);
      CHECK(hits[i].distance == all[i].distance);
    }
  }

  // Filters: only chunks of accepted files.
  const auto only_src = store->nearest_codes(
      code, 1000, [](std::string_view path, std::string_view) { return path.substr(0, 4) == "src/"; });
  CHECK_FALSE(only_src.empty());
  for (const auto& hit : only_src) CHECK(stored[static_cast<std::size_t>(hit.chunk_id - 1)].path.substr(0, 4) == "src/");

  // Stored values come back and rescore close to the float cosine.
  CHECK(test::run("sqlite3 '" + store->path() + "' 'SELECT DISTINCT length(vector) FROM vectors'") ==
        std::to_string(dims / 2 + 4));
  const auto vectors = store->vectors_by_id({1, 2, 3, 999}, dims);
  REQUIRE(vectors.size() == 3);
  for (const auto& vector : vectors) {
    const auto& original = stored[static_cast<std::size_t>(vector.chunk_id - 1)].vector;
    double exact = 0.0;
    for (int i = 0; i < dims; ++i) exact += static_cast<double>(query[static_cast<std::size_t>(i)]) * original[static_cast<std::size_t>(i)];
    CHECK(std::fabs(store::int8_cosine(query, vector.values) - exact) < 0.05);
  }
  CHECK(store->stats().vectors == static_cast<std::int64_t>(stored.size()));

  // Replacing and removing a file replaces and removes its vectors and codes.
  store->remove_file("src/0.py");
  for (const auto& hit : store->nearest_codes(code, 1000)) CHECK(hit.chunk_id != 1);
  CHECK(store->vectors_by_id({1}, dims).empty());
  CHECK(store->stats().vectors == static_cast<std::int64_t>(stored.size()) - 1);
}

TEST_CASE("store::check_index finds a chunk without its vector") {
  test::TempDir dir;
  const std::string path = dir.file("index.db");
  {
    auto store = open_store(path);
    std::mt19937 random(1);
    store->set_meta("embedding_model", "test:fake");
    store->set_meta("embedding_dims", "16");
    std::vector<store::QuantizedVector> vectors = {store::quantize(random_unit_vector(random, 16)),
                                                   store::quantize(random_unit_vector(random, 16))};
    store->put_file({"a.py", "b1", "python", 10, ""}, {make_chunk("a", 1), make_chunk("b", 4)}, vectors);
    store->put_file({"b.py", "b2", "python", 10, ""}, {make_chunk("c", 1)},
                    {store::quantize(random_unit_vector(random, 16))});
  }
  auto check = store::check_index(path);
  REQUIRE(check);
  CHECK(check->problems.empty());
  CHECK(check->inconsistent_paths.empty());
  CHECK(check->vectors == 3);
  CHECK(check->embedding_dims == 16);

  // A vector of the older form (16 int8 values + scale) is sound, one of neither length is not.
  const auto set_length = [&](int bytes) {
    test::run("sqlite3 '" + path + "' 'UPDATE vectors SET vector = zeroblob(" +
              std::to_string(bytes) + ") WHERE chunk_id = 3'");
    return store::check_index(path);
  };
  check = set_length(20);
  REQUIRE(check);
  CHECK(check->inconsistent_paths.empty());
  check = set_length(13);
  REQUIRE(check);
  CHECK(check->inconsistent_paths == std::vector<std::string>{"b.py"});
  check = set_length(12);
  REQUIRE(check);
  CHECK(check->inconsistent_paths.empty());

  test::run("sqlite3 '" + path + "' 'DELETE FROM vectors WHERE chunk_id = 2'");
  check = store::check_index(path);
  REQUIRE(check);
  CHECK(check->inconsistent_paths == std::vector<std::string>{"a.py"});

  // Another file's chunks written without vectors under a model stamp: inconsistent too.
  {
    auto store = open_store(path);
    store->put_file({"c.py", "b3", "python", 10, ""}, {make_chunk("d", 1)});
  }
  check = store::check_index(path);
  REQUIRE(check);
  CHECK(check->inconsistent_paths == std::vector<std::string>{"a.py", "c.py"});
}

TEST_CASE("store::check_index finds a block of vector codes that is not its files' rows") {
  test::TempDir dir;
  const std::string path = dir.file("index.db");
  {
    auto store = open_store(path);
    std::mt19937 random(2);
    store->set_meta("embedding_model", "test:fake");
    store->set_meta("embedding_dims", "16");
    store->put_file({"a.py", "b1", "python", 10, ""}, {make_chunk("a", 1), make_chunk("b", 4)},
                    {store::quantize(random_unit_vector(random, 16)),
                     store::quantize(random_unit_vector(random, 16))});
    store->put_file({"b.py", "b2", "python", 10, ""}, {make_chunk("c", 1)},
                    {store::quantize(random_unit_vector(random, 16))});
  }
  auto check = store::check_index(path);
  REQUIRE(check);
  CHECK(check->problems.empty());
  CHECK(check->inconsistent_paths.empty());

  // A code changed in the block only: both files of the block are re-indexed by a repair.
  test::run("sqlite3 '" + path + "' \"UPDATE vector_code_blocks SET codes = zeroblob(length(codes))\"");
  check = store::check_index(path);
  REQUIRE(check);
  CHECK(check->inconsistent_paths == std::vector<std::string>{"a.py", "b.py"});
  // The block missing: the same.
  test::run("sqlite3 '" + path + "' 'DELETE FROM vector_code_blocks'");
  check = store::check_index(path);
  REQUIRE(check);
  CHECK(check->inconsistent_paths == std::vector<std::string>{"a.py", "b.py"});
  // A block of no file's codes: a problem (a rebuild).
  test::run("sqlite3 '" + path + "' \"INSERT INTO vector_code_blocks VALUES(9, zeroblob(8), zeroblob(2))\"");
  check = store::check_index(path);
  REQUIRE(check);
  CHECK(check->problems.size() == 1);
}

TEST_CASE("store::Store::schema_version reads an index's version without opening it") {
  test::TempDir dir;
  const std::string path = dir.file("index.db");
  CHECK_FALSE(store::Store::schema_version(path));
  { auto store = open_store(path); }
  CHECK(store::Store::schema_version(path) == store::k_schema_version);
  test::run("sqlite3 '" + path + "' \"UPDATE meta SET value = '1' WHERE key = 'schema_version'\"");
  CHECK(store::Store::schema_version(path) == 1);
  test::write(dir.file("junk.db"), "not a database at all, not even close to one....");
  CHECK_FALSE(store::Store::schema_version(dir.file("junk.db")));
}

TEST_CASE("store::Store::nearest_codes keeps the nearest by distance, then id, in any scan order") {
  // Every shortlist must be a prefix of the whole list (which keeps every code) whichever way
  // the codes are read: blocks, a snapshot, and partitions, nearest first, where the scan
  // meets ids out of order and a code that ties with the farthest kept one enters by its
  // smaller id.
  test::TempDir dir;
  const std::string path = dir.file("index.db");
  auto store = open_store(path);
  constexpr int dims = 64;  // few distinct distances: many ties
  std::mt19937 random(23);
  store->begin();
  for (int f = 0; f < 300; ++f) put_numbered_file(*store, random, dims, f, "a");
  store->commit();
  std::vector<std::vector<std::uint8_t>> codes;
  std::vector<std::vector<store::CodeHit>> whole;
  for (int trial = 0; trial < 8; ++trial) {
    codes.push_back(store::binary_code(random_unit_vector(random, dims)));
    whole.push_back(store->nearest_codes(codes.back(), 100000));
    REQUIRE(whole.back().size() > 500);
    CHECK(std::is_sorted(whole.back().begin(), whole.back().end(), [](const auto& a, const auto& b) {
      return a.distance != b.distance ? a.distance < b.distance : a.chunk_id < b.chunk_id;
    }));
  }
  const auto check_prefixes = [&](const store::Store& scanned) {
    for (std::size_t trial = 0; trial < codes.size(); ++trial) {
      for (const int k : {1, 7, 33, 100, 301}) {
        const auto hits = scanned.nearest_codes(codes[trial], k);
        REQUIRE(hits.size() == static_cast<std::size_t>(k));
        for (std::size_t i = 0; i < hits.size(); ++i) {
          CHECK(hits[i].chunk_id == whole[trial][i].chunk_id);
          CHECK(hits[i].distance == whole[trial][i].distance);
        }
      }
    }
  };
  check_prefixes(*store);
  {
    auto reader = open_store(path, store::OpenMode::read_only);
    reader->use_snapshot(reader->read_snapshot(1000000));
    check_prefixes(*reader);
  }
  store->set_partitioning(1, 1.0);
  store->update_partitions();
  REQUIRE(test::run("sqlite3 '" + path + "' 'SELECT count(*) > 1 FROM vector_partitions'") == "1");
  check_prefixes(*store);
}

TEST_CASE("store::Store::nearest_codes over code blocks equals the per-file rows after every write") {
  test::TempDir dir;
  const std::string path = dir.file("index.db");
  auto store = open_store(path);
  constexpr int dims = 64;
  std::mt19937 random(11);
  // 600 files: three blocks of 256 file ids. Some chunks wait for their vectors (pending).
  auto put = [&](int f, const std::string& blob) { put_numbered_file(*store, random, dims, f, blob); };
  store->begin();
  for (int f = 0; f < 600; ++f) put(f, "a");
  store->commit();
  const auto code = store::binary_code(random_unit_vector(random, dims));
  const auto accept_all = [](std::string_view, std::string_view) { return true; };
  auto check_same = [&] {
    const auto blocks = store->nearest_codes(code, 100000);
    const auto rows = store->nearest_codes(code, 100000, accept_all);  // the per-file rows
    REQUIRE(blocks.size() == rows.size());
    for (std::size_t i = 0; i < rows.size(); ++i) {
      CHECK(blocks[i].chunk_id == rows[i].chunk_id);
      CHECK(blocks[i].distance == rows[i].distance);
    }
    return rows.size();
  };
  const std::size_t first = check_same();
  CHECK(first > 1000);
  CHECK(test::run("sqlite3 '" + path + "' 'SELECT count(*) FROM vector_code_blocks'") == "3");

  // Replaced and removed files, in a transaction and outside one; pending vectors added.
  replace_and_remove_files(*store, random, dims);
  REQUIRE(add_pending_vectors(*store, random, dims) > 0);
  CHECK(check_same() > first);
  // A rolled-back transaction leaves the blocks as they were.
  store->begin();
  store->remove_file("src/2.py");
  store->rollback();
  check_same();
  store.reset();

  // A schema 6 index (no blocks): read as before, and given its blocks when opened to write.
  test::run("sqlite3 '" + path + "' \"DROP TABLE vector_code_blocks; UPDATE meta SET value = '6' WHERE key = 'schema_version'\"");
  const auto before = [&] {
    auto reader = open_store(path, store::OpenMode::read_only);
    return reader->nearest_codes(code, 100000);
  }();
  store = open_store(path);
  CHECK(store->meta("schema_version") == std::to_string(store::k_schema_version));
  CHECK(test::run("sqlite3 '" + path + "' 'SELECT count(*) FROM vector_code_blocks'") == "3");
  const auto after = store->nearest_codes(code, 100000);
  REQUIRE(after.size() == before.size());
  for (std::size_t i = 0; i < after.size(); ++i) CHECK(after[i].chunk_id == before[i].chunk_id);
  check_same();
}

TEST_CASE("store::Store::nearest_codes over partitions equals the full scan when it reads them all, after every write") {
  test::TempDir dir;
  const std::string path = dir.file("index.db");
  auto store = open_store(path);
  constexpr int dims = 64;
  std::mt19937 random(23);
  auto put = [&](int f, const std::string& blob) { put_numbered_file(*store, random, dims, f, blob); };
  const auto count = [&](const std::string& sql) { return test::run("sqlite3 '" + path + "' '" + sql + "'"); };
  store->begin();
  for (int f = 0; f < 600; ++f) put(f, "a");
  store->commit();
  // Under the threshold nothing is partitioned; the codes count, not the largest chunk id.
  store->update_partitions();
  CHECK(count("SELECT count(*) FROM vector_centroids") == "0");
  const std::int64_t codes = std::stoll(count("SELECT count(*) FROM vectors"));
  REQUIRE(std::stoll(count("SELECT max(id) FROM chunks")) > codes);
  store->set_partitioning(codes + 1, 1.0);
  store->update_partitions();
  CHECK(count("SELECT count(*) FROM vector_centroids") == "0");
  store->set_partitioning(1, 1.0);
  store->update_partitions();
  CHECK(count("SELECT count(*) FROM vector_centroids") ==
        std::to_string(util::partition_count(std::stoul(count("SELECT count(*) FROM vectors")))));
  CHECK(count("SELECT sum(size) FROM vector_centroids") == count("SELECT count(*) FROM vectors"));
  CHECK(count("SELECT count(*) FROM vector_code_blocks") == "0");  // the partitions replace them

  const auto code = store::binary_code(random_unit_vector(random, dims));
  const auto accept_all = [](std::string_view, std::string_view) { return true; };
  auto check_same = [&](store::Store& reader) {
    const auto rows = reader.nearest_codes(code, 100000, accept_all);  // every per-file row
    for (const auto scan : {store::CodeScan::nearest_partitions, store::CodeScan::every_code}) {
      const auto partitioned = reader.nearest_codes(code, 100000, {}, scan);
      REQUIRE(partitioned.size() == rows.size());
      for (std::size_t i = 0; i < rows.size(); ++i) {
        CHECK(partitioned[i].chunk_id == rows[i].chunk_id);
        CHECK(partitioned[i].distance == rows[i].distance);
      }
    }
    return rows.size();
  };
  const std::size_t first = check_same(*store);
  CHECK(first > 1000);

  // Replaced and removed files, in a transaction and outside one, and pending vectors added:
  // the partitions stay as they are and the changes are read beside them.
  replace_and_remove_files(*store, random, dims);
  store->update_partitions();  // fewer than a tenth changed: kept
  // Each replaced file is two changes (its old file id and its new one), a removed one one.
  CHECK(count("SELECT count(*) FROM vector_partition_changes") == "8");
  CHECK(count("SELECT count(*) FROM vector_partition_dead") != "0");
  check_same(*store);
  // Vectors that were pending join their files' rows (150 files: partitioned again later).
  REQUIRE(add_pending_vectors(*store, random, dims) > 0);
  CHECK(check_same(*store) > first);
  {
    auto reader = open_store(path, store::OpenMode::read_only);
    reader->set_partitioning(1, 1.0);
    check_same(*reader);
  }
  // A rolled-back transaction leaves what changed as it was.
  const std::string changes = count("SELECT group_concat(file_id) FROM vector_partition_changes");
  store->begin();
  store->remove_file("src/2.py");
  store->rollback();
  CHECK(count("SELECT group_concat(file_id) FROM vector_partition_changes") == changes);
  check_same(*store);

  // More than a tenth changed: partitioned again, nothing left beside.
  store->begin();
  for (int f = 100; f < 200; ++f) put(f, "d");
  store->commit();
  check_same(*store);
  store->update_partitions();
  CHECK(count("SELECT count(*) FROM vector_partition_changes") == "0");
  CHECK(count("SELECT count(*) FROM vector_partition_dead") == "0");
  CHECK(count("SELECT sum(size) FROM vector_centroids") == count("SELECT count(*) FROM vectors"));
  check_same(*store);

  // A partial read: fewer codes, all of them among the full scan's, nearest first.
  store->set_partitioning(1, 0.25);
  const auto part = store->nearest_codes(code, 100000, {}, store::CodeScan::nearest_partitions);
  // The exact scan still reads every code of a partitioned index.
  CHECK(std::to_string(store->nearest_codes(code, 100000).size()) == count("SELECT count(*) FROM vectors"));
  CHECK(part.size() < first / 2);
  CHECK(part.size() > first / 8);
  CHECK(std::is_sorted(part.begin(), part.end(), [](const auto& a, const auto& b) { return a.distance < b.distance; }));

  // An index that shrank below the threshold drops its partitions and scans every code.
  store->set_partitioning(1'000'000, 1.0);
  store->update_partitions();
  CHECK(count("SELECT count(*) FROM vector_centroids") == "0");
  CHECK(count("SELECT count(*) FROM vector_partitions") == "0");
  CHECK(count("SELECT count(*) FROM vector_code_blocks") == "3");  // built again
  check_same(*store);
  put(5, "e");  // and kept again
  check_same(*store);
  {
    auto check = store::check_index(path);
    REQUIRE(check);
    CHECK(check->inconsistent_paths.empty());
  }
  store.reset();

  // A schema 7 index gets the tables, empty, when opened to write.
  test::run("sqlite3 '" + path + "' \"DROP TABLE vector_centroids; DROP TABLE vector_partitions;"
            " DROP TABLE vector_partition_changes; DROP TABLE vector_partition_dead;"
            " UPDATE meta SET value = '7' WHERE key = 'schema_version'\"");
  {
    auto reader = open_store(path, store::OpenMode::read_only);
    check_same(*reader);
  }
  store = open_store(path);
  CHECK(store->meta("schema_version") == std::to_string(store::k_schema_version));
  CHECK(count("SELECT count(*) FROM vector_centroids") == "0");
  store->set_partitioning(1, 1.0);
  store->update_partitions();
  CHECK(count("SELECT count(*) FROM vector_centroids") != "0");
  check_same(*store);
}

TEST_CASE("store::Store partitions trained on another connection while this one merges are the ones made alone") {
  // `kasava index` trains the partitions on a second connection while the first merges the
  // full-text index (commands/index.cpp): what it writes must be what update_partitions makes.
  test::TempDir dir;
  constexpr int dims = 64;
  const auto build = [&](const std::string& path) {
    auto store = open_store(path);
    std::mt19937 random(31);
    store->set_merging(store::Store::Merging::deferred);
    store->begin();
    for (int f = 0; f < 400; ++f) put_numbered_file(*store, random, dims, f, "a");
    store->commit();
    store->set_partitioning(1, 1.0);
    store->set_merging(store::Store::Merging::automatic);
    return store;
  };
  const auto partitions = [](const std::string& path) {
    return test::run("sqlite3 '" + path + "' 'SELECT partition, hex(centroid), size FROM vector_centroids ORDER BY 1;"
                     " SELECT partition, hex(chunk_ids), hex(codes) FROM vector_partitions ORDER BY 1'");
  };
  const std::string alone = dir.file("alone.db");
  build(alone)->update_partitions();

  const std::string beside = dir.file("beside.db");
  auto store = build(beside);
  const auto due = store->partitions_due();
  REQUIRE(due);
  CHECK(*due == 1);
  std::shared_ptr<const store::PartitionPlan> trained;
  std::thread training([&] { trained = open_store(beside)->plan_partitions(*due); });
  store->optimize();
  training.join();
  REQUIRE(trained);
  store->update_partitions(trained);
  CHECK_FALSE(store->partitions_due());
  CHECK(partitions(beside) == partitions(alone));
  CHECK(partitions(beside).size() > 1000);

  // A training of other codes is not written: update_partitions trains again.
  std::mt19937 random(37);
  const auto code = store::binary_code(random_unit_vector(random, dims));
  for (int f = 400; f < 800; ++f) put_numbered_file(*store, random, dims, f, "b");
  store->update_partitions(trained);
  // Trained on all 800 files' codes: every code in a partition, √n of them.
  const std::string codes = test::run("sqlite3 '" + beside + "' 'SELECT count(*) FROM vectors'");
  CHECK(test::run("sqlite3 '" + beside + "' 'SELECT sum(size) FROM vector_centroids'") == codes);
  CHECK(test::run("sqlite3 '" + beside + "' 'SELECT sum(length(chunk_ids)) / 8 FROM vector_partitions'") == codes);
  CHECK(test::run("sqlite3 '" + beside + "' 'SELECT count(*) FROM vector_centroids'") ==
        std::to_string(util::partition_count(std::stoul(codes))));
  const auto all = store->nearest_codes(code, 100000, [](std::string_view, std::string_view) { return true; });
  const auto scanned = store->nearest_codes(code, static_cast<int>(all.size()));
  REQUIRE(scanned.size() == all.size());
  for (std::size_t i = 0; i < all.size(); ++i) CHECK(scanned[i].chunk_id == all[i].chunk_id);
}

TEST_CASE("store::check_index finds vector partitions that do not hold their chunks' codes") {
  test::TempDir dir;
  const std::string path = dir.file("index.db");
  std::mt19937 random(4);
  auto store = open_store(path);
  store->set_meta("embedding_model", "test:fake");
  store->set_meta("embedding_dims", "16");
  auto put = [&](int f, const std::string& blob) {
    std::vector<types::Chunk> chunks;
    std::vector<store::QuantizedVector> vectors;
    for (int c = 0; c < 3; ++c) {
      chunks.push_back(make_chunk(std::string(1, 'h') += std::to_string(c), 1 + 3 * c));
      vectors.push_back(store::quantize(random_unit_vector(random, 16)));
    }
    store->put_file({"src/" + std::to_string(f) + ".py", blob, "python", 10, ""}, chunks, vectors);
  };
  store->begin();
  for (int f = 0; f < 40; ++f) put(f, "a");
  store->commit();
  store->set_partitioning(1, 1.0);
  store->update_partitions();
  // Sound after partitioning, and after files changed beside the partitions.
  auto check = store::check_index(path);
  REQUIRE(check);
  CHECK(check->problems.empty());
  CHECK(check->inconsistent_paths.empty());
  put(7, "b");
  store->remove_file("src/8.py");
  check = store::check_index(path);
  REQUIRE(check);
  CHECK(check->problems.empty());
  CHECK(check->inconsistent_paths.empty());

  // The partitions' codes changed: every file whose chunks they hold is re-indexed by a
  // repair (not 7.py, changed since, nor 8.py, removed).
  const std::string chunk = test::run(
      "sqlite3 '" + path + "' \"SELECT min(c.id) FROM chunks c JOIN files f ON f.id = c.file_id WHERE f.path = 'src/3.py'\"");
  test::run("sqlite3 '" + path + "' \"UPDATE vector_partitions SET codes = zeroblob(length(codes))\"");
  check = store::check_index(path);
  REQUIRE(check);
  CHECK(check->problems.empty());
  REQUIRE(check->inconsistent_paths.size() == 38);
  CHECK(std::count(check->inconsistent_paths.begin(), check->inconsistent_paths.end(), "src/7.py") == 0);
  // Re-indexing them lists them as changed: sound again.
  for (const auto& inconsistent : check->inconsistent_paths) {
    store->remove_file(inconsistent);
    put(std::stoi(inconsistent.substr(4)), "c");
  }
  check = store::check_index(path);
  REQUIRE(check);
  CHECK(check->inconsistent_paths.empty());
  CHECK(check->problems.empty());

  // A chunk listed as dead comes back in the partitions of no chunk: a problem (a rebuild).
  test::run("sqlite3 '" + path + "' 'DELETE FROM vector_partition_dead WHERE chunk_id = " + chunk + "'");
  check = store::check_index(path);
  REQUIRE(check);
  CHECK(check->problems.size() == 1);
}

TEST_CASE("store::Store::read_snapshot answers nearest_codes, vectors_by_id and heads as the file does") {
  test::TempDir dir;
  const std::string path = dir.file("index.db");
  auto store = open_store(path);
  constexpr int dims = 64;
  std::mt19937 random(17);
  store->begin();
  for (int f = 0; f < 300; ++f) put_numbered_file(*store, random, dims, f, "a");
  store->commit();
  replace_and_remove_files(*store, random, dims);
  REQUIRE(add_pending_vectors(*store, random, dims) > 0);  // chunks without a vector

  auto reader = open_store(path, store::OpenMode::read_only);
  const auto code = store::binary_code(random_unit_vector(random, dims));
  std::vector<std::int64_t> ids;
  for (std::int64_t id = 0; id <= 2000; id += 3) ids.push_back(id);  // some unknown, some pending
  // Asked in no order and some twice: each known one comes back once (in any order).
  for (std::int64_t id = 0; id <= 2000; id += 30) ids.push_back(id);
  std::shuffle(ids.begin(), ids.end(), random);
  const auto from_file_codes = reader->nearest_codes(code, 100000);
  const auto from_file_values = reader->vectors_by_id(ids, dims);
  const auto from_file_heads = reader->chunks_by_id(ids, store::Store::Detail::head);
  REQUIRE(from_file_heads.size() > 100);
  REQUIRE(from_file_codes.size() > 500);
  REQUIRE_FALSE(from_file_values.empty());
  {
    std::vector<std::int64_t> returned;
    for (const auto& vector : from_file_values) returned.push_back(vector.chunk_id);
    std::sort(returned.begin(), returned.end());
    CHECK(std::adjacent_find(returned.begin(), returned.end()) == returned.end());
    for (const std::int64_t id : returned) CHECK(std::find(ids.begin(), ids.end(), id) != ids.end());
    CHECK(returned.size() > 100);
  }

  CHECK_FALSE(reader->read_snapshot(10));  // more chunks than asked for
  const auto snapshot = reader->read_snapshot(1000000);
  REQUIRE(snapshot);
  reader->use_snapshot(snapshot);
  // Heads from memory now: the same, though the file's names change meanwhile.
  test::run("sqlite3 '" + path + "' \"UPDATE chunks SET symbol = 'renamed', parent = 'moved'\"");
  const auto by_head_id = [](const store::ChunkRecord& a, const store::ChunkRecord& b) { return a.id < b.id; };
  auto heads = reader->chunks_by_id(ids, store::Store::Detail::head);
  auto expected_heads = from_file_heads;
  std::sort(heads.begin(), heads.end(), by_head_id);
  std::sort(expected_heads.begin(), expected_heads.end(), by_head_id);
  REQUIRE(heads.size() == expected_heads.size());
  for (std::size_t i = 0; i < heads.size(); ++i) {
    CHECK(heads[i].id == expected_heads[i].id);
    CHECK(heads[i].path == expected_heads[i].path);
    CHECK(heads[i].language == expected_heads[i].language);
    CHECK(heads[i].chunk.kind == expected_heads[i].chunk.kind);
    CHECK(heads[i].chunk.symbol == expected_heads[i].chunk.symbol);
    CHECK(heads[i].chunk.parent == expected_heads[i].chunk.parent);
    CHECK(heads[i].chunk.start_line == expected_heads[i].chunk.start_line);
    CHECK(heads[i].chunk.end_line == expected_heads[i].chunk.end_line);
  }
  // Read from memory now: the same hits and vectors, even with the file's tables gone.
  test::run("sqlite3 '" + path + "' 'DELETE FROM vector_code_blocks; DELETE FROM vectors'");
  const auto codes = reader->nearest_codes(code, 100000);
  REQUIRE(codes.size() == from_file_codes.size());
  for (std::size_t i = 0; i < codes.size(); ++i) {
    CHECK(codes[i].chunk_id == from_file_codes[i].chunk_id);
    CHECK(codes[i].distance == from_file_codes[i].distance);
  }
  auto values = reader->vectors_by_id(ids, dims);
  REQUIRE(values.size() == from_file_values.size());
  const auto by_id = [](const store::StoredVector& a, const store::StoredVector& b) { return a.chunk_id < b.chunk_id; };
  auto expected_values = from_file_values;
  std::sort(values.begin(), values.end(), by_id);
  std::sort(expected_values.begin(), expected_values.end(), by_id);
  for (std::size_t i = 0; i < values.size(); ++i) {
    CHECK(values[i].chunk_id == expected_values[i].chunk_id);
    CHECK(values[i].values == expected_values[i].values);
    CHECK(values[i].scale == expected_values[i].scale);
  }
  // A filtered scan still reads the file (the per-file rows, which carry paths).
  const auto accept_all = [](std::string_view, std::string_view) { return true; };
  CHECK(reader->nearest_codes(code, 100000, accept_all).size() == from_file_codes.size());
  // Without the snapshot the emptied tables answer again.
  reader->use_snapshot(nullptr);
  CHECK(reader->nearest_codes(code, 100000).empty());
  // A chunk written after the snapshot was read comes from the file, beside known ones.
  reader->use_snapshot(snapshot);
  store->begin();
  put_numbered_file(*store, random, dims, 1000, "d");
  store->commit();
  const std::int64_t newest = std::stoll(test::run("sqlite3 '" + path + "' 'SELECT max(id) FROM chunks'"));
  const auto mixed = reader->chunks_by_id({newest, expected_heads.front().id, newest + 1}, store::Store::Detail::head);
  REQUIRE(mixed.size() == 2);
  for (const auto& head : mixed) {
    CHECK(head.path == (head.id == newest ? "src/1000.py" : expected_heads.front().path));
    CHECK(head.chunk.symbol == (head.id == newest ? "f0" : expected_heads.front().chunk.symbol));
  }

  // None of an index whose codes are partitioned: a search reads a share of them.
  store->set_partitioning(100, 0.25);
  store->update_partitions();
  REQUIRE(test::run("sqlite3 '" + path + "' 'SELECT count(*) > 0 FROM vector_partitions'") == "1");
  CHECK_FALSE(open_store(path, store::OpenMode::read_only)->read_snapshot(1000000));
}
