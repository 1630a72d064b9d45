// Tests of the libcurl HttpClient (core/net/curl_client.cpp) against a real local server:
// what is sent, what comes back, and how each kind of broken exchange is classified.
#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <string>
#include <thread>

#include "core/net/curl_client.hpp"
#include "http_server.hpp"

using namespace kasava;
using namespace std::chrono_literals;
using kasava::test::HttpServer;
using kasava::test::Reply;

namespace {

net::HttpRequest post(const HttpServer& server, std::string path, std::string body) {
  net::HttpRequest request;
  request.url = server.url() + path;
  request.body = std::move(body);
  request.headers = {{"Content-Type", "application/json"}};
  request.timeouts.connect = 2000ms;
  request.timeouts.total = 5000ms;
  return request;
}

const std::string k_secret = "sk-test-SECRET-0123456789";

}  // namespace

TEST_CASE("net::make_curl_client posts a body with headers and reads the response") {
  HttpServer server;
  Reply reply = Reply::json(201, R"({"ok":true})");
  reply.headers.push_back({"X-Request-Id", "abc"});
  server.script({reply});
  auto client = net::make_curl_client();
  net::HttpRequest request = post(server, "/v1/embeddings", R"({"input":["a"]})");
  request.headers.push_back({"Authorization", "Bearer " + k_secret});
  const net::HttpOutcome outcome = client->send(request);
  REQUIRE(outcome.has_response());
  CHECK(outcome.response.status == 201);
  CHECK(outcome.response.body == R"({"ok":true})");
  CHECK(outcome.response.header("x-request-id") == "abc");
  CHECK(!outcome.response.header("x-missing"));

  const auto requests = server.requests();
  REQUIRE(requests.size() == 1);
  CHECK(requests[0].method == "POST");
  CHECK(requests[0].path == "/v1/embeddings");
  CHECK(requests[0].body == R"({"input":["a"]})");
  CHECK(requests[0].header("authorization") == "Bearer " + k_secret);
  CHECK(requests[0].header("content-type") == "application/json");
  CHECK(requests[0].header("expect").empty());
}

TEST_CASE("net::make_curl_client reuses the connection for consecutive requests") {
  HttpServer server([](const test::RecordedRequest&) { return Reply::json(200, "{}"); });
  auto client = net::make_curl_client();
  for (int i = 0; i < 5; ++i) REQUIRE(client->send(post(server, "/x", "{}")).has_response());
  CHECK(server.request_count() == 5);
  CHECK(server.connections() == 1);
}

TEST_CASE("net::make_curl_client classifies a hang past the total timeout") {
  HttpServer server;
  server.script({Reply::with_action(Reply::Action::hang)});
  auto client = net::make_curl_client();
  net::HttpRequest request = post(server, "/slow", "{}");
  request.timeouts.total = 300ms;
  request.headers.push_back({"Authorization", "Bearer " + k_secret});
  const auto start = std::chrono::steady_clock::now();
  const net::HttpOutcome outcome = client->send(request);
  CHECK(std::chrono::steady_clock::now() - start < 3s);
  CHECK(outcome.failure == net::FailureKind::timeout);
  CHECK(outcome.error.find("POST " + server.url() + "/slow: ") == 0);
  CHECK(outcome.error.find(k_secret) == std::string::npos);
}

TEST_CASE("net::make_curl_client classifies a connection reset without reply") {
  HttpServer server;
  server.script({Reply::with_action(Reply::Action::reset)});
  auto client = net::make_curl_client();
  net::HttpRequest request = post(server, "/", "{}");
  request.headers.push_back({"x-api-key", k_secret});
  const net::HttpOutcome outcome = client->send(request);
  CHECK(outcome.failure == net::FailureKind::reset);
  CHECK(!outcome.error.empty());
  CHECK(outcome.error.find(k_secret) == std::string::npos);
}

TEST_CASE("net::make_curl_client classifies a refused connection") {
  std::string url;
  {
    HttpServer server;
    url = server.url();
  }  // the port is closed now
  auto client = net::make_curl_client();
  net::HttpRequest request;
  request.url = url + "/v1";
  request.timeouts.connect = 1000ms;
  request.headers.push_back({"Authorization", "Bearer " + k_secret});
  const net::HttpOutcome outcome = client->send(request);
  CHECK(outcome.failure == net::FailureKind::connect);
  CHECK(outcome.error.find("POST " + url + "/v1: failed to connect") == 0);
  CHECK(outcome.error.find(k_secret) == std::string::npos);
}

