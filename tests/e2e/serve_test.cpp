// End-to-end: `kasava serve` on a free loopback port, driven over raw sockets — every endpoint
// (the search document equal to `ask --json`'s), every error status, tokens limited to
// repositories, Host and Origin refusals, a client sending its headers one byte a second while
// others are answered, a 10 MB request, 200 connections at once, an index rebuilt under the
// server, and SIGTERM with a request in flight.
#include <catch2/catch.hpp>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <fstream>
#include <set>
#include <thread>

#include "tests/e2e/background.hpp"
#include "tests/e2e/harness.hpp"
#include "tests/e2e/store_runs.hpp"
#include "tests/support/postgres_server.hpp"

using namespace kasava::e2e;
using kasava::util::JsonValue;

namespace {

using Headers = std::vector<std::pair<std::string, std::string>>;

struct HttpReply {
  int status = 0;     ///< 0: no reply (connection closed or refused)
  std::string head;   ///< status line and header fields
  std::string body;
  std::string header(const std::string& name) const {
    std::string lower_head;
    for (char c : head) lower_head += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    std::string lower_name;
    for (char c : name) lower_name += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    const std::size_t at = lower_head.find("\r\n" + lower_name + ":");
    if (at == std::string::npos) return "";
    const std::size_t start = at + 3 + name.size();
    const std::size_t end = head.find("\r\n", start);
    std::string value = head.substr(start, end - start);
    while (!value.empty() && value.front() == ' ') value.erase(0, 1);
    return value;
  }
};

/// A connected socket to 127.0.0.1:port, or -1.
int connect_to(int port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<std::uint16_t>(port));
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0) {
    ::close(fd);
    return -1;
  }
  timeval timeout{30, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
  return fd;
}

bool send_all(int fd, std::string_view data) {
  while (!data.empty()) {
    const ssize_t sent = ::send(fd, data.data(), data.size(), MSG_NOSIGNAL);
    if (sent <= 0) return false;
    data.remove_prefix(static_cast<std::size_t>(sent));
  }
  return true;
}

/// Reads a whole reply (the server closes the connection: requests say Connection: close).
HttpReply read_reply(int fd) {
  std::string data;
  char buffer[65536];
  for (;;) {
    const ssize_t count = ::recv(fd, buffer, sizeof buffer, 0);
    if (count <= 0) break;
    data.append(buffer, static_cast<std::size_t>(count));
  }
  HttpReply reply;
  const std::size_t end = data.find("\r\n\r\n");
  if (data.rfind("HTTP/1.", 0) != 0 || end == std::string::npos) return reply;
  reply.status = std::atoi(data.c_str() + 9);
  reply.head = data.substr(0, end);
  reply.body = data.substr(end + 4);
  return reply;
}

std::string request_text(int port, const std::string& method, const std::string& target,
                         const Headers& headers = {}, bool default_host = true) {
  std::string text = method + " " + target + " HTTP/1.1\r\n";
  if (default_host) text += "Host: 127.0.0.1:" + std::to_string(port) + "\r\n";
  for (const auto& [name, value] : headers) text += name + ": " + value + "\r\n";
  return text + "Connection: close\r\n\r\n";
}

HttpReply http(int port, const std::string& method, const std::string& target, const Headers& headers = {},
               bool default_host = true) {
  const int fd = connect_to(port);
  if (fd < 0) return {};
  send_all(fd, request_text(port, method, target, headers, default_host));
  HttpReply reply = read_reply(fd);
  ::close(fd);
  return reply;
}

HttpReply get(int port, const std::string& target, const Headers& headers = {}) {
  return http(port, "GET", target, headers);
}

JsonValue json_of(const HttpReply& reply) {
  auto parsed = kasava::util::parse_json(reply.body);
  INFO(reply.head << "\n" << reply.body);
  REQUIRE(parsed.ok());
  return std::move(parsed).value();
}

std::string error_of(const HttpReply& reply) {
  const JsonValue document = json_of(reply);
  REQUIRE(document.find("error") != nullptr);
  return document["error"].as_string();
}

