// Tests of retries (core/net/retry.cpp) over libcurl against a real local server, with a
// manual clock so backoff and Retry-After waits are checked without waiting.
#include <catch2/catch.hpp>

#include <chrono>
#include <string>

#include "core/net/curl_client.hpp"
#include "core/net/retry.hpp"
#include "http_server.hpp"
#include "manual_clock.hpp"

using namespace kasava;
using namespace std::chrono_literals;
using kasava::test::HttpServer;
using kasava::test::ManualClock;
using kasava::test::Reply;

namespace {

const std::string k_secret = "sk-retry-SECRET-abcdef";

net::HttpRequest post(const HttpServer& server) {
  net::HttpRequest request;
  request.url = server.url() + "/v1/embeddings";
  request.body = "{}";
  request.headers = {{"Authorization", "Bearer " + k_secret}};
  request.timeouts.connect = 2000ms;
  request.timeouts.total = 5000ms;
  return request;
}

net::RetryOptions options(ManualClock& clock) {
  net::RetryOptions o;
  o.clock = &clock;
  o.uniform = [] { return 0.5; };
  o.policy.base_delay = 100ms;
  o.policy.max_delay = 1000ms;
  o.policy.max_attempts = 4;
  return o;
}

Reply with_header(Reply reply, std::string name, std::string value) {
  reply.headers.push_back({std::move(name), std::move(value)});
  return reply;
}

}  // namespace

TEST_CASE("net::RetryingClient waits as Retry-After says after a 429, then succeeds") {
  HttpServer server;
  server.script({with_header(Reply::json(429, R"({"detail":"slow down"})"), "Retry-After", "2"),
                 Reply::json(200, R"({"ok":1})")});
  auto curl = net::make_curl_client();
  ManualClock clock;
  std::vector<net::RetryEvent> events;
  net::RetryOptions o = options(clock);
  o.on_retry = [&](const net::RetryEvent& e) { events.push_back(e); };
  net::RetryingClient client(*curl, o);
  const net::HttpOutcome outcome = client.send(post(server));
  REQUIRE(outcome.has_response());
  CHECK(outcome.response.status == 200);
  CHECK(outcome.attempts == 2);
  CHECK(server.request_count() == 2);
  CHECK(clock.sleeps() == std::vector<std::chrono::milliseconds>{2000ms});
  REQUIRE(events.size() == 1);
  CHECK(events[0].status == 429);
  CHECK(events[0].delay == 2000ms);
}

TEST_CASE("net::RetryingClient honours a Retry-After HTTP date") {
  HttpServer server;
  server.script(
      {with_header(Reply::json(503, "{}"), "Retry-After", "Sun, 06 Nov 1994 08:49:40 GMT"),
       Reply::json(200, "{}")});
  auto curl = net::make_curl_client();
  ManualClock clock;
  clock.set_unix_time(784111777.0);  // Sun, 06 Nov 1994 08:49:37 GMT
  net::RetryingClient client(*curl, options(clock));
  const net::HttpOutcome outcome = client.send(post(server));
  REQUIRE(outcome.has_response());
  CHECK(outcome.response.status == 200);
  REQUIRE(clock.sleeps().size() == 1);
  CHECK(clock.sleeps()[0] >= 2900ms);
  CHECK(clock.sleeps()[0] <= 3100ms);
}

TEST_CASE("net::RetryingClient does not wait for an excessive Retry-After") {
  HttpServer server;
  server.script({with_header(Reply::json(429, "{}"), "Retry-After", "3600")});
  auto curl = net::make_curl_client();
  ManualClock clock;
  net::RetryingClient client(*curl, options(clock));
  const net::HttpOutcome outcome = client.send(post(server));
  REQUIRE(outcome.has_response());
  CHECK(outcome.response.status == 429);
  CHECK(server.request_count() == 1);
  CHECK(clock.sleeps().empty());
}

