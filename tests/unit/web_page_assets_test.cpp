// Unit tests for web/page_assets.cpp: the search page's files as compiled in, found by
// request path, with their content types, ETags and headers.
#include <catch2/catch.hpp>

#include <regex>
#include <string>

#include "web/page_assets.hpp"

using kasava::web::etag_matches;
using kasava::web::find_page_asset;

TEST_CASE("web::find_page_asset serves index.html at /") {
  const auto root = find_page_asset("/");
  const auto index = find_page_asset("/index.html");
  REQUIRE(root);
  REQUIRE(index);
  CHECK(root->body == index->body);
  CHECK(root->content_type == "text/html; charset=utf-8");
  CHECK(root->body.starts_with("<!doctype html>"));
  CHECK(root->body.find("</html>") != std::string_view::npos);
  CHECK(root->cache_control == "no-cache");
}

TEST_CASE("web::find_page_asset gives each file its content type and an ETag of its bytes") {
  const auto script = find_page_asset("/app.js");
  const auto style = find_page_asset("/style.css");
  const auto icon = find_page_asset("/favicon.svg");
  REQUIRE(script);
  REQUIRE(style);
  REQUIRE(icon);
  CHECK(script->content_type == "text/javascript; charset=utf-8");
  CHECK(style->content_type == "text/css; charset=utf-8");
  CHECK(icon->content_type == "image/svg+xml");
  CHECK(script->body.find("api/search") != std::string_view::npos);
  CHECK(script->etag.size() == 22);
  CHECK(script->etag.front() == '"');
  CHECK(script->etag.back() == '"');
  CHECK(script->etag != style->etag);
  CHECK(find_page_asset("/app.js?v=2")->body == script->body);
}

TEST_CASE("web::page_asset_paths lists what find_page_asset answers") {
  const auto paths = kasava::web::page_asset_paths();
  REQUIRE(paths.size() == 5);
  CHECK(paths.front() == "/");
  for (const auto path : paths) CHECK(find_page_asset(path));
}

TEST_CASE("web::find_page_asset knows nothing else") {
  CHECK_FALSE(find_page_asset(""));
  CHECK_FALSE(find_page_asset("/api/search"));
  CHECK_FALSE(find_page_asset("app.js"));
  CHECK_FALSE(find_page_asset("/../web/app.js"));
  CHECK_FALSE(find_page_asset("/page_assets.cpp"));
  CHECK_FALSE(find_page_asset("/CMakeLists.txt"));
}

TEST_CASE("web: every file index.html names is embedded, and nothing in it is inline") {
  const std::string html(find_page_asset("/")->body);
  const std::regex reference(R"((?:src|href)="([^"]+)\")");
  int references = 0;
  for (auto it = std::sregex_iterator(html.begin(), html.end(), reference);
       it != std::sregex_iterator(); ++it) {
    INFO((*it)[1].str());
    CHECK(find_page_asset("/" + (*it)[1].str()));
    ++references;
  }
  CHECK(references == 3);
  // The Content-Security-Policy forbids inline script and style: the page must need none.
  CHECK(html.find("<script>") == std::string::npos);
  CHECK(html.find("<style") == std::string::npos);
  CHECK(html.find(" style=") == std::string::npos);
  CHECK_FALSE(std::regex_search(html, std::regex(R"(\son[a-z]+=)")));
}

TEST_CASE("web::page_headers allow scripts from the server only") {
  std::string policy;
  for (const auto& header : kasava::web::page_headers()) {
    if (header.name == "Content-Security-Policy") policy = header.value;
  }
  CHECK(policy.find("script-src 'self'") != std::string::npos);
  CHECK(policy.find("default-src 'none'") != std::string::npos);
  CHECK(policy.find("unsafe") == std::string::npos);
}

TEST_CASE("web::etag_matches reads If-None-Match lists, weak tags and *") {
  CHECK(etag_matches("\"abc\"", "\"abc\""));
  CHECK(etag_matches("W/\"abc\"", "\"abc\""));
  CHECK(etag_matches("\"x\", \"abc\"", "\"abc\""));
  CHECK(etag_matches(" * ", "\"abc\""));
  CHECK_FALSE(etag_matches("\"abcd\"", "\"abc\""));
  CHECK_FALSE(etag_matches("abc", "\"abc\""));
  CHECK_FALSE(etag_matches("", "\"abc\""));
  CHECK_FALSE(etag_matches(",,", "\"abc\""));
}
