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

// The plain query's page and the bounded search's, for one expression and limit.
std::pair<std::vector<store::LexicalHit>, std::vector<store::LexicalHit>> both_pages(
    store::Store& store, const std::string& expression, int limit) {
  const store::FieldWeights weights;
  store.set_bounded_search(1'000'000'000);  // the plain query
  auto plain = store.lexical_search(expression, weights, limit);
  store.set_bounded_search(0);
  auto bounded = store.lexical_search(expression, weights, limit);
  REQUIRE(plain);
  REQUIRE(bounded);
  return {std::move(*plain), std::move(*bounded)};
}

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
      const auto [plain, bounded] = both_pages(*store, expression, limit);
      REQUIRE(plain.size() == bounded.size());
      for (std::size_t i = 0; i < plain.size(); ++i) {
        CHECK(plain[i].score == bounded[i].score);  // to the bit
        if (plain[i].score != bounded[i].score) break;
      }
      // The same set of chunks at each score (ties may come in either order).
      std::multiset<std::pair<double, std::int64_t>> a, b;
      for (const auto& hit : plain) a.insert({hit.score, hit.chunk_id});
      for (const auto& hit : bounded) b.insert({hit.score, hit.chunk_id});
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

TEST_CASE("store::Store::lexical_search's bound gives the plain query's page for many terms and limits") {
  // Fourteen words, each in its own share of the chunks (from nearly all to a few), once or
  // more, in the body or the symbol: the floors then come from the rows holding every term or
  // from those holding a rarer one, and the groups of common terms that reach them are
  // pairs, triples or more, or too many to name (more than twelve common terms).
  test::TempDir dir;
  auto store = open_store(dir.file("index.db"));
  std::mt19937 random(29);
  constexpr int k_words = 14;
  const double share[k_words] = {0.95, 0.8, 0.6, 0.5, 0.4, 0.3, 0.25, 0.2, 0.15, 0.1, 0.07, 0.05, 0.03, 0.01};
  std::uniform_real_distribution<double> uniform(0.0, 1.0);
  store->begin();
  for (int f = 0; f < 60; ++f) {
    std::vector<types::Chunk> chunks;
    for (int c = 0; c < 12; ++c) {
      types::Chunk chunk = make_chunk(f, 1 + 3 * c);
      chunk.text.clear();
      for (int w = 0; w < k_words; ++w) {
        if (uniform(random) >= share[w]) continue;
        const int times = 1 + static_cast<int>(random() % 3);
        for (int t = 0; t < times; ++t) chunk.text += " word" + std::string(1, static_cast<char>('a' + w));
        if (random() % 9 == 0) chunk.symbol = "word" + std::string(1, static_cast<char>('a' + w));
      }
      for (int w = 0; w < static_cast<int>(random() % 8); ++w) chunk.text += " filler";
      chunks.push_back(chunk);
    }
    store->put_file({"src/" + std::to_string(f) + ".py", "b" + std::to_string(f), "python", 10, ""}, chunks);
  }
  store->commit();
  int checked = 0;
  for (int e = 0; e < 60; ++e) {
    // 2 to 14 distinct words in a random order.
    std::vector<int> words(k_words);
    for (int w = 0; w < k_words; ++w) words[static_cast<std::size_t>(w)] = w;
    std::shuffle(words.begin(), words.end(), random);
    words.resize(static_cast<std::size_t>(2 + e % (k_words - 1)));
    std::string expression;
    for (const int w : words) {
      if (!expression.empty()) expression += " OR ";
      expression += "\"word" + std::string(1, static_cast<char>('a' + w)) + "\"";
    }
    for (const int limit : {1, 4, 25, 120}) {
      INFO(expression << " limit " << limit);
      const auto [plain, bounded] = both_pages(*store, expression, limit);
      REQUIRE(plain.size() == bounded.size());
      // Scores to the bit; the chunks too, where the page does not end inside a tie.
      std::vector<double> a, b;
      for (const auto& hit : plain) a.push_back(hit.score);
      for (const auto& hit : bounded) b.push_back(hit.score);
      CHECK(a == b);
      std::set<std::int64_t> plain_ids, bounded_ids;
      const double last = plain.empty() ? 0.0 : plain.back().score;
      for (const auto& hit : plain) if (hit.score != last) plain_ids.insert(hit.chunk_id);
      for (const auto& hit : bounded) if (hit.score != last) bounded_ids.insert(hit.chunk_id);
      CHECK(plain_ids == bounded_ids);
      ++checked;
    }
  }
  CHECK(checked == 240);
}
