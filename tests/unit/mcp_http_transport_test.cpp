// Unit tests for core/mcp/http_transport.cpp: the Streamable HTTP transport's sessions (issued
// by initialize, required after it, bound to their principal, ended by DELETE, expiring,
// bounded), its header checks (MCP-Protocol-Version, Content-Type, Accept), its statuses for
// notifications, client replies, GET, malformed JSON and batches, and JSON or SSE replies.
#include <catch2/catch.hpp>

#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "core/mcp/http_transport.hpp"

using kasava::mcp::HttpRequest;
using kasava::mcp::HttpResponse;
using kasava::mcp::HttpTransport;
using kasava::mcp::HttpTransportOptions;
using kasava::mcp::ServerInfo;
using kasava::mcp::Tool;
using kasava::mcp::ToolHandler;
using kasava::mcp::ToolOutcome;
using kasava::util::JsonValue;
using kasava::util::parse_json;
using namespace std::chrono_literals;

namespace {

class FakeTools : public ToolHandler {
public:
  explicit FakeTools(std::string owner = "tools") : m_owner(std::move(owner)) {}
  std::vector<Tool> tools() const override {
    Tool who;
    who.name = "who";
    who.description = "Names the tool handler that answered";
    who.input_schema = *parse_json(R"({"type":"object"})");
    return {who};
  }
  ToolOutcome call(const std::string& /*name*/, const JsonValue& /*arguments*/) override {
    ++calls;
    ToolOutcome outcome;
    outcome.text = m_owner;
    return outcome;
  }
  int calls = 0;

private:
  std::string m_owner;
};

const std::string k_initialize_11 =
    R"({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}})";
const std::string k_initialize_06 =
    R"({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}})";
const std::string k_initialized = R"({"jsonrpc":"2.0","method":"notifications/initialized"})";
const std::string k_list = R"({"jsonrpc":"2.0","id":2,"method":"tools/list"})";
const std::string k_call =
    R"({"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"who","arguments":{}}})";

struct Fixture {
  int next_id = 0;
  HttpTransport transport{ServerInfo{"kasava", "9.9.9", ""}, options()};
  FakeTools tools;
  HttpTransport::Clock::time_point now{};

  HttpTransportOptions options(std::size_t max_sessions = 1024) {
    HttpTransportOptions result;
    result.max_sessions = max_sessions;
    result.idle_expiry = 60s;
    result.new_session_id = [this] { return "session-" + std::to_string(++next_id); };
    return result;
  }

  static HttpRequest post(std::string body, std::string session = "", std::string version = "") {
    HttpRequest request;
    request.method = "POST";
    request.headers = {{"content-type", "application/json"},
                       {"accept", "application/json, text/event-stream"}};
    if (!session.empty()) request.headers.push_back({"mcp-session-id", session});
    if (!version.empty()) request.headers.push_back({"mcp-protocol-version", version});
    request.body = std::move(body);
    return request;
  }

  HttpResponse send(const HttpRequest& request) { return transport.handle(request, tools, now); }

  // Initializes a session and returns its id.
  std::string open(const std::string& initialize = k_initialize_11,
                   const std::string& principal = "") {
    HttpRequest request = post(initialize);
    request.principal = principal;
    const HttpResponse response = send(request);
    REQUIRE(response.status == 200);
    REQUIRE(response.header("Mcp-Session-Id") != nullptr);
    return *response.header("Mcp-Session-Id");
  }
};

JsonValue json_body(const HttpResponse& response) {
  REQUIRE(response.header("content-type") != nullptr);
  CHECK(*response.header("content-type") == "application/json");
  auto parsed = parse_json(response.body);
  REQUIRE(parsed.ok());
  return *parsed;
}

}  // namespace

TEST_CASE("mcp::HttpTransport initialize issues a session in the negotiated version",
          "[mcp][http]") {
  Fixture f;
  for (const auto& [initialize, version] :
       {std::pair{k_initialize_11, "2025-11-25"}, std::pair{k_initialize_06, "2025-06-18"}}) {
    const HttpResponse response = f.send(Fixture::post(initialize));
    REQUIRE(response.status == 200);
    const JsonValue body = json_body(response);
    CHECK(body["result"]["protocolVersion"] == JsonValue(version));
    CHECK(body["result"]["serverInfo"]["name"] == JsonValue("kasava"));
    REQUIRE(response.header("mcp-session-id") != nullptr);
    const std::string session = *response.header("mcp-session-id");
    // Later requests name the session and the version agreed.
    const HttpResponse list = f.send(Fixture::post(k_list, session, version));
    REQUIRE(list.status == 200);
    CHECK(json_body(list)["result"]["tools"][0]["name"] == JsonValue("who"));
    CHECK(list.header("mcp-session-id") == nullptr);
  }
  CHECK(f.transport.session_count() == 2);
}

