// Ctrl-C and SIGTERM handling: see interrupt.hpp.
#include "commands/interrupt.hpp"

#include <csignal>

namespace kasava::commands {
namespace {

volatile std::sig_atomic_t g_interrupted = 0;

void on_signal(int) { g_interrupted = 1; }

} // namespace

void install_interrupt_handlers() {
  struct sigaction action {};
  action.sa_handler = &on_signal;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESETHAND;  // a second signal takes the default action: exit now
  sigaction(SIGINT, &action, nullptr);
  sigaction(SIGTERM, &action, nullptr);
}

bool interrupted() { return g_interrupted != 0; }

} // namespace kasava::commands
