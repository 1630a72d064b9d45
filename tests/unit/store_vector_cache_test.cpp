// Tests for core/store/vector_cache.cpp: keys (SHA-256 against known digests), round trip,
// misses, model separation, dimension checks, damaged rows and files, persistence, and two
// instances writing one file from two threads at once.
#include <catch2/catch.hpp>

#include <atomic>
#include <cstdlib>
#include <random>
#include <thread>
#include <utility>

#include "core/store/store.hpp"
#include "core/store/vector_cache.hpp"
#include "support.hpp"

using namespace kasava;

namespace {

std::vector<float> random_vector(std::mt19937& random, int dims) {
  std::normal_distribution<float> normal;
  std::vector<float> vector(static_cast<std::size_t>(dims));
  for (float& value : vector) value = normal(random);
  return vector;
}

std::unique_ptr<store::VectorCache> open_cache(const std::string& path) {
  auto cache = store::VectorCache::open(path);
  if (!cache) FAIL(cache.error().message);
  return std::move(cache).value();
}

std::string hex(const std::array<std::uint8_t, 32>& bytes) {
  static constexpr char k_digits[] = "0123456789abcdef";
  std::string out;
  for (const std::uint8_t byte : bytes) {
    out += k_digits[byte >> 4];
    out += k_digits[byte & 15];
  }
  return out;
}

void check_same(const std::optional<store::QuantizedVector>& got,
                const store::QuantizedVector& expected) {
  REQUIRE(got.has_value());
  CHECK(got->values == expected.values);
  CHECK(got->code == expected.code);
  CHECK(got->scale == expected.scale);
}

}  // namespace

TEST_CASE("store::vector_cache_key is SHA-256 of the model's length, the model and the input") {
  // Expected digests from Python: hashlib.sha256(struct.pack('<Q', len(m)) + m + i).
  CHECK(hex(store::vector_cache_key("voyage:voyage-code-3", "def f(): pass")) ==
        "c154e9af232a749eb9fe65552e0fb8a0f312b215d53b92ee04c11207f5bdd64d");
  CHECK(hex(store::vector_cache_key("", "")) ==
        "af5570f5a1810b7af78caf4bc70a660f0df51e42baf91d4de5b2328de0e83dfc");
  CHECK(hex(store::vector_cache_key("m", std::string(200, 'x'))) ==  // several blocks
        "d32ab886ea93f961c9cdda180b94e2b3f28afcbfbb85ebd8450060c93b181c0e");
  // The length prefix keeps the model and the input apart.
  CHECK(store::vector_cache_key("ab", "c") != store::vector_cache_key("a", "bc"));
}

TEST_CASE("store::vector_cache_key pads every message length as SHA-256 does") {
  // 8 bytes of length prefix + the input: messages of 11, 55, 56, 63, 64 and 128 bytes, on
  // either side of the 56-byte padding limit and of the 64-byte block. Digests from Python's
  // hashlib; caches written by kasava versions before libcrypto must keep their keys.
  const std::pair<std::size_t, const char*> cases[] = {
      {47, "327be8a969e65f9d778c66b7b63772b80829e587e7efc48d574c526f85f2600f"},
      {48, "46c8f8f463452766dd89b63bc70572f2b4f814e5e310df438d7c4ca9cf1377a7"},
      {55, "582b82222228342f63626edc672ad0beb9529236a00611d28e1ebceb73969087"},
      {56, "b3121a0fd4be3270528b22b53096244f46bd450a55aed998eb18b2b7de348964"},
      {120, "12180c030aaa09c419bdc73b8fec2a0d671fdf3a595f5ffc6f4f26f16b470d4a"}};
  CHECK(hex(store::vector_cache_key("", "abc")) ==
        "f3652e4ce938bb9965f62c3ca4d8f69301a6c85b1e86eac67e291152d3c0e3dd");
  for (const auto& [length, digest] : cases) {
    CAPTURE(length);
    CHECK(hex(store::vector_cache_key("", std::string(length, 'a'))) == digest);
  }
}

