// The entry points of the subcommands, one file each in commands/. They throw util::Failure
// on errors (caught once in cli/) and return the exit status otherwise.
#pragma once

#include "commands/context.hpp"
#include "commands/exit_status.hpp"
#include "commands/options.hpp"

namespace kasava::commands {

ExitStatus run_index(const IndexCommandOptions& options, Context& context);
ExitStatus run_ask(const AskCommandOptions& options, Context& context);
ExitStatus run_status(const StatusCommandOptions& options, Context& context);

} // namespace kasava::commands
