// Tests of the circuit breaker's state machine (core/net/circuit_breaker.cpp).
#include <catch2/catch.hpp>

#include "core/net/circuit_breaker.hpp"
#include "manual_clock.hpp"

using namespace kasava;
using namespace std::chrono_literals;
using State = net::CircuitBreaker::State;

TEST_CASE("net::CircuitBreaker opens after the threshold and lets one trial through") {
  test::ManualClock clock;
  net::CircuitBreaker breaker(3, 5s, clock);
  CHECK(breaker.allow());
  breaker.record_failure();
  breaker.record_failure();
  CHECK(breaker.state() == State::closed);
  breaker.record_success();  // a success resets the count
  breaker.record_failure();
  breaker.record_failure();
  CHECK(breaker.allow());
  breaker.record_failure();
  CHECK(breaker.state() == State::open);
  CHECK(!breaker.allow());
  CHECK(breaker.remaining_cool_down() == 5s);

  clock.advance(5s);
  CHECK(breaker.allow());   // the trial
  CHECK(!breaker.allow());  // only one at a time
  CHECK(breaker.state() == State::half_open);
  breaker.record_failure();  // the trial failed: open again
  CHECK(breaker.state() == State::open);
  CHECK(!breaker.allow());

  clock.advance(5s);
  CHECK(breaker.allow());
  breaker.record_success();
  CHECK(breaker.state() == State::closed);
  CHECK(breaker.allow());
  CHECK(breaker.allow());
}