TEST_CASE("mcp::HttpTransport answers notifications and client replies with 202 and no body",
          "[mcp][http]") {
  Fixture f;
  const std::string session = f.open();
  for (const std::string& message :
       {k_initialized,
        std::string(
            R"({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":9}})"),
        std::string(R"({"jsonrpc":"2.0","id":"s1","result":{}})")}) {
    const HttpResponse response = f.send(Fixture::post(message, session, "2025-11-25"));
    CHECK(response.status == 202);
    CHECK(response.body.empty());
  }
}

TEST_CASE("mcp::HttpTransport requires the session after initialize", "[mcp][http]") {
  Fixture f;
  const std::string session = f.open();
  SECTION("missing: 400") {
    const HttpResponse response = f.send(Fixture::post(k_list));
    CHECK(response.status == 400);
    CHECK(json_body(response)["error"]["message"].as_string().find("Mcp-Session-Id") !=
          std::string::npos);
    CHECK(json_body(response)["id"].is_null());
  }
  SECTION("unknown: 404") {
    CHECK(f.send(Fixture::post(k_list, "session-99")).status == 404);
    CHECK(f.send(Fixture::post(k_initialized, "session-99")).status == 404);
  }
  SECTION("another principal's: 404, and no tool runs") {
    HttpRequest request = Fixture::post(k_call, session);
    request.principal = "token-2";
    CHECK(f.send(request).status == 404);
    CHECK(f.tools.calls == 0);
    // The owner still gets in.
    CHECK(f.send(Fixture::post(k_call, session)).status == 200);
    CHECK(f.tools.calls == 1);
  }
}

TEST_CASE("mcp::HttpTransport checks MCP-Protocol-Version", "[mcp][http]") {
  Fixture f;
  const std::string session = f.open(k_initialize_06);
  SECTION("unsupported: 400") {
    const HttpResponse response = f.send(Fixture::post(k_list, session, "2099-01-01"));
    CHECK(response.status == 400);
    CHECK(json_body(response)["error"]["message"].as_string().find("'2099-01-01'") !=
          std::string::npos);
  }
  SECTION("supported but not the one negotiated: 400") {
    CHECK(f.send(Fixture::post(k_list, session, "2025-11-25")).status == 400);
  }
  SECTION("absent: the session's version") {
    CHECK(f.send(Fixture::post(k_list, session)).status == 200);
  }
}

TEST_CASE("mcp::HttpTransport DELETE ends a session", "[mcp][http]") {
  Fixture f;
  const std::string session = f.open();
  const std::string other = f.open();
  HttpRequest remove;
  remove.method = "DELETE";
  CHECK(f.send(remove).status == 400);  // which session?
  remove.headers = {{"Mcp-Session-Id", session}};
  remove.principal = "someone else";
  CHECK(f.send(remove).status == 404);
  remove.principal = "";
  const HttpResponse removed = f.send(remove);
  CHECK(removed.status == 204);
  CHECK(removed.body.empty());
  CHECK(f.send(remove).status == 404);
  CHECK(f.send(Fixture::post(k_list, session, "2025-11-25")).status == 404);
  CHECK(f.send(Fixture::post(k_list, other, "2025-11-25")).status == 200);
  CHECK(f.transport.session_count() == 1);
}

TEST_CASE("mcp::HttpTransport offers no GET stream", "[mcp][http]") {
  Fixture f;
  const std::string session = f.open();
  for (const char* method : {"GET", "PUT", "PATCH"}) {
    HttpRequest request;
    request.method = method;
    request.headers = {{"Accept", "text/event-stream"}, {"Mcp-Session-Id", session}};
    const HttpResponse response = f.send(request);
    CHECK(response.status == 405);
    REQUIRE(response.header("Allow") != nullptr);
    CHECK(*response.header("Allow") == "POST, DELETE");
  }
}

