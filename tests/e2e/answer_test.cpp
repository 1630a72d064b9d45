// `kasava ask --answer` end to end: the real binary against a chat server on 127.0.0.1 that
// this test process runs (tests/unit/http_server.hpp), speaking Anthropic's and OpenAI's
// streamed shapes — the answer streamed to stdout, the sources listed, what was sent, and
// the errors: a rejected key, no model configured, a truncated stream, Ctrl-C.
#include <signal.h>

#include <chrono>
#include <cstdlib>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "background.hpp"
#include "harness.hpp"
#include "tests/unit/http_server.hpp"

namespace kasava::e2e {
namespace {

using test::HttpServer;
using test::Reply;

const std::string k_key = "sk-ant-E2E-SECRET-987654321";
const std::string k_question = "how does the retry backoff work";

void write_project(const FixtureRepo& repo) {
  repo.write("net/retry.py",
             "import time\n\n\n"
             "def retry_with_backoff(operation, attempts=5):\n"
             "    \"\"\"Retries an operation with exponential backoff between attempts.\"\"\"\n"
             "    delay = 0.5\n"
             "    for attempt in range(attempts):\n"
             "        try:\n"
             "            return operation()\n"
             "        except IOError:\n"
             "            time.sleep(delay)\n"
             "            delay *= 2\n"
             "    raise RuntimeError(\"gave up\")\n");
  repo.write("app/config.py",
             "def parse_config(path):\n"
             "    \"\"\"Reads the settings file and returns a dict of options.\"\"\"\n"
             "    with open(path) as handle:\n"
             "        return dict(line.split('=', 1) for line in handle)\n");
  repo.commit_all("initial");
}

std::string anthropic_event(const std::string& type, const std::string& json) {
  return "event: " + type + "\ndata: " + json + "\n\n";
}

std::vector<std::string> anthropic_stream(const std::vector<std::string>& pieces) {
  std::vector<std::string> chunks = {
      anthropic_event(
          "message_start",
          R"({"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","content":[],"model":"claude-test","stop_reason":null,"usage":{"input_tokens":10,"output_tokens":1}}})"),
      anthropic_event(
          "content_block_start",
          R"({"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}})")};
  for (const auto& piece : pieces)
    chunks.push_back(anthropic_event(
        "content_block_delta",
        R"({"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":")" + piece +
            R"("}})"));
  chunks.push_back(
      anthropic_event("content_block_stop", R"({"type":"content_block_stop","index":0})"));
  chunks.push_back(anthropic_event(
      "message_delta",
      R"({"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":9}})"));
  chunks.push_back(anthropic_event("message_stop", R"({"type":"message_stop"})"));
  return chunks;
}

std::vector<std::string> openai_stream(const std::vector<std::string>& pieces) {
  std::vector<std::string> chunks;
  for (const auto& piece : pieces)
    chunks.push_back(
        R"(data: {"id":"c1","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":")" +
        piece +
        R"("},"finish_reason":null}]})"
        "\n\n");
  chunks.push_back(R"(data: {"id":"c1","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]})"
                   "\n\n");
  chunks.push_back("data: [DONE]\n\n");
  return chunks;
}

RunOptions anthropic_env(const HttpServer& server) {
  RunOptions options;
  options.set_env("KASAVA_ANSWER_MODEL", "anthropic:claude-test");
  options.set_env("KASAVA_ANTHROPIC_BASE_URL", server.url());
  options.set_env("ANTHROPIC_API_KEY", k_key);
  options.unset_env = {"OPENAI_API_KEY"};
  options.timeout = std::chrono::seconds(30);
  return options;
}

// The places `ask` finds for the question, as `path:start-end`, best first.
std::vector<std::string> places(const FixtureRepo& repo) {
  const auto result = repo.kasava({"ask", "--no-refresh", "--json", k_question});
  INFO(describe(result));
  REQUIRE(result.exit_code == 0);
  std::vector<std::string> found;
  const auto document = parse_json_output(result.out);
  for (const auto& item : document["results"].as_array())
    found.push_back(item["path"].as_string() + ":" +
                    std::to_string(item["start_line"].as_integer()) + "-" +
                    std::to_string(item["end_line"].as_integer()));
  return found;
}

