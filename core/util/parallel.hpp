// Work on several threads with one policy for failures: the calling thread is one of the
// workers; the first exception of any worker is kept, the others are told to stop (through a
// flag they poll), and after every thread has joined it is rethrown on the calling thread. A
// thread that cannot be started (std::system_error) is done without: work is claimed as it
// goes, so fewer threads only take longer.
#pragma once

#include <atomic>
#include <cstddef>
#include <functional>

namespace kasava::util {

/// Runs body(t) once on each of up to `threads` threads, t = 0 on the calling thread (always
/// run, last: after the others have started) and t = 1, 2… on threads of their own, and
/// returns when all have finished. The first exception thrown by any body is rethrown here,
/// after all have finished; when it is thrown, `*stop` (if given) is set so that the other
/// bodies, which poll it, can stop early. Bodies for t ≥ 1 may not run at all when the system
/// has no thread to give (`threads` ≤ 1 runs body(0) alone, on the calling thread).
void run_threads(unsigned threads, const std::function<void(unsigned thread)>& body,
                 std::atomic<bool>* stop = nullptr);

/// Calls each(thread, i) exactly once for every i < count, on up to `threads` threads
/// (run_threads: `thread` is the worker's number, 0 for the calling thread, so that a worker can
/// use state of its own, e.g. a parser per thread), each taking the next `grain` indexes in order
/// as it finishes the last. When `*stop` becomes true (set by the caller's code, or by
/// run_threads on an exception) no further index is taken: the indexes not taken are not
/// visited. The first exception is rethrown after every thread has finished.
template <typename Each>
void parallel_for(std::size_t count, unsigned threads, Each each, std::atomic<bool>* stop = nullptr,
                  std::size_t grain = 1) {
  if (grain == 0) grain = 1;
  std::atomic<std::size_t> next{0};
  const std::size_t claims = (count + grain - 1) / grain;
  if (claims < threads) threads = static_cast<unsigned>(claims > 0 ? claims : 1);
  run_threads(
      threads,
      [&](unsigned thread) {
        for (;;) {
          const std::size_t begin = next.fetch_add(grain);
          if (begin >= count) return;
          const std::size_t end = count - begin < grain ? count : begin + grain;
          for (std::size_t i = begin; i < end; ++i) {
            if (stop != nullptr && stop->load(std::memory_order_relaxed)) return;
            each(thread, i);
          }
        }
      },
      stop);
}

}  // namespace kasava::util
