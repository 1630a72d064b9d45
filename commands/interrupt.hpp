// Ctrl-C and SIGTERM: the first one asks long work (indexing) to stop at the next safe point
// (after a committed batch); a second one ends the process at once.
#pragma once

#include <atomic>

#include "commands/exit_status.hpp"

namespace kasava::commands {

/// Installs the SIGINT/SIGTERM handlers (once, at start-up).
void install_interrupt_handlers();

/// True once SIGINT or SIGTERM has arrived.
bool interrupted();

/// How a command stopped by a signal exits: ExitStatus::interrupted after SIGINT,
/// ExitStatus::terminated after SIGTERM (the first signal that arrived decides).
ExitStatus interrupted_status();

/// The flag interrupted() reads, for code that polls a cancel flag (net::HttpRequest::cancel).
const std::atomic<bool>& interrupt_flag();

} // namespace kasava::commands