TEST_CASE("net::RetryingClient backs off exponentially on 500 then succeeds") {
  HttpServer server;
  server.script({Reply::json(500, "{}"), Reply::json(502, "{}"), Reply::json(200, R"({"ok":1})")});
  auto curl = net::make_curl_client();
  ManualClock clock;
  net::RetryingClient client(*curl, options(clock));
  const net::HttpOutcome outcome = client.send(post(server));
  REQUIRE(outcome.has_response());
  CHECK(outcome.response.status == 200);
  CHECK(outcome.attempts == 3);
  // Equal jitter with uniform 0.5: 3/4 of 100 ms, then of 200 ms.
  CHECK(clock.sleeps() == std::vector<std::chrono::milliseconds>{75ms, 150ms});
  CHECK(client.attempts_sent() == 3);
}

TEST_CASE("net::RetryingClient gives up after max_attempts and returns the last status") {
  HttpServer server([](const test::RecordedRequest&) { return Reply::json(503, "{}"); });
  auto curl = net::make_curl_client();
  ManualClock clock;
  net::RetryingClient client(*curl, options(clock));
  const net::HttpOutcome outcome = client.send(post(server));
  REQUIRE(outcome.has_response());
  CHECK(outcome.response.status == 503);
  CHECK(outcome.attempts == 4);
  CHECK(server.request_count() == 4);
}

TEST_CASE("net::RetryingClient does not retry 400, 401 or 404") {
  for (int status : {400, 401, 403, 404}) {
    HttpServer server;
    server.script({Reply::json(status, "{}")});
    auto curl = net::make_curl_client();
    ManualClock clock;
    net::RetryingClient client(*curl, options(clock));
    const net::HttpOutcome outcome = client.send(post(server));
    CHECK(outcome.response.status == status);
    CHECK(server.request_count() == 1);
  }
}

TEST_CASE("net::RetryingClient retries a hang past the timeout, then reports it") {
  HttpServer server(
      [](const test::RecordedRequest&) { return Reply::with_action(Reply::Action::hang); });
  auto curl = net::make_curl_client();
  ManualClock clock;
  net::RetryOptions o = options(clock);
  o.policy.max_attempts = 2;
  net::RetryingClient client(*curl, o);
  net::HttpRequest request = post(server);
  request.timeouts.total = 200ms;
  const net::HttpOutcome outcome = client.send(request);
  CHECK(outcome.failure == net::FailureKind::timeout);
  CHECK(outcome.attempts == 2);
  CHECK(server.request_count() == 2);
  CHECK(outcome.error.find("(after 2 attempts)") != std::string::npos);
  CHECK(outcome.error.find(k_secret) == std::string::npos);
}

TEST_CASE("net::RetryingClient retries a connection reset then succeeds") {
  HttpServer server;
  server.script({Reply::with_action(Reply::Action::reset), Reply::json(200, "{}")});
  auto curl = net::make_curl_client();
  ManualClock clock;
  net::RetryingClient client(*curl, options(clock));
  const net::HttpOutcome outcome = client.send(post(server));
  REQUIRE(outcome.has_response());
  CHECK(outcome.response.status == 200);
  CHECK(outcome.attempts == 2);
}

TEST_CASE("net::RetryingClient does not retry a stream that already delivered data") {
  HttpServer server;
  server.script({Reply::sse({"data: partial\n\n"}, true), Reply::sse({"data: again\n\n"})});
  auto curl = net::make_curl_client();
  ManualClock clock;
  net::RetryingClient client(*curl, options(clock));
  net::HttpRequest request = post(server);
  std::string received;
  request.on_data = [&](std::string_view bytes) {
    received += bytes;
    return true;
  };
  const net::HttpOutcome outcome = client.send(request);
  CHECK(outcome.failure == net::FailureKind::reset);
  CHECK(received == "data: partial\n\n");
  CHECK(server.request_count() == 1);
}

TEST_CASE("net::RetryingClient stops waiting when cancelled") {
  HttpServer server;
  server.script({Reply::json(500, "{}")});
  auto curl = net::make_curl_client();
  ManualClock clock;
  std::atomic<bool> cancel{false};
  net::RetryOptions o = options(clock);
  o.on_retry = [&](const net::RetryEvent&) { cancel = true; };
  net::RetryingClient client(*curl, o);
  net::HttpRequest request = post(server);
  request.cancel = &cancel;
  const net::HttpOutcome outcome = client.send(request);
  CHECK(outcome.failure == net::FailureKind::cancelled);
  CHECK(server.request_count() == 1);
}