TEST_CASE("store::VectorCache round trip and miss") {
  test::TempDir dir;
  auto cache = open_cache(dir.file("vectors.db"));
  std::mt19937 random(1);
  const auto a = store::quantize(random_vector(random, 256));
  const auto b = store::quantize(random_vector(random, 256));
  REQUIRE(cache->put("voyage:voyage-code-3", {"alpha", "beta"}, {a, b}));

  const auto got = cache->get("voyage:voyage-code-3", {"beta", "gamma", "alpha"});
  REQUIRE(got.size() == 3);
  check_same(got[0], b);
  CHECK_FALSE(got[1].has_value());
  check_same(got[2], a);
  CHECK(cache->get("voyage:voyage-code-3", {}).empty());

  const auto counts = cache->counts();
  CHECK(counts.entries == 2);
  CHECK(counts.bytes > 0);
}

TEST_CASE("store::VectorCache keeps the code exactly, also where a value rounds to zero") {
  test::TempDir dir;
  auto cache = open_cache(dir.file("vectors.db"));
  // 1e-4 rounds to the value 0 but keeps its code bit.
  const auto vector = store::quantize(std::vector<float>{1.0f, 1e-4f, -0.5f});
  REQUIRE(vector.values[1] == 0);
  REQUIRE((vector.code[0] & 2) != 0);
  REQUIRE(cache->put("m", {"x"}, {vector}));
  check_same(cache->get("m", {"x"})[0], vector);
}

TEST_CASE("store::VectorCache separates models") {
  test::TempDir dir;
  auto cache = open_cache(dir.file("vectors.db"));
  std::mt19937 random(2);
  const auto one = store::quantize(random_vector(random, 8));
  const auto two = store::quantize(random_vector(random, 8));
  REQUIRE(cache->put("openai:text-embedding-3-small", {"same text"}, {one}));
  CHECK_FALSE(cache->get("voyage:voyage-code-3", {"same text"})[0].has_value());
  CHECK_FALSE(cache->get("voyage:voyage-code-3@512", {"same text"})[0].has_value());

  REQUIRE(cache->put("voyage:voyage-code-3", {"same text"}, {two}));
  check_same(cache->get("openai:text-embedding-3-small", {"same text"})[0], one);
  check_same(cache->get("voyage:voyage-code-3", {"same text"})[0], two);
  CHECK(cache->counts().entries == 2);
}

TEST_CASE("store::VectorCache dims mismatch is a miss") {
  test::TempDir dir;
  auto cache = open_cache(dir.file("vectors.db"));
  std::mt19937 random(3);
  const auto vector = store::quantize(random_vector(random, 16));
  REQUIRE(cache->put("m", {"x"}, {vector}));
  check_same(cache->get("m", {"x"}, 16)[0], vector);
  check_same(cache->get("m", {"x"})[0], vector);  // 0: any length
  CHECK_FALSE(cache->get("m", {"x"}, 32)[0].has_value());
  CHECK_FALSE(cache->get("m", {"x"}, 8)[0].has_value());

  // A later put of another length replaces the row.
  const auto longer = store::quantize(random_vector(random, 32));
  REQUIRE(cache->put("m", {"x"}, {longer}));
  check_same(cache->get("m", {"x"}, 32)[0], longer);
  CHECK_FALSE(cache->get("m", {"x"}, 16)[0].has_value());
  CHECK(cache->counts().entries == 1);
}

TEST_CASE("store::VectorCache put skips empty vectors and rejects bad arguments") {
  test::TempDir dir;
  const std::string path = dir.file("vectors.db");
  auto cache = open_cache(path);
  const auto vector = store::quantize(std::vector<float>{0.5f, -0.5f});
  REQUIRE(cache->put("m", {"kept", "empty"}, {vector, store::QuantizedVector{}}));
  CHECK(cache->counts().entries == 1);
  CHECK_FALSE(cache->get("m", {"empty"})[0].has_value());
  REQUIRE(cache->put("m", {"empty"}, {store::QuantizedVector{}}));  // nothing to write

  const auto mismatch = cache->put("m", {"a", "b"}, {vector});
  REQUIRE_FALSE(mismatch);
  CHECK(mismatch.error().message == "writing vector cache '" + path + "': 2 inputs but 1 vectors");

  auto bad = vector;
  bad.code.push_back(0);
  const auto bad_code = cache->put("m", {"ok", "bad"}, {vector, bad});
  REQUIRE_FALSE(bad_code);
  CHECK(bad_code.error().message ==
        "writing vector cache '" + path + "': vector 1 has a code of 2 bytes for 2 dimensions");
  CHECK_FALSE(cache->get("m", {"ok"})[0].has_value());  // nothing of the batch written
}

