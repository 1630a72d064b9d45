// End-to-end: `kasava mcp` driven through a real session over pipes, as an MCP client does it —
// one message at a time, waiting for each reply: initialize → tools/list → tools/call search →
// read_file_range → path escapes refused → malformed JSON answered with -32700 while the
// server keeps going → EOF ends the server with exit 0 and nothing but replies on stdout.
#include <catch2/catch.hpp>

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "tests/e2e/background.hpp"
#include "tests/e2e/harness.hpp"
#include "tests/e2e/store_runs.hpp"
#include "tests/support/postgres_server.hpp"

using namespace kasava::e2e;
using kasava::util::JsonValue;

namespace {

/// A running `kasava mcp` with its stdin and stdout on pipes and stderr in a file; killed
/// if the test leaves it running.
class McpSession {
public:
  /// `kasava [global_args…] mcp [command_args…]`, started in cwd.
  McpSession(const std::string& cwd, const TempDir& scratch,
             std::vector<std::string> global_args = {}, std::vector<std::string> command_args = {})
      : m_stderr_path(scratch / "mcp.err") {
    int to_child[2];
    int from_child[2];
    REQUIRE(::pipe2(to_child, O_CLOEXEC) == 0);
    REQUIRE(::pipe2(from_child, O_CLOEXEC) == 0);
    const int err = ::open(m_stderr_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    REQUIRE(err >= 0);
    // The environment of a clean client: no KASAVA_* or colour settings, a private HOME.
    std::vector<std::string> env_strings = {"HOME=" + scratch.path(), "XDG_CACHE_HOME=" + scratch / "cache",
                                            "LC_ALL=C", "GIT_CONFIG_NOSYSTEM=1",
                                            "GIT_CONFIG_GLOBAL=/dev/null"};
    if (const char* path = std::getenv("PATH")) env_strings.push_back(std::string("PATH=") + path);
    std::vector<char*> env;
    for (auto& entry : env_strings) env.push_back(entry.data());
    env.push_back(nullptr);
    std::string binary = KASAVA_BINARY;
    std::string command = "mcp";
    std::vector<char*> argv = {binary.data()};
    for (auto& arg : global_args) argv.push_back(arg.data());
    argv.push_back(command.data());
    for (auto& arg : command_args) argv.push_back(arg.data());
    argv.push_back(nullptr);

    m_pid = ::fork();
    REQUIRE(m_pid >= 0);
    if (m_pid == 0) {
      ::dup2(to_child[0], STDIN_FILENO);
      ::dup2(from_child[1], STDOUT_FILENO);
      ::dup2(err, STDERR_FILENO);
      if (::chdir(cwd.c_str()) != 0) ::_exit(127);
      ::execve(argv[0], argv.data(), env.data());
      ::_exit(127);
    }
    ::close(to_child[0]);
    ::close(from_child[1]);
    ::close(err);
    m_in = to_child[1];
    m_out = from_child[0];
  }
  ~McpSession() {
    close_stdin();
    if (m_out >= 0) ::close(m_out);
    if (m_pid > 0) {
      ::kill(m_pid, SIGKILL);
      ::waitpid(m_pid, nullptr, 0);
    }
  }
  McpSession(const McpSession&) = delete;
  McpSession& operator=(const McpSession&) = delete;

  /// Writes one line (the message and '\n').
  void send(const std::string& message) {
    const std::string line = message + "\n";
    REQUIRE(::write(m_in, line.data(), line.size()) == static_cast<ssize_t>(line.size()));
  }

  /// The next line on stdout, parsed; fails the test after a 30 s wait or on bad JSON.
  JsonValue receive() {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    std::size_t newline;
    while ((newline = m_pending.find('\n')) == std::string::npos) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          deadline - std::chrono::steady_clock::now());
      INFO("waiting for a reply; stderr: " << stderr_text());
      REQUIRE(left.count() > 0);
      pollfd poll_fd{m_out, POLLIN, 0};
      if (::poll(&poll_fd, 1, static_cast<int>(left.count())) <= 0) continue;
      char buffer[65536];
      const ssize_t count = ::read(m_out, buffer, sizeof buffer);
      REQUIRE(count > 0);  // EOF before a reply: the server died
      m_pending.append(buffer, static_cast<std::size_t>(count));
    }
    const std::string line = m_pending.substr(0, newline);
    m_pending.erase(0, newline + 1);
    auto parsed = kasava::util::parse_json(line);
    INFO("reply line: " << line);
    REQUIRE(parsed.ok());
    CHECK((*parsed)["jsonrpc"] == JsonValue("2.0"));
    return *parsed;
  }