/// A repository of three files with an origin remote (acme/widgets), indexed.
void write_project(const FixtureRepo& repo) {
  repo.write("src/retry.py",
             "def retry_with_backoff(operation, attempts):\n"
             "    \"\"\"Retries a failing network operation with exponential backoff.\"\"\"\n"
             "    for attempt in range(attempts):\n"
             "        try:\n"
             "            return operation()\n"
             "        except IOError:\n"
             "            sleep(2 ** attempt)\n");
  repo.write("src/parse.py",
             "def parse_config(text):\n"
             "    \"\"\"Parses the configuration file into a dictionary of settings.\"\"\"\n"
             "    return dict(line.split('=') for line in text.splitlines())\n");
  repo.write("README.md", "# widgets\n\nA library of widgets.\n");
  repo.commit_all("widgets");
  repo.git({"remote", "add", "origin", "https://example.com/acme/widgets.git"});
  const RunResult indexed = repo.kasava({"index", "-q"});
  REQUIRE(indexed.exit_code == 0);
}

/// `kasava serve` running in a repository on a free port (it prints the address).
class Server {
public:
  Server(const FixtureRepo& repo, std::vector<std::string> args, const std::string& name = "serve")
      : m_scratch("serve"), m_process(with_listen(std::move(args)), repo.root(), m_scratch / name) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (std::chrono::steady_clock::now() < deadline) {
      const std::string out = m_process.out();
      const std::size_t at = out.find("http://127.0.0.1:");
      if (at != std::string::npos && out.find('\n', at) != std::string::npos) {
        m_port = std::atoi(out.c_str() + at + 17);
        return;
      }
      if (!m_process.running()) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    FAIL("kasava serve did not print its address\nstdout: " << m_process.out() << "\nstderr: " << m_process.err());
  }
  int port() const { return m_port; }
  BackgroundKasava& process() { return m_process; }

private:
  static std::vector<std::string> with_listen(std::vector<std::string> args) {
    args.insert(args.begin(), {"serve", "--listen", "127.0.0.1:0"});
    return args;
  }
  TempDir m_scratch;
  BackgroundKasava m_process;
  int m_port = 0;
};

}  // namespace

TEST_CASE("serve: every endpoint, /api/search is the ask --json document, one log line per request") {
  FixtureRepo repo;
  write_project(repo);
  Server server(repo, {});
  const int port = server.port();
  CHECK(server.process().out().find("acme/widgets") != std::string::npos);

  const HttpReply health = get(port, "/healthz");
  CHECK(health.status == 200);
  CHECK(health.header("Content-Type") == "application/json");

  const HttpReply search = get(port, "/api/search?q=retry+backoff&limit=3");
  REQUIRE(search.status == 200);
  const RunResult ask = repo.kasava({"ask", "retry backoff", "--limit", "3", "--json", "--no-refresh"});
  REQUIRE(ask.exit_code == 0);
  CHECK(search.body == ask.out);
  const JsonValue document = json_of(search);
  check_ask_schema(document, "retry backoff", &repo);
  CHECK(result_paths(document).front() == "src/retry.py");

  // Filters and modes are ask's.
  const HttpReply lexical = get(port, "/api/search?q=parse_config&mode=lexical&lang=python&path=src/**");
  const RunResult ask_lexical = repo.kasava(
      {"ask", "parse_config", "--mode", "lexical", "--lang", "python", "--path", "src/**", "--json", "--no-refresh"});
  CHECK(lexical.body == ask_lexical.out);
  CHECK(json_of(get(port, "/api/search?q=retry&repo=acme/*"))["results"].size() > 0);
  CHECK(json_of(get(port, "/api/search?q=retry&repo=other/*"))["results"].size() == 0);

  const HttpReply file = get(port, "/api/file?path=src/retry.py&start=2&end=3");
  REQUIRE(file.status == 200);
  const JsonValue lines = json_of(file);
  CHECK(lines["start_line"].as_integer() == 2);
  CHECK(lines["end_line"].as_integer() == 3);
  CHECK(lines["total_lines"].as_integer() == 7);
  CHECK(lines["text"].as_string() ==
        "    \"\"\"Retries a failing network operation with exponential backoff.\"\"\"\n"
        "    for attempt in range(attempts):\n");

  const HttpReply status = get(port, "/api/status");
  REQUIRE(status.status == 200);
  const JsonValue status_document = json_of(status);
  const JsonValue cli_status = parse_json_output(repo.kasava({"status", "--json"}).out);
  for (const char* key : {"index", "root", "commit", "files", "chunks", "model", "complete"}) {
    CHECK(status_document[key].dump() == cli_status[key].dump());
  }
  CHECK(status_document["files"].as_integer() == 3);

  server.process().signal(SIGINT);
  CHECK(server.process().wait() == 130);
  const std::string log = server.process().err();
  CHECK(log.find("GET /healthz 200 ") != std::string::npos);
  CHECK(log.find("GET /api/search 200 ") != std::string::npos);
  CHECK(log.find("GET /api/file 200 ") != std::string::npos);
  CHECK(log.find("GET /api/status 200 ") != std::string::npos);
  CHECK(log.find("retry") == std::string::npos);  // no query text without --log-queries
}