TEST_CASE("net::RetryingClient fails fast once the circuit breaker opens") {
  HttpServer server([](const test::RecordedRequest&) { return Reply::json(503, "{}"); });
  auto curl = net::make_curl_client();
  ManualClock clock;
  net::RetryOptions o = options(clock);
  o.policy.max_attempts = 2;
  o.breaker = std::make_shared<net::CircuitBreaker>(3, 10s, clock);
  net::RetryingClient client(*curl, o);

  CHECK(client.send(post(server)).response.status == 503);  // 2 failures
  // The 3rd failure opens it: the retry is not sent, the last real answer is returned.
  const net::HttpOutcome second = client.send(post(server));
  CHECK(server.request_count() == 3);
  CHECK(second.response.status == 503);
  CHECK(second.attempts == 1);

  const net::HttpOutcome refused = client.send(post(server));
  CHECK(refused.failure == net::FailureKind::circuit_open);
  CHECK(refused.error.find("circuit open") != std::string::npos);
  CHECK(refused.error.find(k_secret) == std::string::npos);
  CHECK(refused.attempts == 0);
  CHECK(server.request_count() == 3);  // nothing sent while open

  // After the cool-down one trial goes through; success closes the circuit.
  clock.advance(11s);
  server.set_handler([](const test::RecordedRequest&) { return Reply::json(200, "{}"); });
  CHECK(client.send(post(server)).response.status == 200);
  CHECK(o.breaker->state() == net::CircuitBreaker::State::closed);
  CHECK(server.request_count() == 4);
}

TEST_CASE("net::RetryingClient spaces requests with the rate limiter") {
  HttpServer server([](const test::RecordedRequest&) { return Reply::json(200, "{}"); });
  auto curl = net::make_curl_client();
  ManualClock clock;
  net::RetryOptions o = options(clock);
  o.rate_limiter = std::make_shared<net::RateLimiter>(10.0, 1, clock);
  net::RetryingClient client(*curl, o);
  for (int i = 0; i < 4; ++i) REQUIRE(client.send(post(server)).has_response());
  // The first goes at once, each next one 100 ms after the previous (the clock only moves
  // when the limiter sleeps).
  CHECK(clock.sleeps() == std::vector<std::chrono::milliseconds>{100ms, 100ms, 100ms});
}

TEST_CASE("net::parse_retry_after") {
  CHECK(net::parse_retry_after("120", 0) == 120000ms);
  CHECK(net::parse_retry_after(" 1.5 ", 0) == 1500ms);
  CHECK(net::parse_retry_after("0", 0) == 0ms);
  CHECK(net::parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT", 1445412470.0) == 10000ms);
  CHECK(net::parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT", 1445412490.0) == 0ms);
  CHECK(!net::parse_retry_after("", 0));
  CHECK(!net::parse_retry_after("soon", 0));
  CHECK(!net::parse_retry_after("12abc", 0));
  CHECK(!net::parse_retry_after("-5", 0));
  CHECK(!net::parse_retry_after("Wed, 99 Foo 2015 07:28:00 GMT", 0));
  CHECK(!net::parse_retry_after("99999999999999999999", 0));
}

TEST_CASE("net::backoff_delay grows, caps and jitters") {
  net::RetryPolicy policy;
  policy.base_delay = 100ms;
  policy.max_delay = 1000ms;
  CHECK(net::backoff_delay(policy, 1, 0.0) == 50ms);
  CHECK(net::backoff_delay(policy, 1, 1.0) == 100ms);
  CHECK(net::backoff_delay(policy, 3, 0.0) == 200ms);
  CHECK(net::backoff_delay(policy, 10, 0.99) <= 1000ms);
  CHECK(net::backoff_delay(policy, 10, 0.0) == 500ms);
}

TEST_CASE("net::is_retryable_status") {
  for (int status : {408, 429, 500, 502, 503, 504, 529}) CHECK(net::is_retryable_status(status));
  for (int status : {200, 400, 401, 403, 404, 422, 501, 505})
    CHECK(!net::is_retryable_status(status));
}
