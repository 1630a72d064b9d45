// Time for retries, rate limits and the circuit breaker behind an interface, so tests run
// them deterministically (a manual clock whose sleep only advances the time).
#pragma once

#include <atomic>
#include <chrono>

namespace kasava::net {

class Clock {
public:
  using Duration = std::chrono::steady_clock::duration;
  using TimePoint = std::chrono::steady_clock::time_point;
  virtual ~Clock() = default;
  virtual TimePoint now() = 0;
  /// Sleeps `duration`, returning early (false) when `cancel` becomes true.
  virtual bool sleep_for(Duration duration, const std::atomic<bool>* cancel) = 0;
  /// Wall-clock seconds since the Unix epoch (for Retry-After dates).
  virtual double unix_time() = 0;
};

/// The real clock (steady_clock; sleeps in slices so cancellation is seen within 50 ms).
Clock& system_clock();

}  // namespace kasava::net
