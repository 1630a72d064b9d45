// The entry points of the subcommands, one file each in commands/, called by run_command
// (setup.hpp) with what the command table says they need. They throw util::Failure on
// errors (caught once in cli/) and return the exit status otherwise.
#pragma once

#include "commands/context.hpp"
#include "commands/embedder_setup.hpp"
#include "commands/exit_status.hpp"
#include "commands/open_index.hpp"
#include "commands/options.hpp"
#include "commands/progress.hpp"
#include "commands/refresh.hpp"
#include "commands/setup.hpp"
#include "commands/target.hpp"

namespace kasava::commands {

/// `kasava verify` (declared here, not in options.hpp, to keep the command in one place).
struct VerifyCommandOptions {
  bool repair = false;  ///< --repair: re-index what is wrong, rebuild a damaged file
  bool json = false;
};

/// index's say in its setup (Needs::writable_index): its TARGET, --rev, --rebuild, --dry-run.
SetupHooks index_setup(const IndexCommandOptions& options);
ExitStatus run_index(const IndexCommandOptions& options, Context& context, Prepared& prepared);
/// ask's say in its setup (Needs::fresh_index): no refresh with --no-refresh; its chat model
/// resolved and a search started before the refresh. `options` must outlive the setup.
SetupHooks ask_setup(const AskCommandOptions& options);
ExitStatus run_ask(const AskCommandOptions& options, Context& context, Prepared& prepared);
/// status's say in its setup: with a store (--store or KASAVA_STORE), no local index.
SetupHooks status_setup(const StatusCommandOptions& options);
ExitStatus run_status(const StatusCommandOptions& options, Context& context, Prepared& prepared);
/// Serves until stdin ends; every tool call sets up its index again (setup.hpp's prepare).
ExitStatus run_mcp(const McpCommandOptions& options, Context& context);
/// Checks the index (exit 0 sound, 1 damaged); with --repair re-indexes what is wrong.
ExitStatus run_verify(const VerifyCommandOptions& options, Context& context, Prepared& prepared);

} // namespace kasava::commands
