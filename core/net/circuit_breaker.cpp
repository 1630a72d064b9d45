// The circuit breaker's state machine (see circuit_breaker.hpp).
#include "core/net/circuit_breaker.hpp"

namespace kasava::net {

CircuitBreaker::CircuitBreaker(int threshold, Clock::Duration cool_down, Clock& clock)
    : m_clock(clock), m_threshold(threshold < 1 ? 1 : threshold), m_cool_down(cool_down) {}

bool CircuitBreaker::allow() {
  std::lock_guard lock(m_mutex);
  switch (m_state) {
    case State::closed:
      return true;
    case State::open:
      if (m_clock.now() - m_opened_at < m_cool_down) return false;
      m_state = State::half_open;
      m_trial_in_flight = true;
      return true;
    case State::half_open:
      if (m_trial_in_flight) return false;
      m_trial_in_flight = true;
      return true;
  }
  return true;
}

Clock::Duration CircuitBreaker::remaining_cool_down() {
  std::lock_guard lock(m_mutex);
  if (m_state != State::open) return Clock::Duration::zero();
  const Clock::Duration elapsed = m_clock.now() - m_opened_at;
  return elapsed >= m_cool_down ? Clock::Duration::zero() : m_cool_down - elapsed;
}

void CircuitBreaker::record_success() {
  std::lock_guard lock(m_mutex);
  m_state = State::closed;
  m_failures = 0;
  m_trial_in_flight = false;
}

void CircuitBreaker::record_failure() {
  std::lock_guard lock(m_mutex);
  ++m_failures;
  if (m_state == State::half_open || m_failures >= m_threshold) {
    m_state = State::open;
    m_opened_at = m_clock.now();
    m_trial_in_flight = false;
  }
}

CircuitBreaker::State CircuitBreaker::state() {
  std::lock_guard lock(m_mutex);
  return m_state;
}

int CircuitBreaker::consecutive_failures() {
  std::lock_guard lock(m_mutex);
  return m_failures;
}

}  // namespace kasava::net
