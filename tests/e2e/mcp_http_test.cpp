// End-to-end: MCP over HTTP — `kasava serve` on a free loopback port over a fixture repository
// it has indexed, its /mcp endpoint driven by a real MCP client library (the official
// TypeScript SDK, tests/mcp_client/client.mjs, in both protocol versions it speaks) and by
// requests written by hand for what a good client never sends: a wrong MCP-Protocol-Version,
// an unknown or missing session, a batch, malformed JSON, a foreign Origin, GET, DELETE, a
// notification; and tokens limited to repositories (a token that may not see the served
// repository gets nothing from the tools, nor another token's session).
#include <catch2/catch.hpp>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <thread>

#include "core/util/strings.hpp"
#include "tests/e2e/background.hpp"
#include "tests/e2e/harness.hpp"
#include "tests/e2e/store_runs.hpp"
#include "tests/support/postgres_server.hpp"

using namespace kasava::e2e;
using kasava::util::JsonValue;

namespace {

const std::string k_client_dir = std::string(KASAVA_SOURCE_DIR) + "/tests/mcp_client";
const std::string k_token = "alpha-token-0123456789abcdef";        // may see acme/billing
const std::string k_blind_token = "omega-token-0123456789abcdef";  // may see other/* only

/// A fixture repository named acme/billing by its origin remote, with one distinctive
/// function, indexed.
struct BillingRepo {
  FixtureRepo repo;
  BillingRepo() {
    repo.write("billing.py",
               "def compute_invoice_total(items, tax_rate):\n"
               "    \"\"\"Adds up the prices of the invoice items and applies the tax rate.\"\"\"\n"
               "    subtotal = sum(item.price for item in items)\n"
               "    return subtotal * (1 + tax_rate)\n");
    repo.write("shipping.py",
               "def estimate_parcel_delivery(weight_kg, distance_km):\n"
               "    \"\"\"Estimates the days a parcel takes to arrive.\"\"\"\n"
               "    return 1 + int(distance_km / 500) + int(weight_kg / 20)\n");
    repo.git({"remote", "add", "origin", "https://example.com/acme/billing.git"});
    repo.commit_all("billing");
    const RunResult indexed = repo.kasava({"index"});
    REQUIRE(indexed.exit_code == 0);
  }
};

/// `kasava serve --listen 127.0.0.1:0 --rate-limit 0 [extra…]` in the repository, once it
/// says its port.
class Served {
public:
  Served(const FixtureRepo& repo, const TempDir& scratch, std::vector<std::string> extra = {})
      : m_process(with_serve(std::move(extra)), repo.root(), scratch / "serve") {
    const std::string marker = " on http://127.0.0.1:";
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (true) {
      const std::string out = m_process.out();
      const std::size_t at = out.find(marker);
      if (at != std::string::npos && out.find('\n', at) != std::string::npos) {
        m_port = std::stoi(out.substr(at + marker.size()));
        break;
      }
      if (!m_process.running()) FAIL("kasava serve ended before listening:\n" << m_process.err());
      if (std::chrono::steady_clock::now() > deadline)
        FAIL("kasava serve did not say where it listens");
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  }
  ~Served() {
    m_process.signal(SIGTERM);
    m_process.wait();
  }
  Served(const Served&) = delete;
  Served& operator=(const Served&) = delete;

  int port() const { return m_port; }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(m_port) + "/mcp"; }
  std::string log() const { return m_process.err(); }

private:
  static std::vector<std::string> with_serve(std::vector<std::string> extra) {
    // No rate limit: a fast machine would send more than its 20 requests a second.
    std::vector<std::string> args{"serve", "--listen", "127.0.0.1:0", "--rate-limit", "0"};
    args.insert(args.end(), extra.begin(), extra.end());
    return args;
  }

  BackgroundKasava m_process;
  int m_port = 0;
};

struct HttpReply {
  int status = 0;
  std::map<std::string, std::string> headers;  ///< names lower-case
  std::string body;