TEST_CASE("serve: errors are JSON with meaningful statuses (400, 404, 405, 413, 414, 429, 503)") {
  FixtureRepo repo;
  write_project(repo);
  Server server(repo, {"--log-queries"});
  const int port = server.port();

  HttpReply reply = get(port, "/api/search");
  CHECK(reply.status == 400);
  CHECK(error_of(reply).find("'q'") != std::string::npos);
  CHECK(get(port, "/api/search?q=%20%20").status == 400);
  reply = get(port, "/api/search?q=retry&limit=0");
  CHECK(reply.status == 400);
  CHECK(error_of(reply).find("'limit'") != std::string::npos);
  CHECK(get(port, "/api/search?q=retry&limit=101").status == 400);
  CHECK(get(port, "/api/search?q=retry&limit=ten").status == 400);
  CHECK(error_of(get(port, "/api/search?q=retry&mode=fuzzy")).find("'mode'") != std::string::npos);
  CHECK(get(port, "/api/search?q=" + std::string(1500, 'a')).status == 400);
  CHECK(get(port, "/api/file").status == 400);
  CHECK(get(port, "/api/file?path=src/retry.py&start=99").status == 400);
  CHECK(get(port, "/api/file?path=src/retry.py&end=-1").status == 400);

  reply = get(port, "/api/nothing");
  CHECK(reply.status == 404);
  CHECK(error_of(reply).find("/api/nothing") != std::string::npos);
  CHECK(get(port, "/api/file?path=../../etc/passwd").status == 404);
  CHECK(get(port, "/api/file?path=.git/config").status == 404);
  CHECK(get(port, "/api/file?path=/etc/passwd").status == 404);
  CHECK(get(port, "/api/file?path=src/missing.py").status == 404);
  repo.write(".env", "API_KEY=sk-1234567890abcdef\n");  // never indexed, never served
  CHECK(get(port, "/api/file?path=.env").status == 404);

  reply = http(port, "POST", "/api/search?q=retry");
  CHECK(reply.status == 405);
  CHECK(reply.header("Allow") == "GET");
  CHECK(http(port, "DELETE", "/api/status").status == 405);

  // Query parameters together longer than the limit: 414.
  reply = get(port, "/api/search?q=retry&path=" + std::string(5000, 'p'));
  CHECK(reply.status == 414);
  // A request head larger than the server's memory for it: refused by the library (431).
  reply = get(port, "/healthz", {{"X-Padding", std::string(40000, 'x')}});
  CHECK(reply.status == 431);

  // A 10 MB body: 413, answered from its Content-Length before the body is read.
  {
    const int fd = connect_to(port);
    REQUIRE(fd >= 0);
    const std::string head = "POST /api/search?q=retry HTTP/1.1\r\nHost: 127.0.0.1:" + std::to_string(port) +
                             "\r\nContent-Length: 10485760\r\nConnection: close\r\n\r\n";
    REQUIRE(send_all(fd, head));
    send_all(fd, std::string(10 * 1024 * 1024, 'x'));  // the server may close before all is sent
    const HttpReply large = read_reply(fd);
    ::close(fd);
    CHECK(large.status == 413);
    CHECK(error_of(large).find("too large") != std::string::npos);
  }
  CHECK(get(port, "/healthz").status == 200);  // still serving

  // The index is gone: 503 for what needs it, /healthz still 200.
  repo.write(".kasava/index.db", "this is not an index any more, it is a text file of some length\n");
  reply = get(port, "/api/search?q=retry");
  CHECK(reply.status == 503);
  CHECK(error_of(reply).find("index") != std::string::npos);
  CHECK(get(port, "/api/status").status == 503);
  CHECK(get(port, "/healthz").status == 200);

  server.process().signal(SIGTERM);
  CHECK(server.process().wait() == 143);
  // --log-queries: the query text is in the log.
  CHECK(server.process().err().find("GET /api/search?q=retry&limit=0 400 ") != std::string::npos);
}