TEST_CASE("mcp::HttpTransport refuses what is not one JSON-RPC message", "[mcp][http]") {
  Fixture f;
  const std::string session = f.open();
  struct Case {
    std::string body;
    int code;
  };
  for (const Case& c : {Case{"{\"jsonrpc\":", -32700}, Case{"", -32700},
                        Case{"[" + k_list + "," + k_list + "]", -32600}, Case{"42", -32600},
                        Case{R"({"jsonrpc":"2.0","id":{}, "method":"tools/list"})", -32600},
                        Case{R"({"jsonrpc":"2.0"})", -32600}}) {
    INFO(c.body);
    const HttpResponse response = f.send(Fixture::post(c.body, session, "2025-11-25"));
    CHECK(response.status == 400);
    const JsonValue body = json_body(response);
    CHECK(body["error"]["code"] == JsonValue(c.code));
    CHECK(body["id"].is_null());
  }
  // A well-formed request for a method there is not is answered by JSON-RPC, not HTTP.
  const HttpResponse unknown =
      f.send(Fixture::post(R"({"jsonrpc":"2.0","id":7,"method":"nope"})", session, "2025-11-25"));
  CHECK(unknown.status == 200);
  CHECK(json_body(unknown)["error"]["code"] == JsonValue(-32601));
  CHECK(json_body(unknown)["id"] == JsonValue(7));
}

TEST_CASE("mcp::HttpTransport checks Content-Type and Accept", "[mcp][http]") {
  Fixture f;
  SECTION("a body that is not JSON: 415") {
    HttpRequest request = Fixture::post(k_initialize_11);
    request.headers[0].second = "text/plain";
    CHECK(f.send(request).status == 415);
    request.headers.erase(request.headers.begin());
    CHECK(f.send(request).status == 415);
  }
  SECTION("parameters and case do not matter") {
    HttpRequest request = Fixture::post(k_initialize_11);
    request.headers = {{"Content-Type", "Application/JSON; charset=utf-8"}};  // no Accept: anything
    CHECK(f.send(request).status == 200);
  }
  SECTION("neither JSON nor SSE acceptable: 406") {
    HttpRequest request = Fixture::post(k_initialize_11);
    request.headers[1].second = "text/html, application/json;q=0";
    CHECK(f.send(request).status == 406);
    CHECK(f.transport.session_count() == 0);
  }
  SECTION("only SSE acceptable: the reply is one SSE event") {
    HttpRequest request = Fixture::post(k_initialize_11);
    request.headers[1].second = "text/event-stream";
    const HttpResponse response = f.send(request);
    CHECK(response.status == 200);
    REQUIRE(response.header("Content-Type") != nullptr);
    CHECK(*response.header("Content-Type") == "text/event-stream");
    REQUIRE(response.body.rfind("event: message\ndata: ", 0) == 0);
    REQUIRE(response.body.size() > 2);
    CHECK(response.body.substr(response.body.size() - 2) == "\n\n");
    const std::string data = response.body.substr(21, response.body.size() - 23);
    CHECK(data.find('\n') == std::string::npos);
    CHECK((*parse_json(data))["result"]["protocolVersion"] == JsonValue("2025-11-25"));
    CHECK(response.header("Mcp-Session-Id") != nullptr);
  }
}

TEST_CASE("mcp::HttpTransport opens no session for a failed initialize", "[mcp][http]") {
  Fixture f;
  const HttpResponse response =
      f.send(Fixture::post(R"({"jsonrpc":"2.0","id":1,"method":"initialize","params":{}})"));
  CHECK(response.status == 200);
  CHECK(json_body(response)["error"]["code"] == JsonValue(-32602));
  CHECK(response.header("Mcp-Session-Id") == nullptr);
  CHECK(f.transport.session_count() == 0);
}

TEST_CASE("mcp::HttpTransport runs each call with the tools of its request", "[mcp][http]") {
  Fixture f;
  const std::string session = f.open();
  FakeTools limited("limited");
  const HttpResponse response =
      f.transport.handle(Fixture::post(k_call, session, "2025-11-25"), limited, f.now);
  REQUIRE(response.status == 200);
  CHECK(json_body(response)["result"]["content"][0]["text"] == JsonValue("limited"));
  CHECK(limited.calls == 1);
  CHECK(f.tools.calls == 0);
}

