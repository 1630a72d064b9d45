// Unit tests for core/util/tokenize.cpp: identifier splitting and query terms.
#include <catch2/catch.hpp>

#include "core/util/tokenize.hpp"

using kasava::util::code_tokens;
using kasava::util::query_terms;
using kasava::util::split_identifier;
using Strings = std::vector<std::string>;

TEST_CASE("util::split_identifier") {
  CHECK(split_identifier("parseConfig") == Strings{"parse", "config"});
  CHECK(split_identifier("ParseConfig") == Strings{"parse", "config"});
  CHECK(split_identifier("snake_case_name") == Strings{"snake", "case", "name"});
  CHECK(split_identifier("HTTPServer") == Strings{"http", "server"});
  CHECK(split_identifier("parseHTTPRequest2") == Strings{"parse", "http", "request", "2"});
  CHECK(split_identifier("utf8Decode") == Strings{"utf", "8", "decode"});
  CHECK(split_identifier("__init__") == Strings{"init"});
  CHECK(split_identifier("x") == Strings{"x"});
  CHECK(split_identifier("ALLCAPS") == Strings{"allcaps"});
}

TEST_CASE("util::split_identifier into views gives the same parts, buffers reused") {
  std::string lowered;
  std::vector<std::string_view> parts;
  for (const char* identifier : {"parseHTTPRequest2", "snake_case_name", "__init__", "x", "ALLCAPS", "utf8Decode", ""}) {
    split_identifier(identifier, lowered, parts);
    CHECK(Strings(parts.begin(), parts.end()) == split_identifier(identifier));
  }
  split_identifier("HTTPServer", lowered, parts);
  split_identifier("ab", lowered, parts);  // a shorter one after a longer: nothing left over
  CHECK(Strings(parts.begin(), parts.end()) == Strings{"ab"});
}

TEST_CASE("util::code_tokens keeps whole words and adds their parts") {
  CHECK(code_tokens("def parseConfig(path):") ==
        Strings{"def", "parseconfig", "parse", "config", "path"});
  CHECK(code_tokens("src/auth/login_user.py") ==
        Strings{"src", "auth", "login_user", "login", "user", "py"});
  CHECK(code_tokens("") == Strings{});
  CHECK(code_tokens("  ++ -- ") == Strings{});
}

TEST_CASE("util::for_each_code_token reports byte ranges of the word") {
  std::vector<std::pair<std::size_t, std::size_t>> ranges;
  kasava::util::for_each_code_token("a fooBar", [&](std::string_view, std::size_t b, std::size_t e) {
    ranges.emplace_back(b, e);
  });
  REQUIRE(ranges.size() == 4);
  CHECK(ranges[0] == std::make_pair<std::size_t, std::size_t>(0, 1));
  CHECK(ranges[1] == std::make_pair<std::size_t, std::size_t>(2, 8));
  CHECK(ranges[3] == std::make_pair<std::size_t, std::size_t>(2, 8));
}

TEST_CASE("util::code_tokens does not split very long words") {
  const std::string hash(100, 'a');
  CHECK(code_tokens(hash + "B") == Strings{std::string(100, 'a') + "b"});
}

TEST_CASE("util::for_each_code_token gives a word whole, then split_identifier's parts") {
  const std::string long_word = "ab" + std::string(61, 'c') + "D";  // 64 bytes: still split
  for (const std::string& word :
       Strings{"fooBar", "__init__", "HTTPServer2Go", "utf8Decode", "snake_case__x_", "ALLCAPS",
               "x", "déjàVu", "a1B2c3", long_word, long_word + "e"}) {
    Strings expected = split_identifier(word);
    std::string whole;
    for (const char c : word) whole += static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
    whole = whole.substr(whole.find_first_not_of('_'));
    whole = whole.substr(0, whole.find_last_not_of('_') + 1);
    if (expected.size() <= 1 || word.size() > 64) expected.clear();
    expected.insert(expected.begin(), whole);
    CHECK(code_tokens(" " + word + "(") == expected);
  }
}

TEST_CASE("util::query_terms drops stop words and duplicates") {
  CHECK(query_terms("where is the auth code") == Strings{"auth", "code"});
  CHECK(query_terms("how to parse a config, parse it") == Strings{"parse", "config"});
  CHECK(query_terms("the") == Strings{"the"});
  CHECK(query_terms("SaveUploadedFile") == Strings{"saveuploadedfile", "save", "uploaded", "file"});
}
