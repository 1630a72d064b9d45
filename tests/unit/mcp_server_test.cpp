// Unit tests for core/mcp/server.cpp: JSON-RPC framing (parse errors, invalid requests,
// notifications, unknown methods), the MCP lifecycle (version negotiation) and tools/list and
// tools/call against a fake tool handler.
#include <catch2/catch.hpp>

#include <stdexcept>

#include "core/mcp/server.hpp"

using kasava::mcp::Server;
using kasava::mcp::ServerInfo;
using kasava::mcp::Tool;
using kasava::mcp::ToolHandler;
using kasava::mcp::ToolOutcome;
using kasava::util::JsonValue;
using kasava::util::parse_json;

namespace {

class FakeTools : public ToolHandler {
public:
  std::vector<Tool> tools() const override {
    Tool echo;
    echo.name = "echo";
    echo.description = "Echoes its text argument";
    echo.input_schema = *parse_json(R"({"type":"object","properties":{"text":{"type":"string"}}})");
    Tool boom;
    boom.name = "boom";
    boom.description = "Throws";
    boom.input_schema = *parse_json(R"({"type":"object"})");
    return {echo, boom};
  }
  ToolOutcome call(const std::string& name, const JsonValue& arguments) override {
    ++calls;
    if (name == "boom") throw std::runtime_error("kaboom");
    const std::string* text = arguments["text"].get_string();
    if (text == nullptr) return ToolOutcome::error("missing argument 'text'");
    ToolOutcome outcome;
    outcome.text = *text;
    outcome.structured = *parse_json(R"({"echoed":true})");
    return outcome;
  }
  int calls = 0;
};

struct Session {
  FakeTools tools;
  Server server{tools, ServerInfo{"kasava", "9.9.9", "use search"}};

  JsonValue reply(std::string_view message) {
    auto text = server.handle(message);
    REQUIRE(text.has_value());
    CHECK(text->find('\n') == std::string::npos);  // one message per line
    auto parsed = parse_json(*text);
    REQUIRE(parsed.ok());
    CHECK((*parsed)["jsonrpc"] == JsonValue("2.0"));
    return *parsed;
  }
};

std::int64_t error_code(const JsonValue& reply) {
  return reply["error"]["code"].get_integer().value_or(0);
}

}  // namespace

TEST_CASE("mcp::Server initialize: echoes a supported protocol version, else offers the newest") {
  Session session;
  const JsonValue reply = session.reply(
      R"({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}})");
  CHECK(reply["id"] == JsonValue(1));
  CHECK(reply["result"]["protocolVersion"] == JsonValue("2025-06-18"));
  CHECK(reply["result"]["capabilities"]["tools"].is_object());
  CHECK(reply["result"]["serverInfo"]["name"] == JsonValue("kasava"));
  CHECK(reply["result"]["serverInfo"]["version"] == JsonValue("9.9.9"));
  CHECK(reply["result"]["instructions"] == JsonValue("use search"));
  CHECK(session.server.initialized());

  const JsonValue future = session.reply(
      R"({"jsonrpc":"2.0","id":"a","method":"initialize","params":{"protocolVersion":"2099-01-01"}})");
  CHECK(future["id"] == JsonValue("a"));
  CHECK(future["result"]["protocolVersion"] ==
        JsonValue(kasava::mcp::supported_protocol_versions().front()));

  const JsonValue missing = session.reply(R"({"jsonrpc":"2.0","id":2,"method":"initialize","params":{}})");
  CHECK(error_code(missing) == -32602);
}

TEST_CASE("mcp::Server speaks 2025-11-25 and 2025-06-18, what the TypeScript SDK asks for") {
  for (const char* version : {"2025-11-25", "2025-06-18"}) {
    Session session;
    const JsonValue reply = session.reply(std::string(R"({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":")") +
                                          version + R"(","capabilities":{},"clientInfo":{"name":"t","version":"1"}}})");
    CHECK(reply["result"]["protocolVersion"] == JsonValue(version));
    CHECK(session.server.protocol_version() == version);
  }
  CHECK(kasava::mcp::supported_protocol_versions().front() == "2025-11-25");
}

TEST_CASE("mcp::Server::resume continues a session negotiated earlier") {
  Session session;
  CHECK_FALSE(session.server.initialized());
  session.server.resume("2025-06-18");
  CHECK(session.server.initialized());
  CHECK(session.server.protocol_version() == "2025-06-18");
  CHECK(session.reply(R"({"jsonrpc":"2.0","id":2,"method":"tools/list"})")["result"]["tools"].size() == 2);
}