TEST_CASE("serve: a per-client rate limit answers 429 with Retry-After") {
  FixtureRepo repo;
  write_project(repo);
  Server server(repo, {"--rate-limit", "0.01"});  // one request, then one per 100 s
  const int port = server.port();
  CHECK(get(port, "/api/status").status == 200);
  const HttpReply limited = get(port, "/api/search?q=retry");
  CHECK(limited.status == 429);
  CHECK(std::atoi(limited.header("Retry-After").c_str()) >= 1);
  CHECK(error_of(limited).find("too many requests") != std::string::npos);
  CHECK(get(port, "/healthz").status == 200);  // not counted
}

TEST_CASE("serve: tokens — 401 without or with a wrong one, limited by repository globs, never logged") {
  FixtureRepo repo;
  write_project(repo);
  TempDir secrets("tokens");
  const std::string all = "all-repositories-token-0123456789";
  const std::string acme = "acme-only-token-abcdefghijklmnop";
  const std::string other = "other-only-token-ABCDEFGHIJKLMNOP";
  {
    std::ofstream file(secrets / "tokens");
    file << "# team tokens\n" << all << "\n" << acme << " acme/*\n\n" << other << " other/* elsewhere/web\n";
  }
  Server server(repo, {"--token-file", secrets / "tokens"});
  const int port = server.port();
  auto bearer = [](const std::string& token) { return Headers{{"Authorization", "Bearer " + token}}; };

  HttpReply reply = get(port, "/api/search?q=retry");
  CHECK(reply.status == 401);
  CHECK(reply.header("WWW-Authenticate") == "Bearer");
  CHECK(get(port, "/api/status").status == 401);
  CHECK(get(port, "/api/file?path=src/retry.py").status == 401);
  CHECK(get(port, "/api/search?q=retry", bearer(all + "x")).status == 401);
  CHECK(get(port, "/api/search?q=retry", {{"Authorization", "Basic " + all}}).status == 401);
  CHECK(get(port, "/healthz").status == 200);  // no token needed

  CHECK(json_of(get(port, "/api/search?q=retry", bearer(all)))["results"].size() > 0);
  CHECK(json_of(get(port, "/api/search?q=retry", bearer(acme)))["results"].size() > 0);
  CHECK(get(port, "/api/status", bearer(acme)).status == 200);
  CHECK(get(port, "/api/file?path=src/retry.py", bearer(acme)).status == 200);

  // A token for other repositories sees nothing of this one.
  reply = get(port, "/api/search?q=retry", bearer(other));
  CHECK(reply.status == 200);
  CHECK(json_of(reply)["results"].size() == 0);
  CHECK(get(port, "/api/file?path=src/retry.py", bearer(other)).status == 404);
  CHECK(get(port, "/api/status", bearer(other)).status == 403);

  server.process().signal(SIGTERM);
  CHECK(server.process().wait() == 143);
  const std::string log = server.process().err();
  CHECK(log.find("GET /api/search 401 ") != std::string::npos);
  for (const auto& token : {all, acme, other}) CHECK(log.find(token) == std::string::npos);
  CHECK(server.process().out().find(all) == std::string::npos);
}