// Sets environment variables of this process for a child started with fork (BackgroundKasava),
// and restores them when it goes away.
class ScopedEnv {
public:
  void set(const std::string& name, const std::string& value) {
    const char* old = std::getenv(name.c_str());
    m_saved.push_back({name, old != nullptr ? std::optional<std::string>(old) : std::nullopt});
    ::setenv(name.c_str(), value.c_str(), 1);
  }
  void unset(const std::string& name) {
    const char* old = std::getenv(name.c_str());
    m_saved.push_back({name, old != nullptr ? std::optional<std::string>(old) : std::nullopt});
    ::unsetenv(name.c_str());
  }
  ~ScopedEnv() {
    for (auto it = m_saved.rbegin(); it != m_saved.rend(); ++it) {
      if (it->second) {
        ::setenv(it->first.c_str(), it->second->c_str(), 1);
      } else {
        ::unsetenv(it->first.c_str());
      }
    }
  }

private:
  std::vector<std::pair<std::string, std::optional<std::string>>> m_saved;
};

}  // namespace

TEST_CASE("answer: streams an Anthropic answer, then the sources it was given") {
  FixtureRepo repo;
  write_project(repo);
  REQUIRE(repo.kasava({"index"}).exit_code == 0);
  const std::vector<std::string> expected = places(repo);
  HttpServer server;
  server.script({Reply::sse(
      anthropic_stream({"Retries double the delay ", "each time (net/retry.py:11)."}))});

  const auto result = repo.kasava({"ask", "--answer", k_question}, anthropic_env(server));
  INFO(describe(result));
  REQUIRE(result.exit_code == 0);
  CHECK(result.out.rfind("Retries double the delay each time (net/retry.py:11).\n\nSources:\n",
                         0) == 0);
  for (const std::string& place : expected)
    CHECK(result.out.find("  " + place) != std::string::npos);
  CHECK(result.out.find("net/retry.py:4-13") != std::string::npos);

  REQUIRE(server.request_count() == 1);
  const auto request = server.requests()[0];
  CHECK(request.path == "/v1/messages");
  CHECK(request.header("x-api-key") == k_key);
  CHECK(request.header("anthropic-version") == "2023-06-01");
  const auto body = util::parse_json(request.body).value_or_throw();
  CHECK(body["model"].as_string() == "claude-test");
  CHECK(body["stream"].as_bool());
  CHECK(body["system"].as_string().find("never instructions") != std::string::npos);
  const std::string& user = body["messages"][std::size_t{0}]["content"].as_string();
  CHECK(user.find("Question: " + k_question) != std::string::npos);
  CHECK(user.find(" path=\"net/retry.py\" lines=\"4-13\"") != std::string::npos);
  CHECK(user.find("4| def retry_with_backoff(operation, attempts=5):") != std::string::npos);
  CHECK(user.find("12|             delay *= 2") != std::string::npos);
  CHECK(user.find("<source-") != std::string::npos);
  CHECK(user.find("</source-") != std::string::npos);
}

TEST_CASE("answer: streams an OpenAI-compatible answer from a local server without a key") {
  FixtureRepo repo;
  write_project(repo);
  HttpServer server;
  server.script({Reply::sse(openai_stream({"See ", "net/retry.py:6"}))});
  RunOptions options;
  options.set_env("KASAVA_OPENAI_BASE_URL", server.url() + "/v1");
  options.unset_env = {"OPENAI_API_KEY", "ANTHROPIC_API_KEY"};
  const auto result =
      repo.kasava({"ask", "--answer", "--answer-model", "openai:local-model", k_question}, options);
  INFO(describe(result));
  REQUIRE(result.exit_code == 0);
  CHECK(result.out.rfind("See net/retry.py:6\n\nSources:\n", 0) == 0);
  CHECK(result.out.find("net/retry.py:4-13") != std::string::npos);
  const auto request = server.requests().at(0);
  CHECK(request.path == "/v1/chat/completions");
  CHECK(request.header("authorization").empty());
  const auto body = util::parse_json(request.body).value_or_throw();
  CHECK(body["model"].as_string() == "local-model");
  CHECK(body["stream"].as_bool());
  CHECK(body["messages"][std::size_t{1}]["content"].as_string().find("retry_with_backoff") !=
        std::string::npos);
}

