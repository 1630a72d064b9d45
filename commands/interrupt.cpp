// Ctrl-C and SIGTERM handling: see interrupt.hpp.
#include "commands/interrupt.hpp"

#include <atomic>
#include <csignal>

namespace kasava::commands {
namespace {

// A lock-free atomic may be written from a signal handler, and can be handed to code that
// polls it (the HTTP client's cancel flag).
std::atomic<bool> g_interrupted{false};
static_assert(std::atomic<bool>::is_always_lock_free);
// The first signal's number, 0 before any: the exit status says which one stopped us.
std::atomic<int> g_signal{0};
static_assert(std::atomic<int>::is_always_lock_free);

void on_signal(int signal) {
  int none = 0;
  g_signal.compare_exchange_strong(none, signal);
  g_interrupted.store(true);
}

} // namespace

void install_interrupt_handlers() {
  struct sigaction action {};
  action.sa_handler = &on_signal;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESETHAND;  // a second signal takes the default action: exit now
  sigaction(SIGINT, &action, nullptr);
  sigaction(SIGTERM, &action, nullptr);
}

bool interrupted() { return g_interrupted.load(); }

ExitStatus interrupted_status() {
  return g_signal.load() == SIGTERM ? ExitStatus::terminated : ExitStatus::interrupted;
}

const std::atomic<bool>& interrupt_flag() { return g_interrupted; }

} // namespace kasava::commands