  /// A request with this id, method and params (JSON text); returns the reply.
  JsonValue request(int id, const std::string& method, const std::string& params = "{}") {
    send(R"({"jsonrpc":"2.0","id":)" + std::to_string(id) + R"(,"method":")" + method +
         R"(","params":)" + params + "}");
    JsonValue reply = receive();
    CHECK(reply["id"] == JsonValue(id));
    return reply;
  }

  /// tools/call of `tool` with arguments (JSON text); returns the result object.
  JsonValue call(int id, const std::string& tool, const std::string& arguments) {
    JsonValue reply =
        request(id, "tools/call", R"({"name":")" + tool + R"(","arguments":)" + arguments + "}");
    INFO(reply.dump());
    REQUIRE(reply["result"].is_object());
    return reply["result"];
  }

  /// Sends a signal to the server.
  void signal(int number) { ::kill(m_pid, number); }

  void close_stdin() {
    if (m_in >= 0) ::close(m_in);
    m_in = -1;
  }

  /// Waits (up to 30 s) for the server to end; returns its exit code (-1 if killed).
  int wait_exit() {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    int status = 0;
    while (::waitpid(m_pid, &status, WNOHANG) == 0) {
      REQUIRE(std::chrono::steady_clock::now() < deadline);
      ::usleep(10000);
    }
    m_pid = -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }

  /// What is left on stdout after the server ended.
  std::string rest_of_stdout() {
    std::string text = m_pending;
    char buffer[4096];
    ssize_t count;
    while ((count = ::read(m_out, buffer, sizeof buffer)) > 0) text.append(buffer, static_cast<std::size_t>(count));
    return text;
  }

  std::string stderr_text() const {
    std::ifstream in(m_stderr_path);
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
  }

private:
  std::string m_stderr_path;
  pid_t m_pid = -1;
  int m_in = -1;
  int m_out = -1;
  std::string m_pending;
};

std::string text_of(const JsonValue& result) {
  const std::string* text = result["content"][std::size_t{0}]["text"].get_string();
  return text != nullptr ? *text : "";
}

}  // namespace

