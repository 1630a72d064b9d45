// Tests core/serve/rate_limit: a token bucket per client, on the test's own clock.
#include <catch2/catch.hpp>

#include "core/serve/rate_limit.hpp"

using kasava::serve::RateLimiter;
using namespace std::chrono_literals;

TEST_CASE("serve::RateLimiter lets a second's worth through, then says when to come back") {
  RateLimiter limiter(2.0);
  const auto start = RateLimiter::Clock::time_point{} + 1000s;
  CHECK(limiter.acquire("a", start) == 0);
  CHECK(limiter.acquire("a", start) == 0);
  CHECK(limiter.acquire("a", start) == 1);  // empty: half a second to the next, rounded up
  CHECK(limiter.acquire("b", start) == 0);  // each client has its own bucket
  CHECK(limiter.acquire("a", start + 500ms) == 0);
  CHECK(limiter.acquire("a", start + 500ms) == 1);
  CHECK(limiter.acquire("a", start + 10s) == 0);  // refilled, but only to a second's worth
  CHECK(limiter.acquire("a", start + 10s) == 0);
  CHECK(limiter.acquire("a", start + 10s) == 1);
}

TEST_CASE("serve::RateLimiter with a slow rate waits long, and 0 means no limit") {
  RateLimiter slow(0.01);
  const auto start = RateLimiter::Clock::time_point{} + 1000s;
  CHECK(slow.acquire("a", start) == 0);
  CHECK(slow.acquire("a", start) == 100);
  RateLimiter none(0.0);
  for (int i = 0; i < 1000; ++i) REQUIRE(none.acquire("a", start) == 0);
}

TEST_CASE("serve::RateLimiter forgets refilled clients when it holds many") {
  RateLimiter limiter(1.0);
  const auto start = RateLimiter::Clock::time_point{} + 1000s;
  for (int i = 0; i < 5000; ++i) REQUIRE(limiter.acquire("client-" + std::to_string(i), start + 1ms * i) == 0);
  CHECK(limiter.acquire("client-4999", start + 5s) == 1);  // still known: its bucket is empty
}
