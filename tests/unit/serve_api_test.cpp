// Tests core/serve/api: routing, the checks before a route (Host, Origin, token, rate limit,
// parameter sizes), parameter validation and the backend's replies, with a fake backend.
#include <catch2/catch.hpp>

#include "core/serve/api.hpp"
#include "core/util/json_value.hpp"

using namespace kasava;
using namespace kasava::serve;

namespace {

class FakeBackend : public Backend {
public:
  std::vector<std::string> repositories() override { return names; }
  Reply search(const SearchRequest& request) override {
    searches.push_back(request);
    return {200, "{\"query\":\"" + request.query + "\",\"results\":[{\"rank\":1}]}\n"};
  }
  Reply file(const FileRequest& request) override {
    files.push_back(request);
    return {200, "{\"path\":\"" + request.path + "\"}\n"};
  }
  Reply status(const std::vector<std::string>& visible) override {
    statuses.push_back(visible);
    return {200, "{\"files\":3}\n"};
  }
  std::vector<std::string> names = {"acme/widgets"};
  std::vector<std::vector<std::string>> statuses;
  std::vector<SearchRequest> searches;
  std::vector<FileRequest> files;
};

httpd::Request get(const std::string& path, std::vector<std::pair<std::string, std::string>> query = {},
                   std::vector<std::pair<std::string, std::string>> headers = {{"Host", "localhost:7700"}}) {
  httpd::Request request;
  request.method = "GET";
  request.path = path;
  request.query = std::move(query);
  request.headers = std::move(headers);
  request.peer = "127.0.0.1";
  request.peer_is_loopback = true;
  return request;
}

std::string error_of(const httpd::Response& response) {
  auto parsed = util::parse_json(response.body);
  REQUIRE(parsed.ok());
  return parsed->operator[]("error").as_string();
}

std::string header_of(const httpd::Response& response, const std::string& name) {
  for (const auto& [key, value] : response.headers) {
    if (key == name) return value;
  }
  return "";
}

ApiOptions loopback_options() {
  ApiOptions options;
  options.hosts = host_rule_for("127.0.0.1", true, 7700);
  return options;
}

}  // namespace

TEST_CASE("serve::Api routes the API and checks its parameters") {
  FakeBackend backend;
  Api api(loopback_options(), backend);
  CHECK(api.handle(get("/healthz")).status == 200);
  auto response = api.handle(get("/api/search", {{"q", "retry"}, {"limit", "5"}, {"mode", "lexical"},
                                                 {"lang", "go"}, {"path", "src/**"}}));
  CHECK(response.status == 200);
  REQUIRE(backend.searches.size() == 1);
  CHECK(backend.searches[0].limit == 5);
  CHECK(backend.searches[0].mode == "lexical");
  CHECK(backend.searches[0].language == "go");
  CHECK(backend.searches[0].path_glob == "src/**");
  CHECK(api.handle(get("/api/search", {{"q", "x"}, {"limit", "101"}})).status == 400);
  CHECK(api.handle(get("/api/search", {{"q", "x"}, {"limit", "5x"}})).status == 400);
  CHECK(api.handle(get("/api/search", {{"q", "x"}, {"mode", "MAGIC"}})).status == 400);
  CHECK(api.handle(get("/api/search", {{"q", std::string(1025, 'q')}})).status == 400);
  CHECK(api.handle(get("/api/search")).status == 400);
  CHECK(backend.searches.size() == 1);  // none of the refused ones reached the backend

  CHECK(api.handle(get("/api/file", {{"path", "a.go"}, {"start", "3"}, {"end", "9"}})).status == 200);
  REQUIRE(backend.files.size() == 1);
  CHECK(backend.files[0].start == 3);
  CHECK(backend.files[0].end == 9);
  CHECK(api.handle(get("/api/file", {{"path", "a.go"}, {"start", "0"}})).status == 400);
  CHECK(api.handle(get("/api/file", {{"path", "a.go"}, {"repo", "other/*"}})).status == 404);

  // repo= that matches no repository: the document of a search without results.
  response = api.handle(get("/api/search", {{"q", "retry"}, {"repo", "other/*"}}));
  CHECK(response.status == 200);
  CHECK(response.body == "{\"query\":\"retry\",\"results\":[]}\n");

  CHECK(api.handle(get("/nothing")).status == 404);
  auto post = get("/api/search", {{"q", "x"}});
  post.method = "POST";
  response = api.handle(post);
  CHECK(response.status == 405);
  CHECK(header_of(response, "Allow") == "GET");
  CHECK(api.handle(get("/api/search", {{"q", "x"}, {"path", std::string(5000, 'p')}})).status == 414);
}

TEST_CASE("serve::Api refuses foreign Host and Origin headers before anything else") {
  FakeBackend backend;
  Api api(loopback_options(), backend);
  CHECK(api.handle(get("/api/status", {}, {{"Host", "evil.example:7700"}})).status == 403);
  CHECK(api.handle(get("/healthz", {}, {{"Host", "evil.example:7700"}})).status == 403);
  CHECK(api.handle(get("/api/status", {}, {{"Host", "localhost:7700"}, {"Origin", "http://evil.example"}})).status == 403);
  CHECK(api.handle(get("/api/status", {}, {{"Host", "localhost:7700"}, {"Origin", "http://localhost:7700"}})).status == 200);
}

