// See rate_limit.hpp.
#include "core/serve/rate_limit.hpp"

#include <algorithm>
#include <cmath>

namespace kasava::serve {

namespace {
constexpr std::size_t k_max_clients = 4096;  ///< buckets kept before full ones are forgotten
}

RateLimiter::RateLimiter(double per_second)
    : m_rate(per_second), m_capacity(std::max(1.0, per_second)) {}

long RateLimiter::acquire(const std::string& client, Clock::time_point now) {
  if (m_rate <= 0.0) return 0;
  std::lock_guard lock(m_mutex);
  if (m_buckets.size() >= k_max_clients && m_buckets.find(client) == m_buckets.end()) {
    // Forget the clients whose buckets have refilled: they are as if new.
    std::erase_if(m_buckets, [&](const auto& entry) {
      const double elapsed = std::chrono::duration<double>(now - entry.second.updated).count();
      return entry.second.tokens + elapsed * m_rate >= m_capacity;
    });
  }
  auto [it, added] = m_buckets.try_emplace(client, Bucket{m_capacity, now});
  Bucket& bucket = it->second;
  if (!added) {
    const double elapsed = std::max(0.0, std::chrono::duration<double>(now - bucket.updated).count());
    bucket.tokens = std::min(m_capacity, bucket.tokens + elapsed * m_rate);
    bucket.updated = now;
  }
  if (bucket.tokens >= 1.0) {
    bucket.tokens -= 1.0;
    return 0;
  }
  return std::max(1L, static_cast<long>(std::ceil((1.0 - bucket.tokens) / m_rate)));
}

} // namespace kasava::serve
