// The entry points of the subcommands, one file each in commands/. They throw util::Failure
// on errors (caught once in cli/) and return the exit status otherwise.
#pragma once

#include "commands/context.hpp"
#include "commands/exit_status.hpp"
#include "commands/options.hpp"

namespace kasava::commands {

/// `kasava verify` (declared here, not in options.hpp, to keep the command in one place).
struct VerifyCommandOptions {
  bool repair = false;  ///< --repair: re-index what is wrong, rebuild a damaged file
  bool json = false;
};

ExitStatus run_index(const IndexCommandOptions& options, Context& context);
ExitStatus run_ask(const AskCommandOptions& options, Context& context);
ExitStatus run_status(const StatusCommandOptions& options, Context& context);
ExitStatus run_mcp(const McpCommandOptions& options, Context& context);
/// Checks the index (exit 0 sound, 1 damaged); with --repair re-indexes what is wrong.
ExitStatus run_verify(const VerifyCommandOptions& options, Context& context);

} // namespace kasava::commands
