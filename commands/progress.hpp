// What an index run shows people: progress on a terminal while it runs, a summary line after.
#pragma once

#include <string>

#include "commands/context.hpp"
#include "core/index/indexer.hpp"

namespace kasava::commands {

/// Progress and warning callbacks that draw on context.output.
index::IndexCallbacks progress_callbacks(Context& context);

/// One-line human summary of an index run.
std::string format_summary(const index::IndexSummary& summary);

} // namespace kasava::commands
