// Ctrl-C and SIGTERM: the first one asks long work (indexing) to stop at the next safe point
// (after a committed batch); a second one ends the process at once.
#pragma once

namespace kasava::commands {

/// Installs the SIGINT/SIGTERM handlers (once, at start-up).
void install_interrupt_handlers();

/// True once SIGINT or SIGTERM has arrived.
bool interrupted();

} // namespace kasava::commands