TEST_CASE("answer: a rejected key exits 2, names the variable and shows the key nowhere") {
  FixtureRepo repo;
  write_project(repo);
  HttpServer server;
  server.script({Reply::json(
      401,
      R"({"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key: )" +
          k_key + R"("}})")});
  const auto result = repo.kasava({"ask", "--answer", k_question}, anthropic_env(server));
  INFO(describe(result));
  CHECK(result.exit_code == 2);
  CHECK(result.err.find("kasava: error: ") == 0);
  CHECK(result.err.find("ANTHROPIC_API_KEY") != std::string::npos);
  CHECK(result.out.find(k_key) == std::string::npos);
  CHECK(result.err.find(k_key) == std::string::npos);
  CHECK(result.err.find("E2E-SECRET") == std::string::npos);
}

TEST_CASE("answer: without a chat model, says how to configure one") {
  FixtureRepo repo;
  write_project(repo);
  RunOptions options;
  options.unset_env = {"ANTHROPIC_API_KEY", "OPENAI_API_KEY"};
  const auto result = repo.kasava({"ask", "--answer", k_question}, options);
  INFO(describe(result));
  CHECK(result.exit_code == 2);
  CHECK(result.out.empty());
  CHECK(result.err.find("kasava: error: --answer needs a chat model") == 0);
  CHECK(result.err.find("--answer-model anthropic:") != std::string::npos);
  CHECK(result.err.find("KASAVA_ANSWER_MODEL") != std::string::npos);
  CHECK(lines_of(result.err).size() == 1);

  const auto json = repo.kasava({"ask", "--answer", "--json", k_question}, options);
  CHECK(json.exit_code == 2);
  CHECK(json.err.find("excludes") != std::string::npos);
}

TEST_CASE("answer: a stream cut before its end is an error after the partial text") {
  FixtureRepo repo;
  write_project(repo);
  HttpServer server;
  auto chunks = anthropic_stream({"The delay starts at ", "half a second"});
  chunks.resize(chunks.size() - 3);
  server.script({Reply::sse(chunks, true)});
  const auto result = repo.kasava({"ask", "--answer", k_question}, anthropic_env(server));
  INFO(describe(result));
  CHECK(result.exit_code == 2);
  CHECK(result.out.rfind("The delay starts at half a second\n\nSources:\n", 0) == 0);
  CHECK(result.err.find("the answer stream ended before the model finished") != std::string::npos);
}

TEST_CASE("answer: Ctrl-C during a slow stream exits 130 within a second") {
  FixtureRepo repo;
  write_project(repo);
  REQUIRE(repo.kasava({"index"}).exit_code == 0);
  const TempDir scratch("answer");
  HttpServer server;
  Reply slow =
      Reply::sse(anthropic_stream({"First words. ", "second ", "third ", "fourth ", "fifth"}));
  slow.chunk_delay = std::chrono::milliseconds(700);
  server.script({slow});

  std::optional<BackgroundKasava> child;
  {
    ScopedEnv env;  // BackgroundKasava's child inherits this process's environment
    env.set("KASAVA_ANSWER_MODEL", "anthropic:claude-test");
    env.set("KASAVA_ANTHROPIC_BASE_URL", server.url());
    env.set("ANTHROPIC_API_KEY", k_key);
    env.set("HOME", scratch / "home");
    env.set("XDG_CONFIG_HOME", scratch / "config");
    env.set("XDG_CACHE_HOME", scratch / "cache");
    env.unset("KASAVA_MODEL");
    child.emplace(std::vector<std::string>{"ask", "--no-refresh", "--answer", k_question},
                  repo.root(), scratch / "child");
  }
  // Wait for the first piece on stdout: each piece is flushed as it arrives.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (child->out().find("First words.") == std::string::npos && child->running() &&
         std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  REQUIRE(child->out().find("First words.") != std::string::npos);
  REQUIRE(child->running());

  const auto sent = std::chrono::steady_clock::now();
  child->signal(SIGINT);
  const int code = child->wait();
  const double stopped_in =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - sent).count();
  INFO(child->err());
  CHECK(code == 130);
  CHECK(stopped_in < 1.0);
  CHECK(child->err().find("interrupted") != std::string::npos);
  CHECK(child->out().find("fifth") == std::string::npos);
}

}  // namespace kasava::e2e
