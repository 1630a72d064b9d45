// A circuit breaker: after `threshold` consecutive failed attempts against an endpoint, stop
// sending for `cool_down`; then let one trial request through (half-open) — success closes
// the circuit, failure opens it again. Keeps a dead endpoint from being hammered by retries.
#pragma once

#include <mutex>

#include "core/net/clock.hpp"

namespace kasava::net {

class CircuitBreaker {
public:
  enum class State { closed, open, half_open };

  CircuitBreaker(int threshold, Clock::Duration cool_down, Clock& clock = system_clock());

  /// True when a request may be sent now. In half-open state only one caller gets true
  /// until that trial reports back.
  bool allow();
  /// Time until the circuit lets a trial through (zero when not open).
  Clock::Duration remaining_cool_down();
  /// Report an attempt that reached a healthy endpoint (any non-retryable status).
  void record_success();
  /// Report an attempt that failed (timeout, reset, 429, 5xx…).
  void record_failure();

  State state();
  int consecutive_failures();

private:
  Clock& m_clock;
  int m_threshold;
  Clock::Duration m_cool_down;
  std::mutex m_mutex;
  State m_state = State::closed;
  int m_failures = 0;
  bool m_trial_in_flight = false;
  Clock::TimePoint m_opened_at{};
};

}  // namespace kasava::net