TEST_CASE("mcp: a whole session over pipes — search, read, refusals, bad JSON, EOF") {
  FixtureRepo repo;
  write_sample_project(repo);
  repo.commit_all("sample");
  TempDir outside("outside");
  {
    std::ofstream secret(outside / "secret.txt");
    secret << "password=hunter2\n";
  }
  repo.symlink(outside / "secret.txt", "leak.txt");
  TempDir scratch("mcp");
  McpSession session(repo.root(), scratch);

  // initialize, then the initialized notification (no reply: the next reply is for id 2).
  const JsonValue init = session.request(
      1, "initialize",
      R"({"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"e2e","version":"1"}})");
  CHECK(init["result"]["protocolVersion"] == JsonValue("2025-06-18"));
  CHECK(init["result"]["serverInfo"]["name"] == JsonValue("kasava"));
  CHECK(init["result"]["capabilities"]["tools"].is_object());
  session.send(R"({"jsonrpc":"2.0","method":"notifications/initialized"})");

  const JsonValue list = session.request(2, "tools/list");
  std::vector<std::string> names;
  for (const auto& tool : list["result"]["tools"].as_array()) names.push_back(tool["name"].as_string());
  CHECK(names == std::vector<std::string>{"search", "read_file_range", "index_status"});

  // search: the first call builds the index (none exists yet) and finds the definition.
  const SampleDefinition& go = sample_definitions()[1];
  const JsonValue found = session.call(3, "search", std::string(R"({"query":")") + go.query + R"(","limit":3})");
  CHECK(found["isError"] == JsonValue(false));
  const JsonValue& first = found["structuredContent"]["results"][std::size_t{0}];
  CHECK(first["path"] == JsonValue(go.path));
  CHECK(first["symbol"] == JsonValue(go.symbol));
  CHECK_THAT(first["code"].as_string(), Catch::Contains(go.code_line));
  CHECK(first["start_line"].get_integer().value_or(0) >= 1);
  CHECK(first["score"].is_number());
  CHECK_THAT(text_of(found), Catch::Contains(go.path) && Catch::Contains(go.code_line));
  CHECK(found["structuredContent"]["results"].size() <= 3);

  // Filters and a tool error for a bad argument (the model sees it and can retry).
  const JsonValue filtered =
      session.call(4, "search", R"({"query":"checksum","path":"native/**","language":"c"})");
  for (const auto& result : filtered["structuredContent"]["results"].as_array()) {
    CHECK(result["path"] == JsonValue("native/checksum.c"));
  }
  const JsonValue bad_limit = session.call(5, "search", R"({"query":"x","limit":0})");
  CHECK(bad_limit["isError"] == JsonValue(true));
  CHECK_THAT(text_of(bad_limit), Catch::Contains("limit"));

  // read_file_range: the result's lines.
  const std::string range_arguments = std::string(R"({"path":")") + go.path + R"(","start_line":)" +
                                      std::to_string(*first["start_line"].get_integer()) +
                                      R"(,"end_line":)" + std::to_string(*first["end_line"].get_integer()) + "}";
  const JsonValue range = session.call(6, "read_file_range", range_arguments);
  CHECK(range["isError"] == JsonValue(false));
  CHECK_THAT(range["structuredContent"]["text"].as_string(), Catch::Contains(go.code_line));
  CHECK(range["structuredContent"]["start_line"] == first["start_line"]);

  // Escapes are refused as tool errors; the secret never appears.
  int id = 7;
  for (const std::string path : {"../outside.txt", "src/../../x", "/etc/passwd", "leak.txt", ".git/config"}) {
    INFO(path);
    const JsonValue refused = session.call(id++, "read_file_range", R"({"path":")" + path + R"("})");
    CHECK(refused["isError"] == JsonValue(true));
    CHECK(text_of(refused).find("hunter2") == std::string::npos);
    CHECK(text_of(refused).find("root:") == std::string::npos);
  }

  // Malformed JSON: -32700 with id null, and the server goes on answering.
  session.send(R"({"jsonrpc":"2.0","id":50,"method":"tools/list")");
  const JsonValue broken = session.receive();
  CHECK(broken["error"]["code"] == JsonValue(-32700));
  CHECK(broken["id"].is_null());
  CHECK(session.request(51, "no/such/method")["error"]["code"] == JsonValue(-32601));
  CHECK(session.request(52, "ping")["result"].is_object());

  // The index is refreshed before a search: an uncommitted new file is found.
  repo.write("src/fresh.py", "def zanzibar_quokka_handler():\n    \"\"\"Handle quokkas from Zanzibar.\"\"\"\n    return 1\n");
  const JsonValue fresh = session.call(53, "search", R"({"query":"zanzibar quokka handler"})");
  CHECK(fresh["structuredContent"]["results"][std::size_t{0}]["path"] == JsonValue("src/fresh.py"));

  const JsonValue status = session.call(54, "index_status", "{}");
  CHECK(status["isError"] == JsonValue(false));
  CHECK(status["structuredContent"]["files"].get_integer().value_or(0) >= 7);

  // EOF ends the server cleanly; stdout held replies only.
  session.close_stdin();
  CHECK(session.wait_exit() == 0);
  CHECK(session.rest_of_stdout().empty());
}

TEST_CASE("mcp: -C PATH serves the repository at PATH, started anywhere") {
  FixtureRepo repo;
  write_sample_project(repo);
  repo.commit_all("sample");
  TempDir elsewhere("elsewhere");
  TempDir scratch("mcp");
  McpSession session(elsewhere.path(), scratch, {"-C", repo.root()});
  session.request(1, "initialize",
                  R"({"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"e2e","version":"1"}})");
  session.send(R"({"jsonrpc":"2.0","method":"notifications/initialized"})");

  const JsonValue found = session.call(2, "search", R"({"query":"parseConfig","limit":3})");
  INFO(found.dump());
  CHECK(found["isError"] == JsonValue(false));
  CHECK(found["structuredContent"]["results"][std::size_t{0}]["symbol"] == JsonValue("parseConfig"));
  const JsonValue read =
      session.call(3, "read_file_range", R"({"path":"internal/config/config.go","end_line":2})");
  INFO(read.dump());
  CHECK(read["isError"] == JsonValue(false));
  const JsonValue status = session.call(4, "index_status", "{}");
  CHECK(status["structuredContent"]["index"] == JsonValue(repo.index_path()));
  session.close_stdin();
  CHECK(session.wait_exit() == 0);
  CHECK(std::filesystem::is_empty(elsewhere.path()));
}

TEST_CASE("mcp: a tool error when there is no index and no repository, the server stays up") {
  TempDir empty("mcp-empty");
  TempDir scratch("mcp");
  McpSession session(empty.path(), scratch);
  session.request(1, "initialize", R"({"protocolVersion":"2024-11-05"})");
  const JsonValue result = session.call(2, "search", R"({"query":"anything"})");
  CHECK(result["isError"] == JsonValue(true));
  CHECK_THAT(text_of(result), Catch::Contains("no index"));
  CHECK(session.request(3, "ping")["result"].is_object());
  session.close_stdin();
  CHECK(session.wait_exit() == 0);
}

TEST_CASE("mcp: SIGTERM ends a server waiting for its client, exit 143") {
  TempDir empty("mcp-term");
  TempDir scratch("mcp");
  McpSession session(empty.path(), scratch);
  CHECK(session.request(1, "ping")["result"].is_object());
  session.signal(SIGTERM);  // stdin stays open: the server is blocked reading it
  CHECK(session.wait_exit() == 143);
}

TEST_CASE("mcp: searches while `kasava index` rewrites the index keep answering") {
  FixtureRepo repo;
  write_many_files(repo, 1500, 0);
  REQUIRE(repo.kasava({"index"}).exit_code == 0);
  write_many_files(repo, 1500, 1);  // every file changes: the next run rewrites them all
  TempDir scratch("mcp-concurrent");
  McpSession session(repo.root(), scratch);
  session.request(1, "initialize",
                  R"({"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"e2e","version":"1"}})");
  session.send(R"({"jsonrpc":"2.0","method":"notifications/initialized"})");

  BackgroundKasava writer({"index"}, repo.root(), scratch / "writer");
  int id = 2;
  int rounds = 0;
  while (writer.running() || rounds == 0) {
    // Each search refreshes first: with the writer holding the lock, it searches what has
    // been committed, old and new versions of files side by side, never a locked database.
    const JsonValue found = session.call(id++, "search", R"({"query":"handler request","limit":5})");
    INFO(found.dump());
    CHECK(found["isError"] == JsonValue(false));
    CHECK(found["structuredContent"]["results"].size() == 5);
    const JsonValue status = session.call(id++, "index_status", "{}");
    CHECK(status["isError"] == JsonValue(false));
    ++rounds;
  }
  INFO(writer.err());
  REQUIRE(writer.wait() == 0);
  // Once the writer is done, the new version is what is found.
  const JsonValue after = session.call(id++, "search", R"({"query":"omega service request","limit":3,"mode":"lexical"})");
  CHECK(after["isError"] == JsonValue(false));
  CHECK_THAT(after["structuredContent"]["results"][std::size_t{0}]["code"].as_string(),
             Catch::Contains("omega"));
  session.close_stdin();
  CHECK(session.wait_exit() == 0);
  const std::string errors = session.stderr_text();
  CHECK(errors.find("locked") == std::string::npos);
  CHECK(errors.find("busy") == std::string::npos);
  WARN("mcp: " << rounds << " search+status rounds while index ran");
}

TEST_CASE("mcp: a running server searches the index a rebuild has put in place") {
  FixtureRepo repo;
  write_many_files(repo, 60, 0);
  repo.commit_all("alpha");
  // An index of a commit: searches do not refresh it, so only the rebuild changes it.
  REQUIRE(repo.kasava({"index", "--rev", "HEAD"}).exit_code == 0);
  TempDir scratch("mcp");
  McpSession session(repo.root(), scratch);
  session.request(
      1, "initialize",
      R"({"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"e2e","version":"1"}})");
  session.send(R"({"jsonrpc":"2.0","method":"notifications/initialized"})");
  int id = 2;
  auto found = [&](const std::string& words) {
    const JsonValue result =
        session.call(id++, "search", R"({"query":")" + words + R"(","mode":"lexical"})");
    CHECK(result["isError"] == JsonValue(false));
    return result["structuredContent"]["results"].size();
  };
  CHECK(found("alpha") > 0);
  CHECK(found("omega") == 0);

  write_many_files(repo, 60, 1);
  repo.commit_all("omega");
  const auto rebuilt = repo.kasava({"index", "--rev", "HEAD", "--rebuild"});
  INFO(describe(rebuilt));
  REQUIRE(rebuilt.exit_code == 0);
  CHECK(found("omega") > 0);
  CHECK(found("alpha") == 0);
  session.close_stdin();
  CHECK(session.wait_exit() == 0);
}

TEST_CASE("mcp --store: search, read_file_range and index_status across a shared store's repositories",
          "[store][mcp]") {
  kasava::test_support::PostgresServer& server = kasava::test_support::PostgresServer::shared();
  const std::string uri = server.uri(server.create_database("mcp_store"));
  FixtureRepo app;
  app.write("billing.py",
            "def reconcile_ledger_entries(entries, statement):\n"
            "    \"\"\"Reconciles the ledger entries against the bank statement.\"\"\"\n"
            "    return [entry for entry in entries if entry not in statement]\n");
  app.commit_all("app");
  publish_as(app, uri, "acme/app");
  app.git({"checkout", "-q", "-b", "feature"});
  app.write("billing.py", "def reconcile_ledger_entries(entries):\n    return entries\n");
  app.commit_all("feature");
  publish_as(app, uri, "acme/app");
  FixtureRepo lib;
  lib.write("lib.go", "package lib\n\n// Sum adds two numbers.\nfunc Sum(a, b int) int { return a + b }\n");
  lib.commit_all("lib");
  publish_as(lib, uri, "acme/lib");

  TempDir nowhere("mcp-store-cwd");  // no repository, no index: everything comes from the store
  TempDir scratch("mcp-store");
  McpSession session(nowhere.path(), scratch, {}, {"--store", uri});
  const JsonValue init = session.request(1, "initialize", R"({"protocolVersion":"2025-06-18"})");
  CHECK_THAT(init["result"]["instructions"].as_string(), Catch::Contains("repositories"));
  std::vector<std::string> transcript = {init.dump()};

  // The tools take a repository; search finds each repository's latest ref.
  const JsonValue list = session.request(2, "tools/list");
  transcript.push_back(list.dump());
  CHECK(list["result"]["tools"][std::size_t{0}]["inputSchema"]["properties"].contains("repository"));
  CHECK(list["result"]["tools"][std::size_t{1}]["inputSchema"]["properties"].contains("ref"));
  const JsonValue found = session.call(3, "search", R"({"query":"reconcile ledger entries","limit":3})");
  transcript.push_back(found.dump());
  CHECK(found["isError"] == JsonValue(false));
  const JsonValue& first = found["structuredContent"]["results"][std::size_t{0}];
  CHECK(first["path"] == JsonValue("billing.py"));
  CHECK(first["repository"] == JsonValue("acme/app"));
  CHECK(first["ref"] == JsonValue("feature"));
  CHECK_THAT(text_of(found), Catch::Contains("1. acme/app@feature:billing.py:1-2"));
  const JsonValue sum = session.call(4, "search", R"({"query":"sum two numbers","repository":"acme/l*"})");
  transcript.push_back(sum.dump());
  REQUIRE(sum["structuredContent"]["results"].size() >= 1);
  for (const auto& result : sum["structuredContent"]["results"].as_array()) {
    CHECK(result["repository"] == JsonValue("acme/lib"));
  }
  const JsonValue on_main = session.call(5, "search", R"({"query":"bank statement","ref":"main"})");
  transcript.push_back(on_main.dump());
  REQUIRE(on_main["structuredContent"]["results"].size() >= 1);
  CHECK(on_main["structuredContent"]["results"][std::size_t{0}]["ref"] == JsonValue("main"));
  const JsonValue none = session.call(6, "search", R"({"query":"x","repository":"nope/*"})");
  transcript.push_back(none.dump());
  CHECK(none["isError"] == JsonValue(true));
  CHECK_THAT(text_of(none), Catch::Contains("no published ref of a repository matching repository 'nope/*'"));

  // read_file_range reads the store's text of the ref asked (latest by default).
  const JsonValue unnamed = session.call(7, "read_file_range", R"({"path":"billing.py"})");
  transcript.push_back(unnamed.dump());
  CHECK(unnamed["isError"] == JsonValue(true));
  CHECK_THAT(text_of(unnamed), Catch::Contains("the store holds 2 repositories: name one with `repository`"));
  const JsonValue latest = session.call(8, "read_file_range", R"({"path":"billing.py","repository":"acme/app"})");
  transcript.push_back(latest.dump());
  CHECK(latest["isError"] == JsonValue(false));
  CHECK(latest["structuredContent"]["ref"] == JsonValue("feature"));
  CHECK(latest["structuredContent"]["text"] == JsonValue("def reconcile_ledger_entries(entries):\n    return entries\n"));
  const JsonValue old = session.call(
      9, "read_file_range", R"({"path":"billing.py","repository":"acme/app","ref":"main","start_line":2,"end_line":2})");
  transcript.push_back(old.dump());
  CHECK(old["structuredContent"]["text"] ==
        JsonValue("    \"\"\"Reconciles the ledger entries against the bank statement.\"\"\"\n"));
  CHECK(old["structuredContent"]["total_lines"] == JsonValue(3));
  CHECK_THAT(text_of(old), Catch::StartsWith("acme/app@main:billing.py:2-2 (of 3 lines)"));
  const JsonValue missing = session.call(10, "read_file_range", R"({"path":"nothing.py","repository":"acme/lib"})");
  transcript.push_back(missing.dump());
  CHECK(missing["isError"] == JsonValue(true));
  CHECK_THAT(text_of(missing), Catch::Contains("'nothing.py' is not a file of acme/lib@main in the store"));
  const JsonValue bad_ref = session.call(11, "read_file_range", R"({"path":"lib.go","repository":"acme/lib","ref":"dev"})");
  transcript.push_back(bad_ref.dump());
  CHECK_THAT(text_of(bad_ref), Catch::Contains("'acme/lib' has no published ref 'dev' (it has 'main')"));
  const JsonValue escape = session.call(12, "read_file_range", R"({"path":"../lib.go","repository":"acme/lib"})");
  transcript.push_back(escape.dump());
  CHECK(escape["isError"] == JsonValue(true));

  // index_status lists the repositories and refs, never the connection's password.
  const JsonValue status = session.call(13, "index_status", "{}");
  transcript.push_back(status.dump());
  CHECK(status["structuredContent"]["repositories"] == JsonValue(2));
  CHECK(status["structuredContent"]["refs"].size() == 3);
  CHECK_THAT(text_of(status), Catch::Contains("acme/app feature"));
  session.close_stdin();
  CHECK(session.wait_exit() == 0);
  transcript.push_back(session.stderr_text());
  for (const auto& text : transcript) CHECK(text.find(server.password()) == std::string::npos);
}

TEST_CASE("mcp --store: a store that cannot be reached is one line and exit 2 at start", "[store][mcp]") {
  TempDir scratch("mcp-store-down");
  FixtureRepo nowhere{GitInit::no};
  const RunResult result = nowhere.kasava(
      {"mcp", "--store", "postgresql://kasava:Secret-Pw-1@127.0.0.1:1/none?connect_timeout=2"});
  CHECK(result.exit_code == 2);
  CHECK(lines_of(result.err).size() == 1);
  CHECK_THAT(result.err, Catch::StartsWith("kasava: error: "));
  CHECK(result.err.find("127.0.0.1:1") != std::string::npos);
  CHECK(result.err.find("Secret-Pw-1") == std::string::npos);
  CHECK(result.out.empty());
}
