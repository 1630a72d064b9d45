// Tests of streamed answers (core/answer/client.cpp) against a real HTTP server on 127.0.0.1:
// what the client sends to each provider, the pieces that come back as they arrive, and every
// way an exchange can fail — without the key ever showing.
#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <string>
#include <vector>

#include "core/answer/client.hpp"
#include "core/net/curl_client.hpp"
#include "core/util/json_value.hpp"
#include "http_server.hpp"
#include "manual_clock.hpp"

using namespace kasava;
using namespace std::chrono_literals;
using kasava::test::HttpServer;
using kasava::test::Reply;

namespace {

const std::string k_key = "sk-ant-SECRET-key-0123456789";

std::string anthropic_event(const std::string& type, const std::string& json) {
  return "event: " + type + "\ndata: " + json + "\n\n";
}

std::string anthropic_text(const std::string& text) {
  return anthropic_event(
      "content_block_delta",
      R"({"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":")" + text +
          R"("}})");
}

/// A whole Anthropic stream, one event per chunk, the text split into `pieces`.
std::vector<std::string> anthropic_stream(const std::vector<std::string>& pieces) {
  std::vector<std::string> chunks = {
      anthropic_event(
          "message_start",
          R"({"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","content":[],"model":"claude-test","stop_reason":null,"usage":{"input_tokens":10,"output_tokens":1}}})"),
      anthropic_event(
          "content_block_start",
          R"({"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}})"),
      anthropic_event("ping", R"({"type": "ping"})")};
  for (const auto& piece : pieces) chunks.push_back(anthropic_text(piece));
  chunks.push_back(
      anthropic_event("content_block_stop", R"({"type":"content_block_stop","index":0})"));
  chunks.push_back(anthropic_event(
      "message_delta",
      R"({"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":12}})"));
  chunks.push_back(anthropic_event("message_stop", R"({"type":"message_stop"})"));
  return chunks;
}

std::vector<std::string> openai_stream(const std::vector<std::string>& pieces) {
  std::vector<std::string> chunks = {
      R"(data: {"id":"c1","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}]})"
      "\n\n"};
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

answer::Prompt sample_prompt() {
  std::vector<answer::Source> sources(2);
  sources[0] = {"src/auth.py", 10,      11,
                "python",      "login", "def login(user):\n    return check(user)\n"};
  sources[1] = {"src/db.py", 3, 4, "python", "check", "def check(user):\n    return True\n"};
  return answer::build_prompt("where is login handled?", sources).value_or_throw();
}

struct Fixture {
  HttpServer server;
  test::ManualClock clock;
  std::unique_ptr<net::HttpClient> http = net::make_curl_client();
  std::vector<std::string> pieces;

  answer::ChatSettings settings(const std::string& key, const std::string& path = "") {
    answer::ChatSettings s;
    s.base_url = server.url() + path;
    s.api_key = key;
    s.max_tokens = 777;
    s.timeouts.connect = 2000ms;
    s.timeouts.low_speed_time = 5s;
    s.clock = &clock;
    s.uniform = [] { return 0.0; };
    return s;
  }
  answer::AnswerOutcome run(const answer::ChatModelSpec& spec, const answer::ChatSettings& s,
                            const answer::Prompt& prompt = sample_prompt()) {
    return answer::stream_answer(
        spec, s, prompt,
        [this](std::string_view text) {
          pieces.emplace_back(text);
          return true;
        },
        *http);
  }
};

const answer::ChatModelSpec k_claude{answer::Provider::anthropic, "claude-test"};
const answer::ChatModelSpec k_gpt{answer::Provider::openai, "gpt-test"};

std::string joined(const std::vector<std::string>& pieces) {
  std::string text;
  for (const auto& piece : pieces) text += piece;
  return text;
}

}  // namespace