TEST_CASE("serve: Host and Origin that are not this server's are refused with 403") {
  FixtureRepo repo;
  write_project(repo);
  Server server(repo, {});
  const int port = server.port();
  const std::string p = std::to_string(port);

  CHECK(http(port, "GET", "/api/status", {{"Host", "localhost:" + p}}, false).status == 200);
  CHECK(http(port, "GET", "/api/status", {{"Host", "127.0.0.1"}}, false).status == 200);
  // DNS rebinding: a name of the attacker's that resolves to 127.0.0.1.
  HttpReply reply = http(port, "GET", "/api/status", {{"Host", "attacker.example:" + p}}, false);
  CHECK(reply.status == 403);
  CHECK(error_of(reply).find("attacker.example") != std::string::npos);
  CHECK(http(port, "GET", "/api/search?q=retry", {{"Host", "127.0.0.1:1"}}, false).status == 403);
  CHECK(http(port, "GET", "/api/status", {}, false).status == 403);  // no Host at all

  // A page elsewhere: the browser sends its Origin.
  CHECK(get(port, "/api/search?q=retry", {{"Origin", "http://attacker.example"}}).status == 403);
  CHECK(get(port, "/api/search?q=retry", {{"Origin", "null"}}).status == 403);
  CHECK(get(port, "/api/search?q=retry", {{"Origin", "http://127.0.0.1:" + p}}).status == 200);
}

