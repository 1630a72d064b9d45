// The client-side rate limiter (see rate_limiter.hpp for the algorithm).
#include "core/net/rate_limiter.hpp"

#include <algorithm>

namespace kasava::net {

RateLimiter::RateLimiter(double per_second, int burst, Clock& clock) : m_clock(clock) {
  if (per_second > 0) {
    m_interval = std::chrono::duration_cast<Clock::Duration>(
        std::chrono::duration<double>(1.0 / per_second));
    m_burst_span = m_interval * std::max(0, burst - 1);
  }
}

bool RateLimiter::acquire(const std::atomic<bool>* cancel) {
  if (m_interval == Clock::Duration::zero()) return true;
  Clock::Duration wait{};
  {
    std::lock_guard lock(m_mutex);
    const Clock::TimePoint now = m_clock.now();
    if (!m_started || m_next < now) {
      m_next = now;  // idle long enough: the whole burst is available again
      m_started = true;
    }
    const Clock::TimePoint earliest = m_next - m_burst_span;
    wait = earliest > now ? earliest - now : Clock::Duration::zero();
    m_next += m_interval;
  }
  if (wait > Clock::Duration::zero()) return m_clock.sleep_for(wait, cancel);
  return true;
}

}  // namespace kasava::net