TEST_CASE("answer::stream_answer sends Anthropic's request and streams the pieces in order") {
  Fixture f;
  Reply reply = Reply::sse(anthropic_stream({"Login is ", "in src/auth.py:10", "."}));
  reply.chunk_delay = 30ms;
  f.server.script({reply});
  const auto start = std::chrono::steady_clock::now();
  std::chrono::steady_clock::duration first_piece{};
  const answer::AnswerOutcome outcome = answer::stream_answer(
      k_claude, f.settings(k_key), sample_prompt(),
      [&](std::string_view text) {
        if (f.pieces.empty()) first_piece = std::chrono::steady_clock::now() - start;
        f.pieces.emplace_back(text);
        return true;
      },
      *f.http);
  const auto total = std::chrono::steady_clock::now() - start;

  CHECK(outcome.status == answer::AnswerStatus::complete);
  CHECK(outcome.error.empty());
  CHECK(outcome.stop_reason == "end_turn");
  CHECK(f.pieces == std::vector<std::string>{"Login is ", "in src/auth.py:10", "."});
  // Pieces arrive as they stream, not at the end.
  CHECK(first_piece < total - 60ms);

  REQUIRE(f.server.request_count() == 1);
  const auto request = f.server.requests()[0];
  CHECK(request.method == "POST");
  CHECK(request.path == "/v1/messages");
  CHECK(request.header("x-api-key") == k_key);
  CHECK(request.header("anthropic-version") == "2023-06-01");
  CHECK(request.header("content-type") == "application/json");
  CHECK(request.header("authorization").empty());
  const auto body = util::parse_json(request.body).value_or_throw();
  CHECK(body["model"].as_string() == "claude-test");
  CHECK(body["max_tokens"].as_integer() == 777);
  CHECK(body["stream"].as_bool());
  CHECK(body["system"].as_string().find("untrusted data") != std::string::npos);
  REQUIRE(body["messages"].size() == 1);
  CHECK(body["messages"][std::size_t{0}]["role"].as_string() == "user");
  const std::string& user = body["messages"][std::size_t{0}]["content"].as_string();
  const std::string tag = sample_prompt().tag;
  CHECK(user.find("Question: where is login handled?") != std::string::npos);
  CHECK(user.find("<" + tag + " path=\"src/auth.py\" lines=\"10-11\"") != std::string::npos);
  CHECK(user.find("10| def login(user):") != std::string::npos);
  CHECK(user.find("</" + tag + ">") != std::string::npos);
}

TEST_CASE("answer::stream_answer sends OpenAI's request and streams the pieces in order") {
  Fixture f;
  f.server.script({Reply::sse(openai_stream({"See ", "src/db.py:3"}))});
  const auto outcome = f.run(k_gpt, f.settings("sk-openai-KEY-123456", "/v1"));
  CHECK(outcome.status == answer::AnswerStatus::complete);
  CHECK(f.pieces == std::vector<std::string>{"See ", "src/db.py:3"});
  const auto request = f.server.requests().at(0);
  CHECK(request.path == "/v1/chat/completions");
  CHECK(request.header("authorization") == "Bearer sk-openai-KEY-123456");
  CHECK(request.header("x-api-key").empty());
  const auto body = util::parse_json(request.body).value_or_throw();
  CHECK(body["model"].as_string() == "gpt-test");
  CHECK(body["stream"].as_bool());
  REQUIRE(body["messages"].size() == 2);
  CHECK(body["messages"][std::size_t{0}]["role"].as_string() == "system");
  CHECK(body["messages"][std::size_t{1}]["content"].as_string().find("src/db.py") !=
        std::string::npos);

  SECTION("without a key (a local server) no Authorization header is sent") {
    f.server.script({Reply::sse(openai_stream({"ok"}))});
    CHECK(f.run(k_gpt, f.settings("", "/v1")).status == answer::AnswerStatus::complete);
    CHECK(f.server.requests().at(1).header("authorization").empty());
  }
}

TEST_CASE("answer::stream_answer sends only what fits the context budget") {
  Fixture f;
  f.server.script({Reply::sse(anthropic_stream({"ok"}))});
  std::string long_text;
  for (int i = 0; i < 300; ++i)
    long_text += "line_" + std::to_string(i) + " = " + std::to_string(i) + "\n";
  std::vector<answer::Source> sources = {{"a.py", 1, 1, "python", "", "first_place = 1\n"},
                                         {"b.py", 1, 300, "python", "", long_text},
                                         {"c.py", 1, 1, "python", "", "third_place = 3\n"}};
  answer::PromptBudget budget;
  budget.max_prompt_tokens = 1000;
  const auto prompt = answer::build_prompt("q", sources, budget).value_or_throw();
  CHECK(f.run(k_claude, f.settings(k_key), prompt).status == answer::AnswerStatus::complete);
  const auto body = util::parse_json(f.server.requests().at(0).body).value_or_throw();
  const std::string& user = body["messages"][std::size_t{0}]["content"].as_string();
  CHECK(user.find("first_place = 1") != std::string::npos);
  CHECK(user.find("line_0 = 0") != std::string::npos);
  CHECK(user.find("line_299 = 299") == std::string::npos);
  CHECK(user.find("third_place") == std::string::npos);
  CHECK(answer::estimate_tokens(body["system"].as_string()) + answer::estimate_tokens(user) <=
        1000);
}