TEST_CASE("mcp::HttpTransport sessions expire when idle and are bounded in number", "[mcp][http]") {
  SECTION("idle expiry") {
    Fixture f;
    const std::string session = f.open();
    f.now += 59s;
    CHECK(f.send(Fixture::post(k_list, session)).status == 200);  // used: idle time starts again
    f.now += 59s;
    CHECK(f.send(Fixture::post(k_list, session)).status == 200);
    f.now += 60s;
    CHECK(f.send(Fixture::post(k_list, session)).status == 404);
    CHECK(f.transport.session_count() == 0);
  }
  SECTION("the least recently used ends beyond the limit") {
    Fixture f;
    HttpTransport small{ServerInfo{"kasava", "9.9.9", ""}, f.options(2)};
    auto open = [&](HttpTransport& transport) {
      const HttpResponse response =
          transport.handle(Fixture::post(k_initialize_11), f.tools, f.now);
      REQUIRE(response.header("Mcp-Session-Id") != nullptr);
      return *response.header("Mcp-Session-Id");
    };
    const std::string first = open(small);
    f.now += 1s;
    const std::string second = open(small);
    f.now += 1s;
    CHECK(small.handle(Fixture::post(k_list, first), f.tools, f.now).status ==
          200);  // first used last
    f.now += 1s;
    const std::string third = open(small);
    CHECK(small.session_count() == 2);
    CHECK(small.handle(Fixture::post(k_list, second), f.tools, f.now).status == 404);
    CHECK(small.handle(Fixture::post(k_list, first), f.tools, f.now).status == 200);
    CHECK(small.handle(Fixture::post(k_list, third), f.tools, f.now).status == 200);
  }
}

TEST_CASE("mcp::HttpTransport: one principal's sessions end before anyone else's", "[mcp][http]") {
  Fixture f;
  HttpTransportOptions options = f.options(3);
  options.max_sessions_per_principal = 2;
  HttpTransport small{ServerInfo{"kasava", "9.9.9", ""}, options};
  auto open = [&](const std::string& principal) {
    HttpRequest request = Fixture::post(k_initialize_11);
    request.principal = principal;
    const HttpResponse response = small.handle(request, f.tools, f.now);
    REQUIRE(response.header("Mcp-Session-Id") != nullptr);
    f.now += 1s;
    return *response.header("Mcp-Session-Id");
  };
  auto answers = [&](const std::string& session, const std::string& principal) {
    HttpRequest request = Fixture::post(k_list, session);
    request.principal = principal;
    return small.handle(request, f.tools, f.now).status == 200;
  };
  const std::string victim = open("victim");
  const std::string first = open("greedy");
  const std::string second = open("greedy");
  const std::string third = open("greedy");  // ends greedy's first, not the victim's
  const std::string fourth = open("greedy");
  CHECK(answers(victim, "victim"));
  CHECK_FALSE(answers(first, "greedy"));
  CHECK_FALSE(answers(second, "greedy"));
  CHECK(answers(third, "greedy"));
  CHECK(answers(fourth, "greedy"));
  CHECK(small.session_count() == 3);
}

TEST_CASE("mcp::HttpTransport serves several connections at once", "[mcp][http]") {
  HttpTransport transport{ServerInfo{"kasava", "9.9.9", ""}, HttpTransportOptions{}};
  std::atomic<int> answered{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      FakeTools tools("thread " + std::to_string(t));
      const auto now = HttpTransport::Clock::now();
      for (int i = 0; i < 50; ++i) {
        const HttpResponse opened = transport.handle(Fixture::post(k_initialize_11), tools, now);
        const std::string* session = opened.header("Mcp-Session-Id");
        if (opened.status != 200 || session == nullptr) return;
        const HttpResponse called = transport.handle(Fixture::post(k_call, *session), tools, now);
        if (called.status != 200 ||
            called.body.find("thread " + std::to_string(t)) == std::string::npos)
          return;
        HttpRequest remove;
        remove.method = "DELETE";
        remove.headers = {{"Mcp-Session-Id", *session}};
        if (transport.handle(remove, tools, now).status != 204) return;
        ++answered;
      }
    });
  }
  for (auto& thread : threads) thread.join();
  CHECK(answered == 200);
  CHECK(transport.session_count() == 0);
}

TEST_CASE("mcp::random_session_id is 128 bits of visible ASCII, different each time",
          "[mcp][http]") {
  const std::string a = kasava::mcp::random_session_id();
  const std::string b = kasava::mcp::random_session_id();
  CHECK(a.size() == 32);
  CHECK(a.find_first_not_of("0123456789abcdef") == std::string::npos);
  CHECK(a != b);
}
