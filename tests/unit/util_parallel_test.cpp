// Unit tests for core/util/parallel.*: every index visited once on one thread and on several,
// the calling thread taking part, the first exception rethrown after all threads finished, the
// stop flag set on an exception and obeyed.
#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "core/util/parallel.hpp"

using namespace kasava;

namespace {

// Waits for `flag` (set by another thread) for up to a minute: the event is certain, the bound
// only keeps a broken build from hanging.
bool wait_for(const std::atomic<bool>& flag) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::minutes(1);
  while (!flag.load()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::yield();
  }
  return true;
}

}  // namespace

TEST_CASE("util::parallel_for visits every index exactly once") {
  const unsigned threads = GENERATE(1u, 2u, 4u, 16u);
  const std::size_t grain = GENERATE(std::size_t{1}, std::size_t{7}, std::size_t{256});
  const std::size_t count = GENERATE(std::size_t{0}, std::size_t{1}, std::size_t{1000});
  CAPTURE(threads, grain, count);
  std::vector<std::atomic<int>> visits(count);
  std::atomic<bool> bad_thread{false};
  util::parallel_for(
      count, threads,
      [&](unsigned thread, std::size_t i) {
        if (thread >= threads) bad_thread = true;
        ++visits[i];
      },
      nullptr, grain);
  CHECK_FALSE(bad_thread);
  for (std::size_t i = 0; i < count; ++i) {
    CAPTURE(i);
    CHECK(visits[i] == 1);
  }
}

TEST_CASE("util::parallel_for on one thread runs on the calling thread, in order") {
  const auto caller = std::this_thread::get_id();
  std::vector<std::size_t> order;
  bool elsewhere = false;
  util::parallel_for(50, 1, [&](unsigned thread, std::size_t i) {
    if (thread != 0 || std::this_thread::get_id() != caller) elsewhere = true;
    order.push_back(i);
  });
  CHECK_FALSE(elsewhere);
  REQUIRE(order.size() == 50);
  for (std::size_t i = 0; i < order.size(); ++i) CHECK(order[i] == i);
}

TEST_CASE("util::run_threads runs body 0 on the calling thread and the others elsewhere") {
  const auto caller = std::this_thread::get_id();
  std::vector<std::thread::id> ids(4);
  util::run_threads(4, [&](unsigned thread) { ids[thread] = std::this_thread::get_id(); });
  CHECK(ids[0] == caller);
  for (unsigned t = 1; t < 4; ++t) {
    CAPTURE(t);
    CHECK(ids[t] != caller);
    CHECK(ids[t] != std::thread::id());
  }
}

TEST_CASE("util::parallel_for stops taking indexes once the stop flag is set") {
  std::atomic<bool> stop{false};
  std::vector<std::size_t> visited;
  util::parallel_for(
      100, 1,
      [&](unsigned, std::size_t i) {
        visited.push_back(i);
        if (i == 10) stop = true;
      },
      &stop);
  CHECK(visited.size() == 11);
  CHECK(visited.back() == 10);
}

TEST_CASE("util::parallel_for rethrows an exception of a worker on the calling thread") {
  const unsigned threads = GENERATE(1u, 4u);
  CAPTURE(threads);
  std::atomic<int> visits{0};
  std::atomic<bool> stop{false};
  const auto run = [&] {
    util::parallel_for(
        1000, threads,
        [&](unsigned, std::size_t i) {
          ++visits;
          if (i == 0) throw std::runtime_error("item 0 failed");
        },
        &stop);
  };
  CHECK_THROWS_WITH(run(), "item 0 failed");
  CHECK(stop);
  // With one thread nothing after the failing index is visited (with more, how many the
  // others finish before they see the flag depends on timing).
  if (threads == 1) CHECK(visits == 1);
}

TEST_CASE("util::run_threads rethrows a helper's exception after the caller finished") {
  std::atomic<bool> stop{false};
  bool caller_saw_stop = false;
  bool caller_finished = false;
  const auto run = [&] {
    util::run_threads(
        2,
        [&](unsigned thread) {
          if (thread == 1) throw std::runtime_error("helper failed");
          caller_saw_stop = wait_for(stop);  // the helper's exception sets it
          caller_finished = true;
        },
        &stop);
  };
  CHECK_THROWS_WITH(run(), "helper failed");
  CHECK(caller_saw_stop);
  CHECK(caller_finished);
}

TEST_CASE("util::run_threads joins the helpers before rethrowing the caller's exception") {
  std::atomic<bool> stop{false};
  std::atomic<bool> helper_finished{false};
  bool helper_saw_stop = false;
  const auto run = [&] {
    util::run_threads(
        2,
        [&](unsigned thread) {
          if (thread == 0) throw std::runtime_error("caller failed");
          helper_saw_stop = wait_for(stop);
          helper_finished = true;
        },
        &stop);
  };
  CHECK_THROWS_WITH(run(), "caller failed");
  CHECK(helper_finished);
  CHECK(helper_saw_stop);
}

TEST_CASE("util::run_threads keeps the first exception when several threads throw") {
  std::atomic<bool> stop{false};
  const auto run = [&] {
    util::run_threads(
        2,
        [&](unsigned thread) {
          if (thread == 1) throw std::runtime_error("first");
          // The caller throws only after the helper's exception was kept (it set `stop`).
          if (wait_for(stop)) throw std::runtime_error("second");
        },
        &stop);
  };
  CHECK_THROWS_WITH(run(), "first");
}

TEST_CASE("util::run_threads without a stop flag still rethrows") {
  CHECK_THROWS_WITH(util::run_threads(3,
                                      [](unsigned thread) {
                                        if (thread == 2) throw std::logic_error("third");
                                      }),
                    "third");
}