TEST_CASE("store::VectorCache reopen persists") {
  test::TempDir dir;
  const std::string path = dir.file("deep/er/vectors.db");  // parent folders are created
  std::mt19937 random(4);
  const auto vector = store::quantize(random_vector(random, 64));
  {
    auto cache = open_cache(path);
    REQUIRE(cache->put("m", {"x"}, {vector}));
  }
  auto cache = open_cache(path);
  CHECK(cache->path() == path);
  check_same(cache->get("m", {"x"})[0], vector);
  CHECK(cache->counts().entries == 1);
}

TEST_CASE("store::VectorCache::open a garbage file is a clean error") {
  test::TempDir dir;
  const std::string path = dir.file("vectors.db");
  test::write(path, std::string(4096, 'g') + "not a database at all\n");
  const auto cache = store::VectorCache::open(path);
  REQUIRE_FALSE(cache);
  CHECK(cache.error().message == "opening vector cache '" + path + "': file is not a database");
}

TEST_CASE("store::VectorCache::open another SQLite file is a clean error") {
  test::TempDir dir;
  const std::string path = dir.file("index.db");
  REQUIRE(store::Store::open(path, store::OpenMode::read_write));  // a kasava index
  const auto cache = store::VectorCache::open(path);
  REQUIRE_FALSE(cache);
  CHECK(cache.error().message ==
        "opening vector cache '" + path + "': file is not a kasava vector cache");
}

TEST_CASE("store::VectorCache::open a cache of another version is a clean error") {
  test::TempDir dir;
  const std::string path = dir.file("vectors.db");
  open_cache(path);
  test::run("sqlite3 '" + path + "' 'PRAGMA user_version = 7'");
  const auto cache = store::VectorCache::open(path);
  REQUIRE_FALSE(cache);
  CHECK(cache.error().message == "opening vector cache '" + path +
                                     "': written by another version of kasava (cache version "
                                     "7, expected 1)");
}

TEST_CASE("store::VectorCache::open a folder it cannot create is a clean error") {
  test::TempDir dir;
  test::write(dir.file("file"), "x");
  const std::string path = dir.file("file/vectors.db");
  const auto cache = store::VectorCache::open(path);
  REQUIRE_FALSE(cache);
  CHECK_THAT(cache.error().message,
             Catch::StartsWith("opening vector cache '" + path + "': creating directory '" +
                               dir.file("file") + "': "));
}

TEST_CASE("store::VectorCache damaged rows read as misses") {
  test::TempDir dir;
  const std::string path = dir.file("vectors.db");
  auto cache = open_cache(path);
  std::mt19937 random(5);
  std::vector<store::QuantizedVector> vectors;
  for (int i = 0; i < 5; ++i) vectors.push_back(store::quantize(random_vector(random, 16)));
  REQUIRE(cache->put("m", {"ok", "short value", "short code", "bad dims", "nan scale"}, vectors));

  const auto set = [&](const std::string& input, const std::string& assignment) {
    const auto key = store::vector_cache_key("m", input);
    std::string hex_key;
    for (const std::uint8_t byte : key) {
      static constexpr char k_digits[] = "0123456789abcdef";
      hex_key += k_digits[byte >> 4];
      hex_key += k_digits[byte & 15];
    }
    test::run("sqlite3 '" + path + "' \"UPDATE vectors SET " + assignment + " WHERE key = x'" +
              hex_key + "'\"");
  };
  set("short value", "value = x'0102'");
  set("short code", "code = x'01'");
  set("bad dims", "dims = -3");
  // 16 values, then the scale's 4 bytes as a NaN.
  set("nan scale", "value = x'" + std::string(32, '1') + "0000c07f'");

  const auto got = cache->get("m", {"ok", "short value", "short code", "bad dims", "nan scale"});
  check_same(got[0], vectors[0]);
  for (std::size_t i = 1; i < got.size(); ++i) {
    INFO(i);
    CHECK_FALSE(got[i].has_value());
  }
}

