// Tests core/embed/features.cpp: stemming, words of a text, character n-grams.
#include <catch2/catch.hpp>

#include <algorithm>

#include "core/embed/features.hpp"

using namespace kasava;

TEST_CASE("embed::stem_word folds common suffixes") {
  CHECK(embed::stem_word("files") == "file");
  CHECK(embed::stem_word("entries") == "entry");
  CHECK(embed::stem_word("classes") == "class");
  CHECK(embed::stem_word("parsing") == embed::stem_word("parse"));
  CHECK(embed::stem_word("parsed") == embed::stem_word("parses"));
  CHECK(embed::stem_word("stopped") == "stop");
  CHECK(embed::stem_word("called") == "call");
  CHECK(embed::stem_word("string") == "string");
  CHECK(embed::stem_word("is") == "is");
  CHECK(embed::stem_word("status") == "status");
}

TEST_CASE("embed::text_words splits identifiers, counts, drops numbers") {
  const auto words = embed::text_words("parseHTTPRequest(req) parse 42 req");
  std::vector<std::string> seen;
  for (const auto& w : words) seen.push_back(w.word);
  CHECK(seen == std::vector<std::string>{"parsehttprequest", "pars", "http", "request", "req"});
  CHECK(words[1].count == 2);  // "parse" part and the word "parse"
  CHECK(words[4].count == 2);
  CHECK(embed::text_words("a b c d", 2).size() == 2);
}

TEST_CASE("embed::ngram_buckets hashes the n-grams of the marked word") {
  std::vector<std::uint32_t> out;
  embed::ngram_buckets("auth", 3, 5, 1000, out);
  // "<auth>": 4 trigrams, 3 four-grams, 2 five-grams.
  CHECK(out.size() == 9);
  CHECK(std::all_of(out.begin(), out.end(), [](std::uint32_t b) { return b < 1000; }));
  std::vector<std::uint32_t> again;
  embed::ngram_buckets("auth", 3, 5, 1000, again);
  CHECK(out == again);
  std::vector<std::uint32_t> longer;
  embed::ngram_buckets("authenticate", 3, 5, 1000, longer);
  std::size_t shared = 0;
  for (const auto b : out) shared += std::count(longer.begin(), longer.end(), b) > 0 ? 1 : 0;
  CHECK(shared >= 5);  // "<au", "aut", "uth", "<aut", "auth", "<auth"
  out.clear();
  embed::ngram_buckets("x", 3, 5, 1000, out);
  CHECK(out.empty());  // "<x>" is the word itself
}
