// Tests for core/store/tokenizer.cpp: the FTS5 tokenizer's tokens, byte ranges and error
// propagation (its effect on real searches is tested in store_store_test.cpp).
#include <catch2/catch.hpp>

#include <cstring>
#include <string>
#include <vector>

#include "core/store/tokenizer.hpp"

namespace {

struct Token {
  std::string text;
  int begin;
  int end;
  bool operator==(const Token& other) const {
    return text == other.text && begin == other.begin && end == other.end;
  }
};

struct Collector {
  std::vector<Token> tokens;
  int fail_after = -1;  // return an error code on this token (0-based); -1: never
};

int collect(void* context, int flags, const char* token, int size, int begin, int end) {
  auto* collector = static_cast<Collector*>(context);
  if (flags != 0) return 99;  // the tokenizer never colocates
  if (collector->fail_after == static_cast<int>(collector->tokens.size())) return 7;
  collector->tokens.push_back(
      Token{std::string(token, static_cast<std::size_t>(size)), begin, end});
  return 0;
}

std::vector<Token> tokens_of(const std::string& text) {
  Collector collector;
  REQUIRE(kasava::store::tokenize(&collector, 0, text.data(), static_cast<int>(text.size()),
                                  collect) == 0);
  return collector.tokens;
}

} // namespace

TEST_CASE("store::tokenize splits identifiers and keeps the word's byte range") {
  const auto tokens = tokens_of("x = parseConfig(path);");
  const std::vector<Token> expected{
      {"x", 0, 1}, {"parseconfig", 4, 15}, {"parse", 4, 15}, {"config", 4, 15}, {"path", 16, 20}};
  CHECK(tokens == expected);
}

TEST_CASE("store::tokenize splits paths into components") {
  std::vector<std::string> texts;
  for (const auto& token : tokens_of("core/store/store_test.cpp")) texts.push_back(token.text);
  CHECK(texts == std::vector<std::string>{"core", "store", "store_test", "store", "test", "cpp"});
}

TEST_CASE("store::tokenize handles empty, unterminated and negative-size input") {
  CHECK(tokens_of("").empty());
  CHECK(tokens_of("  ;;  ").empty());

  // FTS5 passes text that is not NUL-terminated: only `size` bytes may be read.
  const char buffer[] = {'a', 'b', ' ', 'c', 'd'};
  Collector collector;
  REQUIRE(kasava::store::tokenize(&collector, 0, buffer, 2, collect) == 0);
  REQUIRE(collector.tokens.size() == 1);
  CHECK(collector.tokens[0] == Token{"ab", 0, 2});

  Collector terminated;
  REQUIRE(kasava::store::tokenize(&terminated, 0, "snake_case", -1, collect) == 0);
  CHECK(terminated.tokens.size() == 3);
}

TEST_CASE("store::tokenize stops at the first error the callback returns") {
  Collector collector;
  collector.fail_after = 2;
  const std::string text = "one two three four";
  CHECK(kasava::store::tokenize(&collector, 0, text.data(), static_cast<int>(text.size()),
                                collect) == 7);
  CHECK(collector.tokens.size() == 2);
}

TEST_CASE("store::tokenize treats documents and queries alike") {
  const std::string text = "HTTPServer utf8Decode";
  Collector document;
  Collector query;
  const int k_document_flag = 0x0004;  // FTS5_TOKENIZE_DOCUMENT
  const int k_query_flag = 0x0001;     // FTS5_TOKENIZE_QUERY
  REQUIRE(kasava::store::tokenize(&document, k_document_flag, text.data(),
                                  static_cast<int>(text.size()), collect) == 0);
  REQUIRE(kasava::store::tokenize(&query, k_query_flag, text.data(), static_cast<int>(text.size()),
                                  collect) == 0);
  CHECK(document.tokens == query.tokens);
  std::vector<std::string> texts;
  for (const auto& token : document.tokens) texts.push_back(token.text);
  CHECK(texts == std::vector<std::string>{"httpserver", "http", "server", "utf8decode", "utf", "8",
                                          "decode"});
}
