// A client-side rate limit: at most `per_second` requests per second on average, with a
// burst allowance, shared by all threads that send to one endpoint.
#pragma once

#include <mutex>

#include "core/net/clock.hpp"

namespace kasava::net {

/// Generic cell rate algorithm: each request reserves the next slot of a schedule spaced
/// 1/per_second apart; up to `burst` slots may be taken ahead of time. Reservations happen
/// under a lock, sleeping outside it, so waiting threads are served in arrival order.
class RateLimiter {
public:
  /// per_second <= 0 disables the limit.
  RateLimiter(double per_second, int burst, Clock& clock = system_clock());

  /// Waits for a slot. Returns false when `cancel` became true while waiting.
  bool acquire(const std::atomic<bool>* cancel = nullptr);

private:
  Clock& m_clock;
  Clock::Duration m_interval{};
  Clock::Duration m_burst_span{};
  std::mutex m_mutex;
  Clock::TimePoint m_next{};  ///< theoretical arrival time of the next request
  bool m_started = false;
};

}  // namespace kasava::net