TEST_CASE("answer::stream_answer names the key variable on 401/403 and never the key") {
  Fixture f;
  SECTION("anthropic, the server echoing the key") {
    f.server.script({Reply::json(
        401,
        R"({"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key )" +
            k_key + R"("}})")});
    const auto outcome = f.run(k_claude, f.settings(k_key));
    CHECK(outcome.status == answer::AnswerStatus::failed);
    CHECK(outcome.error.find("ANTHROPIC_API_KEY") != std::string::npos);
    CHECK(outcome.error.find("rejected the API key (HTTP 401)") != std::string::npos);
    CHECK(outcome.error.find(k_key) == std::string::npos);
    CHECK(outcome.error.find("SECRET") == std::string::npos);
    CHECK(f.server.request_count() == 1);  // not retried
  }
  SECTION("openai, 403") {
    f.server.script({Reply::json(403, R"({"error":{"message":"bad key sk-openai-KEY-123456"}})")});
    const auto outcome = f.run(k_gpt, f.settings("sk-openai-KEY-123456", "/v1"));
    CHECK(outcome.error.find("OPENAI_API_KEY") != std::string::npos);
    CHECK(outcome.error.find("sk-openai-KEY-123456") == std::string::npos);
  }
  SECTION("openai without a key") {
    f.server.script({Reply::json(401, R"({"error":{"message":"missing key"}})")});
    const auto outcome = f.run(k_gpt, f.settings("", "/v1"));
    CHECK(outcome.error.find("requires an API key (HTTP 401): set OPENAI_API_KEY") !=
          std::string::npos);
  }
  SECTION("anthropic without a key fails before sending") {
    const auto outcome = f.run(k_claude, f.settings(""));
    CHECK(outcome.error == "anthropic:claude-test needs an API key: set ANTHROPIC_API_KEY");
    CHECK(f.server.request_count() == 0);
  }
}

TEST_CASE("answer::stream_answer includes the server's message on 400 and 404, capped") {
  Fixture f;
  f.server.script({Reply::json(
      400,
      R"({"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: )" +
          std::string(1000, 'x') + R"("}})")});
  auto outcome = f.run(k_claude, f.settings(k_key));
  CHECK(outcome.error.find(
            "rejected the request (HTTP 400): invalid_request_error: prompt is too long") !=
        std::string::npos);
  CHECK(outcome.error.size() < 500);

  f.server.script({Reply::json(404, R"({"error":{"message":"model 'nope' not found"}})")});
  outcome = f.run(k_gpt, f.settings("", "/v1"));
  CHECK(outcome.error.find(
            "/v1/chat/completions not found (HTTP 404): check the model name 'gpt-test'") !=
        std::string::npos);
  CHECK(outcome.error.find("model 'nope' not found") != std::string::npos);
}

TEST_CASE("answer::stream_answer retries 500 before anything streamed") {
  Fixture f;
  f.server.script({Reply::json(500, R"({"error":{"message":"boom"}})"),
                   Reply::sse(anthropic_stream({"after ", "retry"}))});
  const auto outcome = f.run(k_claude, f.settings(k_key));
  CHECK(outcome.status == answer::AnswerStatus::complete);
  CHECK(outcome.attempts == 2);
  CHECK(joined(f.pieces) == "after retry");
  CHECK(f.server.request_count() == 2);
}

TEST_CASE("answer::stream_answer honours Retry-After on 429") {
  Fixture f;
  Reply limited =
      Reply::json(429, R"({"error":{"type":"rate_limit_error","message":"slow down"}})");
  limited.headers.push_back({"Retry-After", "7"});
  f.server.script({limited, Reply::sse(openai_stream({"fine"}))});
  const auto outcome = f.run(k_gpt, f.settings("", "/v1"));
  CHECK(outcome.status == answer::AnswerStatus::complete);
  CHECK(joined(f.pieces) == "fine");
  const auto sleeps = f.clock.sleeps();
  REQUIRE(sleeps.size() == 1);
  CHECK(sleeps[0] == 7000ms);

  SECTION("rate limited to the end: the error says so") {
    f.pieces.clear();
    answer::ChatSettings settings = f.settings("", "/v1");
    settings.retry.max_attempts = 2;
    f.server.script({limited, limited});
    const auto failed = f.run(k_gpt, settings);
    CHECK(failed.status == answer::AnswerStatus::failed);
    CHECK(failed.error.find(
              "rate limited (HTTP 429) after 2 attempts: rate_limit_error: slow down") !=
          std::string::npos);
  }
}