  /// A header's value ("" when absent).
  std::string header(const std::string& name) const {
    const auto found = headers.find(name);
    return found == headers.end() ? "" : found->second;
  }

  JsonValue json() const {
    auto parsed = kasava::util::parse_json(body);
    if (!parsed) FAIL("not JSON (" << parsed.error().message << "): " << body);
    return *parsed;
  }
};

/// One HTTP/1.1 request over a new connection (Connection: close), the reply read to its end.
HttpReply http(int port, const std::string& method,
               const std::vector<std::pair<std::string, std::string>>& headers,
               const std::string& body = "") {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  REQUIRE(fd >= 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<std::uint16_t>(port));
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  REQUIRE(::connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0);
  std::string request = method + " /mcp HTTP/1.1\r\nHost: 127.0.0.1:" + std::to_string(port) +
                        "\r\nConnection: close\r\nContent-Length: " + std::to_string(body.size()) +
                        "\r\n";
  for (const auto& [name, value] : headers) request += name + ": " + value + "\r\n";
  request += "\r\n" + body;
  std::size_t sent = 0;
  while (sent < request.size()) {
    const ssize_t count = ::send(fd, request.data() + sent, request.size() - sent, MSG_NOSIGNAL);
    REQUIRE(count > 0);
    sent += static_cast<std::size_t>(count);
  }
  std::string raw;
  char buffer[8192];
  ssize_t count;
  while ((count = ::recv(fd, buffer, sizeof buffer, 0)) > 0)
    raw.append(buffer, static_cast<std::size_t>(count));
  ::close(fd);

  HttpReply reply;
  const std::size_t head_end = raw.find("\r\n\r\n");
  REQUIRE(head_end != std::string::npos);
  const std::vector<std::string> lines = kasava::util::split(raw.substr(0, head_end), '\n');
  REQUIRE(lines.front().rfind("HTTP/1.1 ", 0) == 0);
  reply.status = std::stoi(lines.front().substr(9));
  for (std::size_t i = 1; i < lines.size(); ++i) {
    const std::size_t colon = lines[i].find(':');
    if (colon == std::string::npos) continue;
    reply.headers[kasava::util::to_lower(lines[i].substr(0, colon))] =
        std::string(kasava::util::trim(lines[i].substr(colon + 1)));
  }
  reply.body = raw.substr(head_end + 4);
  CHECK(reply.headers.count("transfer-encoding") == 0);  // whole bodies: no chunks to decode
  return reply;
}

using Headers = std::vector<std::pair<std::string, std::string>>;

Headers post_headers(const std::string& session = "", const std::string& version = "",
                     const std::string& token = "") {
  Headers headers{{"Content-Type", "application/json"},
                  {"Accept", "application/json, text/event-stream"}};
  if (!session.empty()) headers.push_back({"Mcp-Session-Id", session});
  if (!version.empty()) headers.push_back({"MCP-Protocol-Version", version});
  if (!token.empty()) headers.push_back({"Authorization", "Bearer " + token});
  return headers;
}

const std::string k_initialize =
    R"({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"e2e","version":"1"}}})";

/// Initializes a session by hand; returns its id.
std::string open_session(int port, const std::string& token = "") {
  const HttpReply reply = http(port, "POST", post_headers("", "", token), k_initialize);
  REQUIRE(reply.status == 200);
  CHECK(reply.json()["result"]["protocolVersion"] == JsonValue("2025-11-25"));
  REQUIRE(reply.headers.count("mcp-session-id") == 1);
  return reply.headers.at("mcp-session-id");
}

std::string call(const std::string& tool, const std::string& arguments) {
  return R"({"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":")" + tool +
         R"(","arguments":)" + arguments + "}}";
}

