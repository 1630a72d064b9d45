// A pool of objects lent to one thread at a time (kasava serve's index connections): at most
// `max_open` are made, and threads that find none free wait in arrival order. A returned
// object goes to the first waiter, never to a thread that arrives meanwhile: with a condition
// variable alone, a newcomer took what a woken waiter was about to take, and under 32 clients
// on four connections the unlucky requests waited several turns (p99 2.5 times the median).
#pragma once

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

namespace kasava::util {

template <typename T>
class LendingPool {
public:
  /// `make` makes a new object (outside the pool's lock); what it throws reaches the caller
  /// of lend, and the place is offered to the next waiter.
  LendingPool(std::size_t max_open, std::function<std::unique_ptr<T>()> make)
      : m_max_open(max_open == 0 ? 1 : max_open), m_make(std::move(make)) {}
  LendingPool(const LendingPool&) = delete;
  LendingPool& operator=(const LendingPool&) = delete;

  /// An object for the lease's lifetime; returned to the pool when the lease ends.
  class Lease {
  public:
    Lease(LendingPool& pool, std::unique_ptr<T> object) : m_pool(pool), m_object(std::move(object)) {}
    ~Lease() { m_pool.give_back(std::move(m_object)); }
    Lease(Lease&& other) noexcept : m_pool(other.m_pool), m_object(std::move(other.m_object)) {}
    Lease(const Lease&) = delete;
    Lease& operator=(const Lease&) = delete;
    Lease& operator=(Lease&&) = delete;
    T& operator*() { return *m_object; }
    T* operator->() { return m_object.get(); }

  private:
    LendingPool& m_pool;
    std::unique_ptr<T> m_object;
  };

  /// An idle object, a new one while fewer than max_open exist, else the first one returned
  /// after every thread that waited before this one has been served.
  Lease lend() {
    std::unique_lock lock(m_mutex);
    if (m_waiting.empty() && !m_idle.empty()) {
      auto object = std::move(m_idle.back());
      m_idle.pop_back();
      return Lease(*this, std::move(object));
    }
    if (!m_waiting.empty() || m_open >= m_max_open) {
      Waiter waiter;
      m_waiting.push_back(&waiter);
      waiter.ready.wait(lock, [&] { return waiter.object != nullptr || waiter.may_make; });
      if (waiter.object) return Lease(*this, std::move(waiter.object));
    }
    ++m_open;
    lock.unlock();
    try {
      return Lease(*this, m_make());
    } catch (...) {
      lock.lock();
      --m_open;
      if (!m_waiting.empty()) {  // the place is free again: the first in line makes one
        Waiter* first = m_waiting.front();
        m_waiting.pop_front();
        first->may_make = true;
        first->ready.notify_one();
      }
      throw;
    }
  }

  /// Threads waiting in lend() now.
  std::size_t waiting() const {
    const std::lock_guard lock(m_mutex);
    return m_waiting.size();
  }

private:
  /// A thread waiting in lend(): handed an object, or the right to make one.
  struct Waiter {
    std::condition_variable ready;
    std::unique_ptr<T> object;
    bool may_make = false;
  };

  void give_back(std::unique_ptr<T> object) {
    if (!object) return;
    const std::lock_guard lock(m_mutex);
    if (m_waiting.empty()) {
      m_idle.push_back(std::move(object));
      return;
    }
    Waiter* first = m_waiting.front();
    m_waiting.pop_front();
    first->object = std::move(object);
    first->ready.notify_one();
  }

  const std::size_t m_max_open;
  const std::function<std::unique_ptr<T>()> m_make;
  mutable std::mutex m_mutex;
  std::size_t m_open = 0;
  std::vector<std::unique_ptr<T>> m_idle;
  std::deque<Waiter*> m_waiting;  ///< in arrival order
};

}  // namespace kasava::util
