// Unit tests for core/search/query.cpp: a query parsed once into terms, identifiers and parts.
#include <catch2/catch.hpp>

#include "core/search/query.hpp"

namespace kasava {
namespace {

using Strings = std::vector<std::string>;

TEST_CASE("search::parse_query splits a sentence into terms and parts, no identifiers") {
  const auto query = search::parse_query("where is the invoice total computed?");
  CHECK(query.text == "where is the invoice total computed?");
  CHECK(query.terms == Strings{"invoice", "total", "computed"});
  CHECK(query.match_expression == R"("invoice" OR "total" OR "computed")");
  CHECK(query.identifiers.empty());
  CHECK(query.parts == Strings{"invoice", "total", "computed"});
  CHECK_FALSE(query.one_identifier);
  CHECK(query.has_terms());
}

TEST_CASE("search::parse_query keeps the words that look like paths, lower-cased") {
  const auto query = search::parse_query("Move helpers from `_Utils.py` to src/Flask/typing: (see ignore/types.rs)");
  REQUIRE(query.path_words.size() == 3);
  CHECK(query.path_words[0].text == "_utils.py");
  CHECK_FALSE(query.path_words[0].has_slash);
  CHECK(query.path_words[1].text == "src/flask/typing");
  CHECK(query.path_words[1].has_slash);
  CHECK(query.path_words[2].text == "ignore/types.rs");
  // Words without a slash or a short extension, or too short, are no paths.
  CHECK(search::parse_query("call foo.bar() then version 1.2.3456789").path_words.empty());
  CHECK(search::parse_query("where is auth").path_words.empty());
}

TEST_CASE("search::parse_query knows a query that is one identifier") {
  const auto bare = search::parse_query("parseConfig");
  CHECK(bare.identifiers == Strings{"parseConfig"});
  CHECK(bare.terms == Strings{"parseconfig", "parse", "config"});
  CHECK(bare.parts == Strings{"parse", "config"});
  CHECK(bare.one_identifier);

  const auto qualified = search::parse_query("Store::open");
  CHECK(qualified.identifiers == Strings{"Store::open"});
  CHECK(qualified.one_identifier);

  // An identifier inside a sentence is an identifier, but the query is more than one.
  const auto embedded = search::parse_query("where is SaveUploadedFile defined");
  CHECK(embedded.identifiers == Strings{"SaveUploadedFile"});
  CHECK_FALSE(embedded.one_identifier);
}

TEST_CASE("search::parse_query of nothing searchable") {
  const auto query = search::parse_query("  ?? ");
  CHECK(query.terms.empty());
  CHECK(query.match_expression.empty());
  CHECK_FALSE(query.has_terms());
  CHECK(query.identifiers.empty());
  CHECK_FALSE(query.one_identifier);
}

TEST_CASE("search::name_components splits qualified names and refuses others") {
  using Views = std::vector<std::string_view>;
  CHECK(search::name_components("Store::open") == Views{"Store", "open"});
  CHECK(search::name_components("req->body") == Views{"req", "body"});
  CHECK(search::name_components("json.loads") == Views{"json", "loads"});
  CHECK(search::name_components("save_file") == Views{"save_file"});
  CHECK(search::name_components("2+2").empty());
  CHECK(search::name_components("Store::").empty());
  CHECK(search::name_components("a b").empty());
}

}  // namespace
}  // namespace kasava