/// node on PATH, or the test fails saying what is missing (CI installs it; never skipped).
std::string node_program() {
  const char* path = std::getenv("PATH");
  for (const std::string& folder : kasava::util::split(path ? path : "", ':')) {
    const std::string candidate = (folder.empty() ? "." : folder) + "/node";
    if (::access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  FAIL(
      "node is not on PATH: the MCP-over-HTTP test runs the official MCP TypeScript SDK with "
      "Node.js (scripts/setup installs nodejs, scripts/test the SDK)");
  return "";
}

/// client.mjs's output, one JSON object per step, by step name.
std::map<std::string, JsonValue> run_client(const std::string& url,
                                            std::vector<std::string> extra) {
  const std::string node = node_program();
  if (!std::filesystem::exists(k_client_dir +
                               "/node_modules/@modelcontextprotocol/sdk/package.json")) {
    FAIL("the MCP TypeScript SDK is not installed: run scripts/test, or `npm ci` in "
         << k_client_dir);
  }
  std::vector<std::string> args{k_client_dir + "/client.mjs", "--url", url};
  args.insert(args.end(), extra.begin(), extra.end());
  RunOptions options;
  options.timeout = std::chrono::seconds(60);
  const RunResult result = run_program(node, args, options);
  INFO(describe(result));
  REQUIRE_FALSE(result.timed_out);
  REQUIRE(result.exit_code == 0);
  std::map<std::string, JsonValue> steps;
  for (const std::string& line : lines_of(result.out)) {
    const JsonValue step = parse_json_output(line);
    steps[step["step"].as_string()] = step;
  }
  return steps;
}

}  // namespace

TEST_CASE(
    "mcp over http: the official TypeScript SDK searches, reads and ends its session, in "
    "2025-11-25 and 2025-06-18") {
  BillingRepo billing;
  TempDir scratch("mcp-http");
  Served served(billing.repo, scratch);

  for (const std::string version : {"2025-11-25", "2025-06-18"}) {
    INFO("protocol " << version);
    std::vector<std::string> extra{"--query", "invoice total with tax", "--read", "billing.py"};
    if (version != "2025-11-25") extra.insert(extra.end(), {"--protocol", version});
    auto steps = run_client(served.url(), extra);

    const JsonValue& connected = steps["connected"];
    CHECK(connected["protocolVersion"] == JsonValue(version));
    CHECK(connected["server"]["name"] == JsonValue("kasava"));
    REQUIRE(connected["sessionId"].is_string());
    const std::string session = connected["sessionId"].as_string();
    CHECK(session.size() == 32);

    std::vector<std::string> names;
    for (const auto& name : steps["tools"]["names"].as_array()) names.push_back(name.as_string());
    CHECK(names == std::vector<std::string>{"search", "read_file_range", "index_status"});

    const JsonValue& search = steps["search"];
    CHECK(search["isError"] == JsonValue(false));
    REQUIRE(search["results"].size() >= 1);
    CHECK(search["results"][std::size_t{0}]["path"] == JsonValue("billing.py"));
    CHECK(search["results"][std::size_t{0}]["symbol"] == JsonValue("compute_invoice_total"));
    CHECK(search["text"].as_string().find("def compute_invoice_total(items, tax_rate):") !=
          std::string::npos);

    CHECK(steps["read_file_range"]["isError"] == JsonValue(false));
    CHECK(steps["read_file_range"]["text"].as_string().rfind(
              "billing.py:1-4 (of 4 lines)\ndef compute_invoice_total", 0) == 0);

    CHECK(steps["index_status"]["isError"] == JsonValue(false));
    CHECK(steps["index_status"]["files"] == JsonValue(2));

    CHECK(steps["refused"]["isError"] == JsonValue(true));
    CHECK(steps["refused"]["text"].as_string().find("'..' is not allowed") != std::string::npos);

    CHECK(steps["terminated"]["sessionId"] == JsonValue(session));
    CHECK(steps.count("closed") == 1);
    // The DELETE ended the session on the server: its id is unknown now.
    const HttpReply after = http(served.port(), "POST", post_headers(session, version),
                                 R"({"jsonrpc":"2.0","id":9,"method":"tools/list"})");
    CHECK(after.status == 404);
  }
  // One line per request in the log, nothing of the query.
  const std::string log = served.log();
  CHECK(log.find("POST /mcp 200") != std::string::npos);
  CHECK(log.find("DELETE /mcp 204") != std::string::npos);
  CHECK(log.find("invoice") == std::string::npos);
}

TEST_CASE("mcp over http: requests written by hand get the specification's statuses") {
  BillingRepo billing;
  TempDir scratch("mcp-http");
  Served served(billing.repo, scratch);
  const int port = served.port();
  const std::string session = open_session(port);
  const std::string list = R"({"jsonrpc":"2.0","id":2,"method":"tools/list"})";

  // The initialized notification, and later ones: 202, no body.
  const HttpReply initialized = http(port, "POST", post_headers(session, "2025-11-25"),
                                     R"({"jsonrpc":"2.0","method":"notifications/initialized"})");
  CHECK(initialized.status == 202);
  CHECK(initialized.body.empty());

  const HttpReply listed = http(port, "POST", post_headers(session, "2025-11-25"), list);
  CHECK(listed.status == 200);
  CHECK(listed.header("content-type") == "application/json");
  CHECK(listed.json()["result"]["tools"].size() == 3);

  const HttpReply searched = http(port, "POST", post_headers(session, "2025-11-25"),
                                  call("search", R"({"query":"parcel delivery days","limit":1})"));
  CHECK(searched.status == 200);
  CHECK(searched.json()["result"]["structuredContent"]["results"][std::size_t{0}]["symbol"] ==
        JsonValue("estimate_parcel_delivery"));

  SECTION("an unsupported MCP-Protocol-Version: 400") {
    const HttpReply reply = http(port, "POST", post_headers(session, "1999-01-01"), list);
    CHECK(reply.status == 400);
    CHECK(reply.json()["error"]["message"].as_string().find("MCP-Protocol-Version '1999-01-01'") !=
          std::string::npos);
  }
  SECTION("an unknown session: 404; none at all: 400") {
    CHECK(http(port, "POST", post_headers("0123456789abcdef0123456789abcdef", "2025-11-25"), list)
              .status == 404);
    CHECK(http(port, "POST", post_headers("", "2025-11-25"), list).status == 400);
  }
  SECTION("DELETE ends the session") {
    const HttpReply deleted = http(port, "DELETE", {{"Mcp-Session-Id", session}});
    CHECK(deleted.status == 204);
    CHECK(http(port, "POST", post_headers(session, "2025-11-25"), list).status == 404);
    CHECK(http(port, "DELETE", {{"Mcp-Session-Id", session}}).status == 404);
  }
  SECTION("GET offers no stream: 405") {
    const HttpReply reply =
        http(port, "GET", {{"Accept", "text/event-stream"}, {"Mcp-Session-Id", session}});
    CHECK(reply.status == 405);
    CHECK(reply.header("allow") == "POST, DELETE");
  }
  SECTION("a foreign Origin: 403, and nothing runs") {
    Headers headers = post_headers(session, "2025-11-25");
    headers.push_back({"Origin", "http://attacker.example"});
    const HttpReply reply =
        http(port, "POST", headers, call("read_file_range", R"({"path":"billing.py"})"));
    CHECK(reply.status == 403);
    CHECK(reply.body.find("compute_invoice_total") == std::string::npos);
  }
  SECTION("malformed JSON and batches: 400 with the JSON-RPC error") {
    const HttpReply malformed =
        http(port, "POST", post_headers(session, "2025-11-25"), "{\"jsonrpc\": \"2.0\", ");
    CHECK(malformed.status == 400);
    CHECK(malformed.json()["error"]["code"] == JsonValue(-32700));
    CHECK(malformed.json()["id"].is_null());
    const HttpReply batch =
        http(port, "POST", post_headers(session, "2025-11-25"), "[" + list + "," + list + "]");
    CHECK(batch.status == 400);
    CHECK(batch.json()["error"]["code"] == JsonValue(-32600));
  }
  SECTION("a body that is not JSON: 415") {
    Headers headers = post_headers(session, "2025-11-25");
    headers[0].second = "text/plain";
    CHECK(http(port, "POST", headers, list).status == 415);
  }
  SECTION("only SSE accepted: the reply is one event") {
    Headers headers = post_headers(session, "2025-11-25");
    headers[1].second = "text/event-stream";
    const HttpReply reply = http(port, "POST", headers, list);
    CHECK(reply.status == 200);
    CHECK(reply.header("content-type") == "text/event-stream");
    CHECK(reply.body.rfind(
              "event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{\"tools\":[", 0) ==
          0);
  }
}

TEST_CASE(
    "mcp over http: tokens — none is refused, a token limited to other repositories gets nothing, "
    "sessions are the token's own") {
  BillingRepo billing;
  TempDir scratch("mcp-http");
  {
    std::ofstream tokens(scratch / "tokens");
    tokens << k_token << " acme/*\n" << k_blind_token << " other/*\n";
  }
  Served served(billing.repo, scratch, {"--token-file", scratch / "tokens"});
  const int port = served.port();

  CHECK(http(port, "POST", post_headers(), k_initialize).status == 401);
  CHECK(
      http(port, "POST", post_headers("", "", "not-a-token-of-this-server"), k_initialize).status ==
      401);

  // The token that may see acme/billing, through the SDK (Authorization on every request).
  auto steps = run_client(served.url(), {"--query", "invoice total with tax", "--read",
                                         "billing.py", "--token", k_token});
  CHECK(steps["search"]["results"][std::size_t{0}]["symbol"] == JsonValue("compute_invoice_total"));
  CHECK(steps["read_file_range"]["isError"] == JsonValue(false));
  CHECK(steps.count("closed") == 1);

  // The token limited to other/*: a session, the tools listed, but every call refused.
  const std::string blind = open_session(port, k_blind_token);
  for (const std::string& message :
       {call("search", R"({"query":"invoice total"})"),
        call("read_file_range", R"({"path":"billing.py"})"), call("index_status", "{}")}) {
    const HttpReply reply =
        http(port, "POST", post_headers(blind, "2025-11-25", k_blind_token), message);
    INFO(message);
    CHECK(reply.status == 200);
    const JsonValue result = reply.json()["result"];
    CHECK(result["isError"] == JsonValue(true));
    CHECK(result["content"][std::size_t{0}]["text"] ==
          JsonValue("this token may not see the repository served here"));
    CHECK(reply.body.find("compute_invoice_total") == std::string::npos);
    CHECK(reply.body.find("billing.py:") == std::string::npos);
  }

  // A session answers only the token that opened it.
  const std::string seeing = open_session(port, k_token);
  const std::string search = call("search", R"({"query":"invoice total"})");
  CHECK(http(port, "POST", post_headers(seeing, "2025-11-25", k_blind_token), search).status ==
        404);
  CHECK(http(port, "DELETE",
             {{"Mcp-Session-Id", seeing}, {"Authorization", "Bearer " + k_blind_token}})
            .status == 404);
  const HttpReply own = http(port, "POST", post_headers(seeing, "2025-11-25", k_token), search);
  CHECK(own.status == 200);
  CHECK(own.body.find("compute_invoice_total") != std::string::npos);
  // Tokens never reach the log.
  CHECK(served.log().find("token-0123456789") == std::string::npos);
}

TEST_CASE("mcp over http: after the index is rebuilt, the tools answer from the new one") {
  BillingRepo billing;
  TempDir scratch("mcp-http");
  Served served(billing.repo, scratch);
  const int port = served.port();
  const std::string session = open_session(port);
  const std::string search = call("search", R"({"query":"parcel delivery days","limit":1})");
  auto first_symbol = [&] {
    const HttpReply reply = http(port, "POST", post_headers(session, "2025-11-25"), search);
    REQUIRE(reply.status == 200);
    return reply.json()["result"]["structuredContent"]["results"][std::size_t{0}]["symbol"];
  };
  CHECK(first_symbol() == JsonValue("estimate_parcel_delivery"));  // a kept connection now

  billing.repo.write("shipping.py",
                     "def estimate_freight_arrival(weight_kg, distance_km):\n"
                     "    \"\"\"Estimates the days a parcel delivery takes.\"\"\"\n"
                     "    return 2 + int(distance_km / 400)\n");
  billing.repo.commit_all("rename");
  const RunResult rebuilt = billing.repo.kasava({"index", "--rebuild"});
  REQUIRE(rebuilt.exit_code == 0);
  CHECK(first_symbol() == JsonValue("estimate_freight_arrival"));
}

TEST_CASE("mcp over http with --store: the SDK searches the store, a token sees only its repositories",
          "[store][mcp]") {
  kasava::test_support::PostgresServer& postgres = kasava::test_support::PostgresServer::shared();
  const std::string uri = postgres.uri(postgres.create_database("mcp_http_store"));
  BillingRepo billing;
  publish_as(billing.repo, uri, "acme/billing");
  FixtureRepo payroll;
  payroll.write("payroll.py",
                "def compute_salary_total(employees):\n"
                "    \"\"\"Adds up the salaries of the employees and the invoice tax.\"\"\"\n"
                "    return sum(e.salary for e in employees)\n");
  payroll.commit_all("payroll");
  publish_as(payroll, uri, "other/payroll");
  TempDir scratch("mcp-http-store");
  {
    std::ofstream tokens(scratch / "tokens");
    tokens << k_token << " acme/*\n" << k_blind_token << "\n";  // the second sees everything
  }
  FixtureRepo nowhere{GitInit::no};
  Served served(nowhere, scratch, {"--store", uri, "--token-file", scratch / "tokens"});

  // The SDK, with the token that sees every repository: the store's results, read from the store.
  auto steps = run_client(served.url(), {"--query", "invoice total with tax", "--read", "billing.py",
                                         "--token", k_blind_token});
  CHECK(steps["search"]["results"][std::size_t{0}]["symbol"] == JsonValue("compute_invoice_total"));
  CHECK(steps["search"]["results"][std::size_t{0}]["repository"] == JsonValue("acme/billing"));
  CHECK(steps["read_file_range"]["isError"] == JsonValue(true));  // two repositories: which one?
  CHECK_THAT(steps["read_file_range"]["text"].as_string(), Catch::Contains("name one with `repository`"));
  CHECK_THAT(steps["index_status"]["text"].as_string(), Catch::Contains("repositories 2"));

  // By hand, with the token limited to acme/*: other/payroll does not exist for it.
  const std::string session = open_session(served.port(), k_token);
  const auto call_tool = [&](const std::string& tool, const std::string& arguments) {
    const HttpReply reply =
        http(served.port(), "POST", post_headers(session, "2025-11-25", k_token), call(tool, arguments));
    REQUIRE(reply.status == 200);
    return reply.json()["result"];
  };
  const JsonValue found = call_tool("search", R"({"query":"total of salaries and invoice tax","limit":10})");
  REQUIRE(found["structuredContent"]["results"].size() > 0);
  for (const auto& result : found["structuredContent"]["results"].as_array()) {
    CHECK(result["repository"] == JsonValue("acme/billing"));
  }
  const JsonValue read = call_tool("read_file_range", R"({"path":"billing.py","end_line":1})");
  CHECK(read["isError"] == JsonValue(false));  // the only repository it sees: no `repository` needed
  CHECK(read["structuredContent"]["text"] == JsonValue("def compute_invoice_total(items, tax_rate):\n"));
  const JsonValue hidden = call_tool("read_file_range", R"({"path":"payroll.py","repository":"other/payroll"})");
  CHECK(hidden["isError"] == JsonValue(true));
  CHECK_THAT(hidden["content"][std::size_t{0}]["text"].as_string(), Catch::Contains("no repository named 'other/payroll'"));
  const JsonValue status = call_tool("index_status", "{}");
  CHECK(status["structuredContent"]["repositories"] == JsonValue(1));
  CHECK(served.log().find(postgres.password()) == std::string::npos);
}