TEST_CASE("net::make_curl_client streams the body to on_data") {
  HttpServer server;
  Reply reply = Reply::sse({"data: one\n\n", "data: two\n\n", "data: [DONE]\n\n"});
  reply.chunk_delay = 20ms;
  server.script({reply});
  auto client = net::make_curl_client();
  net::HttpRequest request = post(server, "/stream", "{}");
  std::string received;
  int calls = 0;
  request.on_data = [&](std::string_view bytes) {
    received += bytes;
    ++calls;
    return true;
  };
  const net::HttpOutcome outcome = client->send(request);
  REQUIRE(outcome.has_response());
  CHECK(outcome.response.status == 200);
  CHECK(outcome.response.body.empty());
  CHECK(received == "data: one\n\ndata: two\n\ndata: [DONE]\n\n");
  CHECK(calls >= 2);
  CHECK(outcome.streamed_bytes == received.size());
}

TEST_CASE("net::make_curl_client reports a truncated stream as a reset after the data") {
  HttpServer server;
  server.script({Reply::sse({"data: one\n\n", "data: tw"}, true)});
  auto client = net::make_curl_client();
  net::HttpRequest request = post(server, "/stream", "{}");
  std::string received;
  request.on_data = [&](std::string_view bytes) {
    received += bytes;
    return true;
  };
  const net::HttpOutcome outcome = client->send(request);
  CHECK(outcome.failure == net::FailureKind::reset);
  CHECK(received == "data: one\n\ndata: tw");
  CHECK(outcome.streamed_bytes == received.size());
}

TEST_CASE("net::make_curl_client keeps the error body of a streaming request") {
  HttpServer server;
  server.script({Reply::json(400, R"({"error":{"message":"bad"}})")});
  auto client = net::make_curl_client();
  net::HttpRequest request = post(server, "/stream", "{}");
  bool called = false;
  request.on_data = [&](std::string_view) { return called = true; };
  const net::HttpOutcome outcome = client->send(request);
  REQUIRE(outcome.has_response());
  CHECK(outcome.response.status == 400);
  CHECK(outcome.response.body == R"({"error":{"message":"bad"}})");
  CHECK(!called);
}

TEST_CASE("net::make_curl_client stops when on_data returns false or the cancel flag is set") {
  HttpServer server;
  Reply slow = Reply::sse({"data: 1\n\n", "data: 2\n\n", "data: 3\n\n"});
  slow.chunk_delay = 50ms;
  auto client = net::make_curl_client();

  SECTION("on_data") {
    server.script({slow});
    net::HttpRequest request = post(server, "/stream", "{}");
    request.on_data = [](std::string_view) { return false; };
    const net::HttpOutcome outcome = client->send(request);
    CHECK(outcome.failure == net::FailureKind::cancelled);
  }
  SECTION("cancel flag") {
    server.script({Reply::with_action(Reply::Action::hang)});
    std::atomic<bool> cancel{false};
    net::HttpRequest request = post(server, "/stream", "{}");
    request.cancel = &cancel;
    std::thread canceller([&] {
      std::this_thread::sleep_for(100ms);
      cancel = true;
    });
    const auto start = std::chrono::steady_clock::now();
    const net::HttpOutcome outcome = client->send(request);
    canceller.join();
    CHECK(outcome.failure == net::FailureKind::cancelled);
    CHECK(std::chrono::steady_clock::now() - start < 3s);
  }
}

TEST_CASE("net::make_curl_client refuses a body over max_body_bytes") {
  HttpServer server;
  server.script({Reply::json(200, std::string(10000, 'x'))});
  auto client = net::make_curl_client();
  net::HttpRequest request = post(server, "/", "{}");
  request.max_body_bytes = 1000;
  const net::HttpOutcome outcome = client->send(request);
  CHECK(outcome.failure == net::FailureKind::too_large);
}

TEST_CASE("net::display_url drops credentials") {
  CHECK(net::display_url("https://user:pw@host:8080/v1?q=1") == "https://host:8080/v1?q=1");
  CHECK(net::display_url("http://host/v1") == "http://host/v1");
  CHECK(net::display_url("no scheme") == "no scheme");
}

TEST_CASE("net::redact and net::secret_header_values") {
  const std::vector<net::Header> headers = {{"Authorization", "Bearer " + k_secret},
                                            {"x-api-key", "anthropic-key-1"},
                                            {"Content-Type", "application/json"}};
  const auto secrets = net::secret_header_values(headers);
  const std::string text = "key " + k_secret + " and anthropic-key-1, json application/json";
  const std::string redacted = net::redact(text, secrets);
  CHECK(redacted.find(k_secret) == std::string::npos);
  CHECK(redacted.find("anthropic-key-1") == std::string::npos);
  CHECK(redacted.find("application/json") != std::string::npos);
  CHECK(net::redact("abc", {"abc"}) == "abc");  // too short to be a key
}
