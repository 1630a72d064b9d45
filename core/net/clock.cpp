// The real clock behind the Clock interface.
#include "core/net/clock.hpp"

#include <algorithm>
#include <thread>

namespace kasava::net {
namespace {

class SystemClock final : public Clock {
public:
  TimePoint now() override { return std::chrono::steady_clock::now(); }
  bool sleep_for(Duration duration, const std::atomic<bool>* cancel) override {
    const TimePoint until = now() + duration;
    for (;;) {
      if (cancel != nullptr && cancel->load(std::memory_order_relaxed)) return false;
      const TimePoint current = now();
      if (current >= until) return true;
      std::this_thread::sleep_for(
          std::min<Duration>(until - current, std::chrono::milliseconds(50)));
    }
  }
  double unix_time() override {
    return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch())
        .count();
  }
};

}  // namespace

Clock& system_clock() {
  static SystemClock clock;
  return clock;
}

}  // namespace kasava::net