TEST_CASE(
    "answer::stream_answer reports a stream cut before its end marker after the text it had") {
  Fixture f;
  SECTION("the connection closes mid-stream") {
    auto chunks = anthropic_stream({"Partial ", "answer"});
    chunks.resize(chunks.size() - 3);  // no content_block_stop, message_delta, message_stop
    f.server.script({Reply::sse(chunks, true)});
    const auto outcome = f.run(k_claude, f.settings(k_key));
    CHECK(outcome.status == answer::AnswerStatus::failed);
    CHECK(outcome.error.find("the answer stream ended before the model finished") !=
          std::string::npos);
    CHECK(joined(f.pieces) == "Partial answer");
    CHECK(f.server.request_count() == 1);  // bytes had streamed: never retried
  }
  SECTION("the transfer ends cleanly without the end marker") {
    auto chunks = openai_stream({"Partial"});
    chunks.resize(2);
    f.server.script({Reply::sse(chunks)});
    const auto outcome = f.run(k_gpt, f.settings("", "/v1"));
    CHECK(outcome.error == "openai:gpt-test at " + f.server.url() +
                               "/v1: the answer stream ended before the model finished");
    CHECK(joined(f.pieces) == "Partial");
  }
  SECTION("an OpenAI-compatible server that ends after finish_reason without [DONE]") {
    auto chunks = openai_stream({"Whole"});
    chunks.pop_back();
    f.server.script({Reply::sse(chunks)});
    CHECK(f.run(k_gpt, f.settings("", "/v1")).status == answer::AnswerStatus::complete);
  }
}

TEST_CASE("answer::stream_answer fails clearly on malformed JSON and error events") {
  Fixture f;
  SECTION("malformed JSON") {
    f.server.script(
        {Reply::sse({anthropic_text("Good "),
                     "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\n\n",
                     anthropic_text("never")})});
    const auto outcome = f.run(k_claude, f.settings(k_key));
    CHECK(outcome.status == answer::AnswerStatus::failed);
    CHECK(outcome.error.find("anthropic:claude-test at ") == 0);
    CHECK(outcome.error.find(
              ": malformed 'content_block_delta' event from the model: invalid JSON") !=
          std::string::npos);
    CHECK(f.pieces == std::vector<std::string>{"Good "});
  }
  SECTION("an error event in the stream") {
    f.server.script({Reply::sse(
        {anthropic_text("Half "),
         anthropic_event(
             "error",
             R"({"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}})")})});
    const auto outcome = f.run(k_claude, f.settings(k_key));
    CHECK(outcome.error.find("the model reported an error: overloaded_error: Overloaded") !=
          std::string::npos);
    CHECK(f.pieces == std::vector<std::string>{"Half "});
  }
  SECTION("a server that answers with JSON instead of a stream") {
    f.server.script({Reply::json(200, R"({"choices":[{"message":{"content":"hi"}}]})")});
    const auto outcome = f.run(k_gpt, f.settings("", "/v1"));
    CHECK(outcome.error.find(
              "expected an event stream (text/event-stream), got 'application/json'") !=
          std::string::npos);
  }
}

TEST_CASE("answer::stream_answer stops mid-stream when cancelled") {
  Fixture f;
  std::vector<std::string> chunks = anthropic_stream({"one ", "two ", "three ", "four ", "five"});
  Reply slow = Reply::sse(chunks);
  slow.chunk_delay = 300ms;
  f.server.script({slow});
  std::atomic<bool> cancel{false};
  answer::ChatSettings settings = f.settings(k_key);
  settings.cancel = &cancel;
  const auto start = std::chrono::steady_clock::now();
  const auto outcome = answer::stream_answer(
      k_claude, settings, sample_prompt(),
      [&](std::string_view text) {
        f.pieces.emplace_back(text);
        cancel = true;  // Ctrl-C after the first piece
        return true;
      },
      *f.http);
  CHECK(outcome.status == answer::AnswerStatus::cancelled);
  CHECK(f.pieces == std::vector<std::string>{"one "});
  CHECK(std::chrono::steady_clock::now() - start < 2s);  // the whole stream takes 3 s
}

TEST_CASE("answer::stream_answer stops when the receiver asks to (stdout closed)") {
  Fixture f;
  f.server.script({Reply::sse(openai_stream({"first", "second", "third"}))});
  const auto outcome = answer::stream_answer(
      k_gpt, f.settings("", "/v1"), sample_prompt(),
      [&](std::string_view text) {
        f.pieces.emplace_back(text);
        return false;
      },
      *f.http);
  CHECK(outcome.status == answer::AnswerStatus::cancelled);
  CHECK(f.pieces == std::vector<std::string>{"first"});
}

TEST_CASE("answer::build_chat_request accepts a base URL with or without /v1 for Anthropic") {
  answer::ChatSettings settings;
  settings.base_url = "https://proxy.example/";
  CHECK(answer::build_chat_request(k_claude, settings, sample_prompt()).url ==
        "https://proxy.example/v1/messages");
  settings.base_url = "https://proxy.example/v1";
  CHECK(answer::build_chat_request(k_claude, settings, sample_prompt()).url ==
        "https://proxy.example/v1/messages");
  settings.base_url = "";
  CHECK(answer::build_chat_request(k_claude, settings, sample_prompt()).url ==
        "https://api.anthropic.com/v1/messages");
  CHECK(answer::build_chat_request(k_gpt, settings, sample_prompt()).url ==
        "https://api.openai.com/v1/chat/completions");
}