TEST_CASE("serve: a non-loopback address needs a token file or --insecure-no-auth (with a warning), and --allow-host") {
  FixtureRepo repo;
  write_project(repo);
  const RunResult refused = repo.kasava({"serve", "--listen", "0.0.0.0:0"});
  CHECK(refused.exit_code == 2);
  CHECK(refused.err.find("--token-file") != std::string::npos);
  CHECK(repo.kasava({"serve", "--listen", "nonsense"}).exit_code == 2);
  // One name per --allow-host, as for every repeatable option: a second word is refused.
  const RunResult two_names = repo.kasava({"serve", "--allow-host", "a.internal", "b.internal"});
  CHECK(two_names.exit_code == 2);
  CHECK(two_names.err.find("not expected: b.internal") != std::string::npos);

  TempDir scratch("serve-open");
  BackgroundKasava open({"serve", "--listen", "0.0.0.0:0", "--insecure-no-auth", "--allow-host", "search.internal"},
                        repo.root(), scratch / "open");
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (open.out().find("/\n") == std::string::npos && open.running() &&
         std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  CHECK(open.err().find("warning: --insecure-no-auth") != std::string::npos);
  const std::size_t at = open.out().find("http://0.0.0.0:");
  REQUIRE(at != std::string::npos);
  const int port = std::atoi(open.out().c_str() + at + 15);
  // --allow-host: the names the server is reached by; a rebound name is refused.
  CHECK(http(port, "GET", "/api/status", {{"Host", "search.internal:" + std::to_string(port)}}, false).status == 200);
  CHECK(http(port, "GET", "/api/status", {{"Host", "rebound.example:" + std::to_string(port)}}, false).status == 403);
  open.signal(SIGTERM);
  CHECK(open.wait() == 143);
}

TEST_CASE("serve: a client sending its headers one byte a second does not hold up the others") {
  FixtureRepo repo;
  write_project(repo);
  Server server(repo, {});
  const int port = server.port();
  const int slow = connect_to(port);
  REQUIRE(slow >= 0);
  const std::string head = request_text(port, "GET", "/api/status");
  std::atomic<std::size_t> sent{0};
  std::atomic<bool> done{false};
  std::thread trickle([&] {
    for (std::size_t i = 0; i + 4 < head.size() && !done; ++i) {
      if (!send_all(slow, head.substr(i, 1))) break;
      ++sent;
      std::this_thread::sleep_for(std::chrono::seconds(1));
    }
  });
  while (sent < 2) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  // The slow request is half-sent (and is never finished: the trickle stops short of its end),
  // so these are answered while it is still coming, not after it.
  for (int i = 0; i < 10; ++i) CHECK(get(port, "/api/search?q=retry").status == 200);
  CHECK(sent < head.size() - 4);  // still trickling
  done = true;
  trickle.join();
  ::close(slow);
}

TEST_CASE("serve: 200 connections at once are all answered") {
  FixtureRepo repo;
  write_project(repo);
  Server server(repo, {"--rate-limit", "0"});
  const int port = server.port();
  std::vector<int> sockets;
  for (int i = 0; i < 200; ++i) {
    const int fd = connect_to(port);
    REQUIRE(fd >= 0);
    sockets.push_back(fd);
  }
  // Every connection is open before any request is sent; then all requests go out.
  for (std::size_t i = 0; i < sockets.size(); ++i) {
    REQUIRE(send_all(sockets[i], request_text(port, "GET", i % 2 == 0 ? "/api/search?q=retry" : "/api/status")));
  }
  int answered = 0;
  for (const int fd : sockets) {
    answered += read_reply(fd).status == 200 ? 1 : 0;
    ::close(fd);
  }
  CHECK(answered == 200);
}

TEST_CASE("serve: an index rebuilt under the server is answered from without a restart") {
  FixtureRepo repo;
  write_project(repo);
  Server server(repo, {"--rate-limit", "0"});
  const int port = server.port();
  CHECK(json_of(get(port, "/api/search?q=zanzibar_gateway&mode=lexical"))["results"].size() == 0);
  // The server keeps the codes and vectors in memory: a semantic search reads them there.
  const std::string semantic = "/api/search?q=zanzibar%20gateway%20routes%20a%20request&mode=semantic&limit=50";
  const auto semantic_paths = [&] {
    std::vector<std::string> paths;
    const JsonValue document = json_of(get(port, semantic));
    for (const auto& result : document["results"].as_array()) {
      paths.push_back(result["path"].as_string());
    }
    return paths;
  };
  CHECK_THAT(semantic_paths(), !Catch::VectorContains(std::string("src/gateway.py")));
  repo.write("src/gateway.py", "def zanzibar_gateway(request):\n    \"\"\"Routes a request.\"\"\"\n    return request\n");
  repo.commit_all("gateway");
  REQUIRE(repo.kasava({"index", "-q"}).exit_code == 0);  // written into the file in place
  CHECK_THAT(semantic_paths(), Catch::VectorContains(std::string("src/gateway.py")));
  // --rebuild writes a new index beside the old one and copies it into the same file.
  REQUIRE(repo.kasava({"index", "--rebuild", "-q"}).exit_code == 0);
  const JsonValue after = json_of(get(port, "/api/search?q=zanzibar_gateway&mode=lexical"));
  REQUIRE(after["results"].size() > 0);
  CHECK(after["results"][0]["path"].as_string() == "src/gateway.py");
  CHECK_THAT(semantic_paths(), Catch::VectorContains(std::string("src/gateway.py")));
  CHECK(json_of(get(port, "/api/status"))["files"].as_integer() == 4);
}

TEST_CASE("serve: SIGTERM stops accepting at once and finishes the request in flight, exit 143") {
  FixtureRepo repo;
  write_project(repo);
  Server server(repo, {});
  const int port = server.port();
  // A request whose head is read (the server's "100 Continue" says so) and whose 10-byte
  // body is half-sent: in flight.
  const int fd = connect_to(port);
  REQUIRE(fd >= 0);
  const std::string head = "GET /api/search?q=retry HTTP/1.1\r\nHost: 127.0.0.1:" + std::to_string(port) +
                           "\r\nContent-Length: 10\r\nExpect: 100-continue\r\nConnection: close\r\n\r\n";
  REQUIRE(send_all(fd, head));
  std::string interim;
  char byte = 0;
  while (interim.find("\r\n\r\n") == std::string::npos && ::recv(fd, &byte, 1, 0) == 1) interim += byte;
  REQUIRE(interim.rfind("HTTP/1.1 100", 0) == 0);
  REQUIRE(send_all(fd, "01234"));
  server.process().signal(SIGTERM);
  // New connections are refused at once (the listening socket is closed).
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  int refused = -2;
  while (std::chrono::steady_clock::now() < deadline) {
    const int probe = connect_to(port);
    if (probe < 0) {
      refused = probe;
      break;
    }
    ::close(probe);
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  CHECK(refused == -1);
  CHECK(server.process().running());  // draining: the request in flight is not finished
  REQUIRE(send_all(fd, "56789"));
  const HttpReply reply = read_reply(fd);
  ::close(fd);
  CHECK(reply.status == 200);
  CHECK(json_of(reply)["results"].size() > 0);
  CHECK(server.process().wait() == 143);
  CHECK(server.process().seconds() < 10.0);
}

TEST_CASE("serve --store: a shared store's repositories, each token seeing its own, over the API",
          "[store][serve]") {
  kasava::test_support::PostgresServer& postgres = kasava::test_support::PostgresServer::shared();
  const std::string uri = postgres.uri(postgres.create_database("serve_store"));
  FixtureRepo widgets;
  write_project(widgets);  // acme/widgets
  publish_as(widgets, uri, "acme/widgets");
  FixtureRepo secret;
  secret.write("vault.py",
               "def retry_vault_unseal(keys):\n"
               "    \"\"\"Retries unsealing the vault with exponential backoff.\"\"\"\n"
               "    return keys\n");
  secret.commit_all("vault");
  publish_as(secret, uri, "other/vault");

  TempDir secrets("store-tokens");
  const std::string all = "all-repositories-token-0123456789";
  const std::string acme = "acme-only-token-abcdefghijklmnop";
  {
    std::ofstream file(secrets / "tokens");
    file << all << "\n" << acme << " acme/*\n";
  }
  FixtureRepo nowhere{GitInit::no};  // no repository, no index: everything from the store
  Server server(nowhere, {"--store", uri, "--token-file", secrets / "tokens"});
  const int port = server.port();
  CHECK(server.process().out().find("serving the store at 127.0.0.1:" + std::to_string(postgres.port())) !=
        std::string::npos);
  auto bearer = [](const std::string& token) { return Headers{{"Authorization", "Bearer " + token}}; };

  // Search: every repository for the token that sees all, only acme/* for the other.
  JsonValue found = json_of(get(port, "/api/search?q=retry+backoff&limit=10", bearer(all)));
  std::set<std::string> repositories;
  for (const auto& hit : found["results"].as_array()) repositories.insert(hit["repository"].as_string());
  CHECK(repositories == std::set<std::string>{"acme/widgets", "other/vault"});
  found = json_of(get(port, "/api/search?q=retry+backoff&limit=10", bearer(acme)));
  REQUIRE(found["results"].size() > 0);
  for (const auto& hit : found["results"].as_array()) CHECK(hit["repository"] == JsonValue("acme/widgets"));
  found = json_of(get(port, "/api/search?q=retry+backoff&repo=other/*", bearer(all)));
  REQUIRE(found["results"].size() > 0);
  CHECK(found["results"][std::size_t{0}]["path"] == JsonValue("vault.py"));
  CHECK(json_of(get(port, "/api/search?q=vault&repo=other/*", bearer(acme)))["results"].size() == 0);
  CHECK(get(port, "/api/search?q=retry&ref=nope", bearer(all)).status == 404);

  // Files: from the store's texts, of the one repository repo= names (or the only one seen).
  HttpReply reply = get(port, "/api/file?path=src/retry.py&start=2&end=2", bearer(acme));
  CHECK(reply.status == 200);
  JsonValue file = json_of(reply);
  CHECK(file["repository"] == JsonValue("acme/widgets"));
  CHECK(file["ref"] == JsonValue("main"));
  CHECK_THAT(file["text"].as_string(), Catch::Contains("exponential backoff"));
  reply = get(port, "/api/file?path=vault.py", bearer(all));
  CHECK(reply.status == 400);
  CHECK_THAT(error_of(reply), Catch::Contains("parameter 'repo' must name one repository: 2 match"));
  CHECK(get(port, "/api/file?path=vault.py&repo=other/vault", bearer(all)).status == 200);
  reply = get(port, "/api/file?path=vault.py&repo=other/vault", bearer(acme));
  CHECK(reply.status == 404);
  CHECK(reply.body.find("retry_vault_unseal") == std::string::npos);
  CHECK(get(port, "/api/file?path=missing.py&repo=acme/widgets", bearer(all)).status == 404);

  // Status: the repositories the token sees.
  JsonValue status = json_of(get(port, "/api/status", bearer(acme)));
  CHECK(status["repositories"] == JsonValue(1));
  REQUIRE(status["refs"].size() == 1);
  CHECK(status["refs"][std::size_t{0}]["repository"] == JsonValue("acme/widgets"));
  CHECK(json_of(get(port, "/api/status", bearer(all)))["repositories"] == JsonValue(2));

  server.process().signal(SIGTERM);
  CHECK(server.process().wait() == 143);
  for (const std::string& text : {server.process().out(), server.process().err()}) {
    CHECK(text.find(postgres.password()) == std::string::npos);
    CHECK(text.find(all) == std::string::npos);
  }
}

TEST_CASE("serve --store: a store that cannot be reached is one line and exit 2 at start", "[store][serve]") {
  FixtureRepo nowhere{GitInit::no};
  const RunResult result = nowhere.kasava(
      {"serve", "--listen", "127.0.0.1:0", "--store", "postgresql://kasava:Secret-Pw-2@127.0.0.1:1/none?connect_timeout=2"});
  CHECK(result.exit_code == 2);
  CHECK(lines_of(result.err).size() == 1);
  CHECK(result.err.find("127.0.0.1:1") != std::string::npos);
  CHECK(result.err.find("Secret-Pw-2") == std::string::npos);
}

TEST_CASE("serve --store: store connections are kept between requests, and one the database ended is replaced",
          "[store][serve]") {
  kasava::test_support::PostgresServer& postgres = kasava::test_support::PostgresServer::shared();
  const std::string database = postgres.create_database("serve_pool");
  const std::string uri = postgres.uri(database);
  FixtureRepo widgets;
  write_project(widgets);
  publish_as(widgets, uri, "acme/widgets");
  FixtureRepo nowhere{GitInit::no};
  Server server(nowhere, {"--store", uri, "--rate-limit", "1000"});
  const int port = server.port();
  // The server's backends: every session on the database but the psql asking.
  const auto backends = [&] {
    return postgres.psql(database, "SELECT coalesce(string_agg(pid::text, ',' ORDER BY pid), '') FROM pg_stat_activity "
                                   "WHERE datname = current_database() AND pid <> pg_backend_pid() AND backend_type = 'client backend'");
  };
  for (int i = 0; i < 5; ++i) REQUIRE(get(port, "/api/search?q=retry+backoff").status == 200);
  const std::string kept = backends();
  INFO("backends after 5 searches: " << kept);
  REQUIRE(!kept.empty());
  for (int i = 0; i < 10; ++i) {
    REQUIRE(get(port, "/api/search?q=retry+backoff").status == 200);
    REQUIRE(get(port, "/api/status").status == 200);
  }
  CHECK(backends() == kept);  // the same sessions: no connection was made for the 20 requests

  // The database ends them, as a restart or an idle timeout would: the next requests succeed.
  postgres.psql(database, "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() "
                          "AND pid <> pg_backend_pid()");
  const HttpReply after = get(port, "/api/search?q=retry+backoff");
  CHECK(after.status == 200);
  CHECK(json_of(after)["results"].size() > 0);
  CHECK(get(port, "/api/file?path=src/retry.py&start=1&end=2").status == 200);
  CHECK(backends() != kept);

  server.process().signal(SIGTERM);
  CHECK(server.process().wait() == 143);
}
