// Unit tests for core/util/lending_pool.hpp: no more objects than max_open are made, idle ones
// are reused, waiting threads are served in arrival order and before a thread that arrives
// after them, and a failed make neither leaks a place nor strands the threads waiting.
#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <mutex>
#include <memory>
#include <stdexcept>
#include <thread>
#include <vector>

#include "core/util/lending_pool.hpp"

using namespace kasava;

namespace {

// Waits until `done()` holds (another thread's progress) for up to a minute: the event is
// certain, the bound only keeps a broken build from hanging.
template <typename Done>
bool wait_until(Done done) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::minutes(1);
  while (!done()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return true;
}

}  // namespace

TEST_CASE("util::LendingPool makes at most max_open objects and reuses idle ones") {
  std::atomic<int> made{0};
  util::LendingPool<int> pool(2, [&] { return std::make_unique<int>(++made); });
  {
    auto first = pool.lend();
    auto second = pool.lend();
    CHECK(*first == 1);
    CHECK(*second == 2);
  }
  auto again = pool.lend();
  CHECK((*again == 1 || *again == 2));
  CHECK(made == 2);
}

TEST_CASE("util::LendingPool serves waiting threads in arrival order") {
  util::LendingPool<int> pool(1, [] { return std::make_unique<int>(7); });
  std::mutex order_mutex;
  std::vector<int> order;
  std::vector<std::thread> threads;
  {
    auto held = pool.lend();
    for (int number = 0; number < 4; ++number) {
      threads.emplace_back([&, number] {
        auto lease = pool.lend();
        const std::lock_guard lock(order_mutex);
        order.push_back(number);
      });
      // The next thread starts only once this one waits: arrival order is 0, 1, 2, 3.
      REQUIRE(wait_until([&] { return pool.waiting() == static_cast<std::size_t>(number + 1); }));
    }
  }
  for (auto& thread : threads) thread.join();
  CHECK(order == std::vector<int>{0, 1, 2, 3});
}

TEST_CASE("util::LendingPool gives a returned object to the first waiter, not to a newcomer") {
  util::LendingPool<int> pool(1, [] { return std::make_unique<int>(7); });
  std::atomic<bool> waiter_served{false};
  std::atomic<bool> release_waiter{false};
  using Lease = util::LendingPool<int>::Lease;
  std::unique_ptr<Lease> held(new Lease(pool.lend()));
  std::atomic<bool> waiter_released{false};  // checked on this thread: Catch2 asserts on one
  std::thread waiter([&] {
    auto lease = pool.lend();
    waiter_served = true;
    waiter_released = wait_until([&] { return release_waiter.load(); });
  });
  REQUIRE(wait_until([&] { return pool.waiting() == 1; }));
  held.reset();  // returned while the waiter waits
  // This thread now arrives after the waiter: it must wait for the waiter's turn to end.
  std::atomic<bool> newcomer_served{false};
  std::thread newcomer([&] {
    auto lease = pool.lend();
    newcomer_served = true;
  });
  REQUIRE(wait_until([&] { return waiter_served.load(); }));
  REQUIRE(wait_until([&] { return pool.waiting() == 1; }));
  CHECK_FALSE(newcomer_served);
  release_waiter = true;
  waiter.join();
  newcomer.join();
  CHECK(waiter_released);
  CHECK(newcomer_served);
}

TEST_CASE("util::LendingPool frees the place of a failed make for the next waiter") {
  std::atomic<int> attempts{0};
  std::atomic<bool> fail_now{false};
  std::atomic<bool> failed_on_cue{false};  // checked on this thread: Catch2 asserts on one
  util::LendingPool<int> pool(1, [&]() -> std::unique_ptr<int> {
    if (++attempts == 1) {
      failed_on_cue = wait_until([&] { return fail_now.load(); });
      throw std::runtime_error("cannot open");
    }
    return std::make_unique<int>(attempts.load());
  });
  std::atomic<bool> first_failed{false};
  std::thread first([&] {
    try {
      auto lease = pool.lend();
    } catch (const std::runtime_error&) {
      first_failed = true;
    }
  });
  REQUIRE(wait_until([&] { return attempts.load() == 1; }));  // the only place is being made
  std::atomic<int> second_got{0};
  std::thread second([&] {
    auto lease = pool.lend();
    second_got = *lease;
  });
  REQUIRE(wait_until([&] { return pool.waiting() == 1; }));
  fail_now = true;
  first.join();
  second.join();
  CHECK(failed_on_cue);
  CHECK(first_failed);
  CHECK(second_got == 2);  // made by the waiter once the failed attempt gave the place up
}
