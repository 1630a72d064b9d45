// Tests of the client-side rate limiter (core/net/rate_limiter.cpp).
#include <catch2/catch.hpp>

#include "core/net/rate_limiter.hpp"
#include "manual_clock.hpp"

using namespace kasava;
using namespace std::chrono_literals;

TEST_CASE("net::RateLimiter allows a burst, then one request per interval") {
  test::ManualClock clock;
  net::RateLimiter limiter(4.0, 3, clock);
  for (int i = 0; i < 5; ++i) CHECK(limiter.acquire());
  // Three at once (the burst), then 250 ms apart.
  CHECK(clock.sleeps() == std::vector<std::chrono::milliseconds>{250ms, 250ms});
}

TEST_CASE("net::RateLimiter refills after idle time") {
  test::ManualClock clock;
  net::RateLimiter limiter(10.0, 2, clock);
  CHECK(limiter.acquire());
  CHECK(limiter.acquire());
  clock.advance(10s);
  CHECK(limiter.acquire());
  CHECK(limiter.acquire());
  CHECK(clock.sleeps().empty());
}

TEST_CASE("net::RateLimiter with a zero rate never waits") {
  test::ManualClock clock;
  net::RateLimiter limiter(0.0, 1, clock);
  for (int i = 0; i < 100; ++i) CHECK(limiter.acquire());
  CHECK(clock.sleeps().empty());
}

TEST_CASE("net::RateLimiter gives up when cancelled while waiting") {
  test::ManualClock clock;
  net::RateLimiter limiter(1.0, 1, clock);
  std::atomic<bool> cancel{true};
  CHECK(limiter.acquire(&cancel));  // no wait needed: granted
  CHECK(!limiter.acquire(&cancel));
}
