// Unit tests for core/search/rank.cpp: the query's kind, the file's kind and its prior, and how
// a path names the query.
#include <catch2/catch.hpp>

#include "core/search/rank.hpp"

using namespace kasava;
using search::FileKind;

TEST_CASE("search::query_kind tells names, sentences and both apart") {
  CHECK(search::query_kind(search::parse_query("RouterGroup")) == search::QueryKind::identifier);
  CHECK(search::query_kind(search::parse_query("json.loads")) == search::QueryKind::identifier);
  CHECK(search::query_kind(search::parse_query("display proxy scheme on error")) ==
        search::QueryKind::sentence);
  CHECK(search::query_kind(search::parse_query("fix parseConfig on empty input")) ==
        search::QueryKind::mixed);
}

TEST_CASE("search::file_kind classifies paths") {
  CHECK(search::file_kind("httpx/_client.py") == FileKind::source);
  CHECK(search::file_kind("src/lib.rs") == FileKind::source);
  CHECK(search::file_kind("tests/client/test_proxies.py") == FileKind::test);
  CHECK(search::file_kind("command_test.go") == FileKind::test);
  CHECK(search::file_kind("test/types/route.test-d.ts") == FileKind::test);
  CHECK(search::file_kind("lib/route.spec.ts") == FileKind::test);
  CHECK(search::file_kind("src/test/java/GsonTest.java") == FileKind::test);
  CHECK(search::file_kind("CHANGELOG.md") == FileKind::changelog);
  CHECK(search::file_kind("docs/advanced/ssl.md") == FileKind::docs);
  CHECK(search::file_kind("README.rst") == FileKind::docs);
  CHECK(search::file_kind("examples/hello.js") == FileKind::example);
  CHECK(search::file_kind("CMakeLists.txt") == FileKind::build);
  CHECK(search::file_kind(".github/workflows/ci.yml") == FileKind::build);
  CHECK(search::file_kind("Cargo.toml") == FileKind::build);
  CHECK(search::file_kind("vendor/lib/x.go") == FileKind::generated);
  CHECK(search::file_kind("api/v1/api.pb.go") == FileKind::generated);
  CHECK(search::file_kind("httpx/__init__.py") == FileKind::barrel);
  CHECK(search::file_kind("src/walk/mod.rs") == FileKind::barrel);
  CHECK(search::file_kind("types/route.d.ts") == FileKind::stubs);
}

TEST_CASE("search::asks_for_kind: a query asks for tests, docs or changelogs by naming them") {
  const auto prose = search::parse_query("retry the upload on timeout");
  CHECK(search::asks_for_kind(FileKind::source, prose));
  CHECK_FALSE(search::asks_for_kind(FileKind::test, prose));
  CHECK_FALSE(search::asks_for_kind(FileKind::changelog, prose));
  CHECK_FALSE(search::asks_for_kind(FileKind::generated, search::parse_query("generated parser tables")));
  CHECK(search::asks_for_kind(FileKind::test, search::parse_query("flaky test for upload retries")));
  CHECK(search::asks_for_kind(FileKind::test, search::parse_query("retry tests")));
  CHECK(search::asks_for_kind(FileKind::docs, search::parse_query("document the retry option in the docs")));
  CHECK(search::asks_for_kind(FileKind::stubs, search::parse_query("fix the types of reply.send")));
  CHECK(search::asks_for_kind(FileKind::changelog, search::parse_query("changelog for the release")));
  CHECK_FALSE(search::asks_for_kind(FileKind::docs, search::parse_query("changelog for the release")));
}

TEST_CASE("search::path_match rewards a file named after the query") {
  const auto clients = search::parse_query("keep clients in sync");
  CHECK(search::path_match("httpx/_client.py", clients) == 1.0);
  CHECK(search::path_match("httpx/_models.py", clients) == 0.0);
  // A path written in the query, whole or as a tail, with or without its extension.
  const auto moved = search::parse_query("Move utility functions from _utils.py to _client.py");
  CHECK(search::path_match("httpx/_utils.py", moved) == 1.0);
  CHECK(search::path_match("httpx/_client.py", moved) == 1.0);
  CHECK(search::path_match("httpx/_models.py", moved) < 1.0);
  const auto area = search::parse_query("ignore/types: add a toml type");
  CHECK(search::path_match("crates/ignore/src/types.rs", area) == 1.0);
  CHECK(search::path_match("crates/ignore/src/walk.rs", area) < 1.0);
  // Folder names count a little.
  const auto folder = search::parse_query("transport retries");
  CHECK(search::path_match("httpx/_transports/default.py", folder) > 0.0);
  CHECK(search::path_match("httpx/_transports/default.py", folder) < 1.0);
}

TEST_CASE("search::same_word allows a short ending") {
  CHECK(search::same_word("client", "clients"));
  CHECK(search::same_word("decoders", "decoder"));
  CHECK_FALSE(search::same_word("url", "urls"));  // too short a stem to tell
  CHECK_FALSE(search::same_word("config", "configuration"));
}