TEST_CASE("serve::Api with tokens: 401 without, repositories limited by globs") {
  FakeBackend backend;
  ApiOptions options = loopback_options();
  options.tokens = parse_token_file("all-token-0123456789ab\nother-token-0123456789 other/*\n").value();
  Api api(std::move(options), backend);
  auto response = api.handle(get("/api/status"));
  CHECK(response.status == 401);
  CHECK(header_of(response, "WWW-Authenticate") == "Bearer");
  CHECK(error_of(response).find("Authorization: Bearer") != std::string::npos);
  CHECK(api.handle(get("/healthz")).status == 200);
  auto with = [](const std::string& token) {
    return std::vector<std::pair<std::string, std::string>>{{"Host", "localhost:7700"},
                                                            {"Authorization", "Bearer " + token}};
  };
  CHECK(api.handle(get("/api/status", {}, with("all-token-0123456789ab"))).status == 200);
  CHECK(api.handle(get("/api/status", {}, with("all-token-0123456789ac"))).status == 401);
  CHECK(api.handle(get("/api/status", {}, with("other-token-0123456789"))).status == 403);
  response = api.handle(get("/api/search", {{"q", "retry"}}, with("other-token-0123456789")));
  CHECK(response.status == 200);
  CHECK(response.body == "{\"query\":\"retry\",\"results\":[]}\n");
  CHECK(backend.searches.empty());
}

TEST_CASE("serve::Api over several repositories: each caller's repositories, repo= and ref= passed on") {
  FakeBackend backend;
  backend.names = {"acme/app", "acme/lib", "other/tools"};
  ApiOptions options = loopback_options();
  options.tokens = parse_token_file("all-token-0123456789ab\nacme-token-0123456789 acme/*\n").value();
  Api api(std::move(options), backend);
  auto with = [](const std::string& token) {
    return std::vector<std::pair<std::string, std::string>>{{"Host", "localhost:7700"},
                                                            {"Authorization", "Bearer " + token}};
  };
  // Search: the repositories the token sees, narrowed by repo=; ref= passed on.
  CHECK(api.handle(get("/api/search", {{"q", "retry"}}, with("acme-token-0123456789"))).status == 200);
  CHECK(api.handle(get("/api/search", {{"q", "retry"}, {"repo", "*/tools"}, {"ref", "dev"}},
                       with("all-token-0123456789ab"))).status == 200);
  REQUIRE(backend.searches.size() == 2);
  CHECK(backend.searches[0].repositories == std::vector<std::string>{"acme/app", "acme/lib"});
  CHECK(backend.searches[1].repositories == std::vector<std::string>{"other/tools"});
  CHECK(backend.searches[1].ref == "dev");
  CHECK(api.handle(get("/api/search", {{"q", "retry"}, {"repo", "other/*"}}, with("acme-token-0123456789"))).body ==
        "{\"query\":\"retry\",\"results\":[]}\n");
  CHECK(backend.searches.size() == 2);

  // File: exactly one repository, named by repo= when the caller sees several.
  auto response = api.handle(get("/api/file", {{"path", "a.go"}}, with("acme-token-0123456789")));
  CHECK(response.status == 400);
  CHECK(error_of(response).find("parameter 'repo' must name one repository: 2 match") != std::string::npos);
  CHECK(api.handle(get("/api/file", {{"path", "a.go"}, {"repo", "acme/lib"}, {"ref", "v1"}},
                       with("acme-token-0123456789"))).status == 200);
  CHECK(api.handle(get("/api/file", {{"path", "a.go"}, {"repo", "other/tools"}}, with("acme-token-0123456789")))
            .status == 404);
  REQUIRE(backend.files.size() == 1);
  CHECK(backend.files[0].repository == "acme/lib");
  CHECK(backend.files[0].ref == "v1");

  // Status: of the repositories the caller sees.
  CHECK(api.handle(get("/api/status", {}, with("acme-token-0123456789"))).status == 200);
  REQUIRE(backend.statuses.size() == 1);
  CHECK(backend.statuses[0] == std::vector<std::string>{"acme/app", "acme/lib"});
}

TEST_CASE("serve::Api rate-limits per client with Retry-After, not /healthz") {
  FakeBackend backend;
  ApiOptions options = loopback_options();
  options.rate_limit = 1.0;
  Api api(std::move(options), backend);
  const auto now = RateLimiter::Clock::time_point{} + std::chrono::seconds(100);
  CHECK(api.handle(get("/api/status"), now).status == 200);
  auto response = api.handle(get("/api/status"), now);
  CHECK(response.status == 429);
  CHECK(header_of(response, "Retry-After") == "1");
  CHECK(api.handle(get("/healthz"), now).status == 200);
  auto other = get("/api/status");
  other.peer = "127.0.0.2";
  CHECK(api.handle(other, now).status == 200);
  CHECK(api.handle(get("/api/status"), now + std::chrono::seconds(1)).status == 200);
}

TEST_CASE("serve::Api routes added later: exact paths before prefixes, the longest prefix first") {
  FakeBackend backend;
  Api api(loopback_options(), backend);
  auto answer = [](std::string text) {
    return [text](const httpd::Request&, const Caller&) { return httpd::Response::text(200, text, "text/plain"); };
  };
  api.add_route({"/", true, {"GET"}, Access::open, false, answer("page")});
  api.add_route({"/assets/", true, {"GET"}, Access::open, false, answer("asset")});
  api.add_route({"/mcp", false, {"GET", "POST"}, Access::token, true, answer("mcp")});
  CHECK(api.handle(get("/")).body == "page");
  CHECK(api.handle(get("/assets/app.js")).body == "asset");
  CHECK(api.handle(get("/mcp")).body == "mcp");
  CHECK(api.handle(get("/healthz")).body == "{\"status\":\"ok\"}\n");
  CHECK(api.handle(get("/elsewhere")).body == "page");
}
