// Ctrl-C and SIGTERM: the first one asks long work (indexing) to stop at the next safe point
// (after a committed batch); a second one ends the process at once.
#pragma once

#include <atomic>

namespace kasava::commands {

/// Installs the SIGINT/SIGTERM handlers (once, at start-up).
void install_interrupt_handlers();

/// True once SIGINT or SIGTERM has arrived.
bool interrupted();

/// The flag interrupted() reads, for code that polls a cancel flag (net::HttpRequest::cancel).
const std::atomic<bool>& interrupt_flag();

} // namespace kasava::commands
