// A per-client rate limit for `kasava serve`: a token bucket per client address, refilled at
// a steady rate, holding at most a second's worth (at least one request). The clock is the
// caller's (tests pass their own times).
#pragma once

#include <chrono>
#include <mutex>
#include <string>
#include <unordered_map>

namespace kasava::serve {

class RateLimiter {
public:
  using Clock = std::chrono::steady_clock;

  /// `per_second` requests a second per client; 0 means no limit.
  explicit RateLimiter(double per_second);

  /// Takes one request from `client`'s bucket at `now`: 0 when it may go on, else how many
  /// whole seconds (at least 1) until it may (for Retry-After).
  long acquire(const std::string& client, Clock::time_point now);

private:
  struct Bucket {
    double tokens = 0.0;
    Clock::time_point updated;
  };
  double m_rate;
  double m_capacity;
  std::mutex m_mutex;
  std::unordered_map<std::string, Bucket> m_buckets;
};

} // namespace kasava::serve