TEST_CASE("mcp::Server: notifications, client replies and blank lines get no reply") {
  Session session;
  CHECK_FALSE(session.server.handle(R"({"jsonrpc":"2.0","method":"notifications/initialized"})"));
  CHECK_FALSE(session.server.handle(R"({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":3}})"));
  CHECK_FALSE(session.server.handle(R"({"jsonrpc":"2.0","method":"no/such/notification"})"));
  CHECK_FALSE(session.server.handle(R"({"jsonrpc":"2.0","id":7,"result":{}})"));
  CHECK_FALSE(session.server.handle(""));
  CHECK_FALSE(session.server.handle("  \r"));
}

TEST_CASE("mcp::Server: malformed JSON is -32700 with a null id, and the session goes on") {
  Session session;
  const JsonValue broken = session.reply(R"({"jsonrpc":"2.0","id":1,"method":)");
  CHECK(error_code(broken) == -32700);
  CHECK(broken["id"].is_null());
  CHECK(broken.contains("id"));
  CHECK_THAT(broken["error"]["message"].as_string(), Catch::Contains("parse error"));

  const JsonValue ping = session.reply(R"({"jsonrpc":"2.0","id":2,"method":"ping"})");
  CHECK(ping["id"] == JsonValue(2));
  CHECK(ping["result"].is_object());
  CHECK(ping["result"].size() == 0);
}

TEST_CASE("mcp::Server: invalid requests are -32600, unknown methods -32601") {
  Session session;
  CHECK(error_code(session.reply("[1,2]")) == -32600);
  CHECK(error_code(session.reply("42")) == -32600);
  CHECK(error_code(session.reply(R"({"jsonrpc":"2.0","id":1})")) == -32600);
  CHECK(error_code(session.reply(R"({"jsonrpc":"1.0","id":1,"method":"ping"})")) == -32600);
  CHECK(error_code(session.reply(R"({"jsonrpc":"2.0","id":{"x":1},"method":"ping"})")) == -32600);
  CHECK(error_code(session.reply(R"({"jsonrpc":"2.0","id":1,"method":7})")) == -32600);
  CHECK(error_code(session.reply(R"({"jsonrpc":"2.0","id":1,"method":"ping","params":[1]})")) == -32602);

  const JsonValue unknown = session.reply(R"({"jsonrpc":"2.0","id":"x","method":"resources/list"})");
  CHECK(error_code(unknown) == -32601);
  CHECK(unknown["id"] == JsonValue("x"));
  CHECK_THAT(unknown["error"]["message"].as_string(), Catch::Contains("resources/list"));
}

TEST_CASE("mcp::Server tools/list: every tool with its schema and read-only annotation") {
  Session session;
  const JsonValue reply = session.reply(R"({"jsonrpc":"2.0","id":3,"method":"tools/list"})");
  const JsonValue& tools = reply["result"]["tools"];
  REQUIRE(tools.size() == 2);
  CHECK(tools[std::size_t{0}]["name"] == JsonValue("echo"));
  CHECK(tools[std::size_t{0}]["inputSchema"]["type"] == JsonValue("object"));
  CHECK(tools[std::size_t{0}]["annotations"]["readOnlyHint"] == JsonValue(true));
  CHECK(tools[std::size_t{1}]["name"] == JsonValue("boom"));
}

TEST_CASE("mcp::Server tools/call: results, tool errors, unknown tools and handler failures") {
  Session session;
  const JsonValue ok = session.reply(
      R"({"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"}}})");
  CHECK(ok["result"]["isError"] == JsonValue(false));
  CHECK(ok["result"]["content"][std::size_t{0}]["type"] == JsonValue("text"));
  CHECK(ok["result"]["content"][std::size_t{0}]["text"] == JsonValue("hi"));
  CHECK(ok["result"]["structuredContent"]["echoed"] == JsonValue(true));

  const JsonValue tool_error = session.reply(
      R"({"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"echo"}})");
  CHECK(tool_error["result"]["isError"] == JsonValue(true));
  CHECK(tool_error["result"]["content"][std::size_t{0}]["text"] == JsonValue("missing argument 'text'"));

  const int calls_before = session.tools.calls;
  CHECK(error_code(session.reply(
            R"({"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"nope"}})")) == -32602);
  CHECK(error_code(session.reply(R"({"jsonrpc":"2.0","id":7,"method":"tools/call","params":{}})")) == -32602);
  CHECK(error_code(session.reply(
            R"({"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"echo","arguments":[1]}})")) == -32602);
  CHECK(session.tools.calls == calls_before);

  const JsonValue thrown = session.reply(
      R"({"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"boom"}})");
  CHECK(error_code(thrown) == -32603);
  CHECK_THAT(thrown["error"]["message"].as_string(), Catch::Contains("kaboom"));
}
