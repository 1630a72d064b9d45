// run_threads (see parallel.hpp): starting the threads, keeping the first exception, joining.
#include "core/util/parallel.hpp"

#include <exception>
#include <mutex>
#include <thread>
#include <vector>

namespace kasava::util {

void run_threads(unsigned threads, const std::function<void(unsigned thread)>& body,
                 std::atomic<bool>* stop) {
  std::exception_ptr failure;
  std::mutex failure_mutex;
  const auto guarded = [&](unsigned thread) {
    try {
      body(thread);
    } catch (...) {
      {
        const std::lock_guard lock(failure_mutex);
        if (!failure) failure = std::current_exception();
      }
      // After the failure is kept: a thread that throws because it saw `stop` comes second.
      if (stop != nullptr) stop->store(true);
    }
  };
  std::vector<std::thread> helpers;
  if (threads > 1) {
    try {
      helpers.reserve(threads - 1);
      for (unsigned t = 1; t < threads; ++t) helpers.emplace_back(guarded, t);
    } catch (const std::exception&) {
      // No thread to be had (std::system_error: a limit on processes, say): those started and
      // this one do it all.
    }
  }
  guarded(0);
  for (std::thread& helper : helpers) helper.join();
  if (failure) std::rethrow_exception(failure);
}

}  // namespace kasava::util