TEST_CASE("store::VectorCache two instances write one file from two threads") {
  test::TempDir dir;
  const std::string path = dir.file("vectors.db");
  constexpr int k_batches = 40;
  constexpr int k_batch_size = 25;
  constexpr int k_dims = 32;

  // Each thread opens its own instance at the same time (the file is created by one of them)
  // and writes batches while reading the other's.
  const auto work = [&](const std::string& model, std::vector<std::string>& failures) {
    auto opened = store::VectorCache::open(path);
    if (!opened) {
      failures.push_back(opened.error().message);
      return;
    }
    auto& cache = *opened.value();
    std::mt19937 random(static_cast<unsigned>(model.size()));
    for (int batch = 0; batch < k_batches; ++batch) {
      std::vector<std::string> texts;
      std::vector<store::QuantizedVector> vectors;
      for (int i = 0; i < k_batch_size; ++i) {
        texts.push_back("chunk " + std::to_string(batch) + "/" + std::to_string(i));
        vectors.push_back(store::quantize(random_vector(random, k_dims)));
      }
      const std::vector<std::string_view> inputs(texts.begin(), texts.end());
      if (auto status = cache.put(model, inputs, vectors); !status) {
        failures.push_back(status.error().message);
      }
      const auto got = cache.get(model, inputs, k_dims);
      for (std::size_t i = 0; i < got.size(); ++i) {
        if (!got[i] || got[i]->values != vectors[i].values) {
          failures.push_back(model + ": " + texts[i] + " not read back");
        }
      }
    }
  };
  std::vector<std::string> failures_a;
  std::vector<std::string> failures_b;
  std::thread a(work, "model-a", std::ref(failures_a));
  std::thread b(work, "model-bb", std::ref(failures_b));
  a.join();
  b.join();
  for (const auto& failure : failures_a) FAIL_CHECK(failure);
  for (const auto& failure : failures_b) FAIL_CHECK(failure);

  auto cache = open_cache(path);
  CHECK(cache->counts().entries == 2 * k_batches * k_batch_size);
}

TEST_CASE("store::VectorCache one instance shared by threads") {
  test::TempDir dir;
  auto cache = open_cache(dir.file("vectors.db"));
  std::atomic<int> failures{0};
  const auto work = [&](int id) {
    std::mt19937 random(static_cast<unsigned>(id));
    for (int i = 0; i < 50; ++i) {
      const std::string text = std::to_string(id) + ":" + std::to_string(i);
      const auto vector = store::quantize(random_vector(random, 8));
      if (!cache->put("m", {text}, {vector})) ++failures;
      const auto got = cache->get("m", {text});
      if (!got[0] || got[0]->values != vector.values) ++failures;
    }
  };
  std::thread a(work, 1);
  std::thread b(work, 2);
  a.join();
  b.join();
  CHECK(failures == 0);
  CHECK(cache->counts().entries == 100);
}

TEST_CASE("store::VectorCache::default_path follows XDG_CACHE_HOME") {
  const char* old = std::getenv("XDG_CACHE_HOME");
  const std::string saved = old != nullptr ? old : "";
  ::setenv("XDG_CACHE_HOME", "/tmp/xdg-cache", 1);
  CHECK(store::VectorCache::default_path() == "/tmp/xdg-cache/kasava/vectors.db");
  if (old != nullptr) {
    ::setenv("XDG_CACHE_HOME", saved.c_str(), 1);
  } else {
    ::unsetenv("XDG_CACHE_HOME");
  }
}
