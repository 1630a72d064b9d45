// A net::Clock for tests: sleep_for advances the time at once and records the duration, so
// retries, Retry-After, rate limits and the circuit breaker are checked without waiting.
#pragma once

#include <mutex>
#include <vector>

#include "core/net/clock.hpp"

namespace kasava::test {

class ManualClock final : public net::Clock {
public:
  TimePoint now() override {
    std::lock_guard lock(m_mutex);
    return m_now;
  }
  bool sleep_for(Duration duration, const std::atomic<bool>* cancel) override {
    std::lock_guard lock(m_mutex);
    if (cancel != nullptr && cancel->load()) return false;
    m_sleeps.push_back(std::chrono::duration_cast<std::chrono::milliseconds>(duration));
    m_now += duration;
    return true;
  }
  double unix_time() override {
    std::lock_guard lock(m_mutex);
    return m_unix + std::chrono::duration<double>(m_now - TimePoint{}).count();
  }
  void advance(Duration duration) {
    std::lock_guard lock(m_mutex);
    m_now += duration;
  }
  void set_unix_time(double seconds) {
    std::lock_guard lock(m_mutex);
    m_unix = seconds - std::chrono::duration<double>(m_now - TimePoint{}).count();
  }
  std::vector<std::chrono::milliseconds> sleeps() {
    std::lock_guard lock(m_mutex);
    return m_sleeps;
  }

private:
  std::mutex m_mutex;
  TimePoint m_now{std::chrono::hours(1)};
  double m_unix = 1'700'000'000.0;
  std::vector<std::chrono::milliseconds> m_sleeps;
};

}  // namespace kasava::test
