// The entry points of the subcommands, one file each in commands/, called by run_command
// (setup.hpp) with what the command table says they need. They throw util::Failure on
// errors (caught once in cli/) and return the exit status otherwise.
#pragma once

#include <string>
#include <vector>

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
  std::string store;    ///< --store URL: check the shared store instead ("" = KASAVA_STORE, else none)
};

/// `kasava unpublish`: a repository or one of its refs removed from the shared store.
struct UnpublishCommandOptions {
  std::string repository;  ///< org/name, as published
  std::string ref;         ///< --ref: only this ref; "" = every ref and the repository
  std::string store;       ///< --store URL; "" = KASAVA_STORE, else `store` in the user's config
};

/// index's say in its setup (Needs::writable_index): its TARGET, --rev, --rebuild, --dry-run.
SetupHooks index_setup(const IndexCommandOptions& options);
ExitStatus run_index(const IndexCommandOptions& options, Context& context, Prepared& prepared);
/// ask's say in its setup (Needs::fresh_index): no refresh with --no-refresh; its chat model
/// resolved and a search started before the refresh. `options` must outlive the setup.
SetupHooks ask_setup(const AskCommandOptions& options);
ExitStatus run_ask(const AskCommandOptions& options, Context& context, Prepared& prepared);
/// ask's search options from its command options (throws util::Failure for a bad mode).
search::SearchOptions search_options_for(const AskCommandOptions& options);
/// The `ask --json` document of a search's results (`kasava serve`'s /api/search too).
std::string results_json(const std::string& query, const std::vector<search::SearchHit>& hits);
/// status's say in its setup: with a store (--store or KASAVA_STORE), no local index.
SetupHooks status_setup(const StatusCommandOptions& options);
ExitStatus run_status(const StatusCommandOptions& options, Context& context, Prepared& prepared);
/// Serves until stdin ends; every tool call sets up its index again (setup.hpp's prepare).
ExitStatus run_mcp(const McpCommandOptions& options, Context& context);
/// verify's say in its setup: with a store (--store or KASAVA_STORE), no local index.
SetupHooks verify_setup(const VerifyCommandOptions& options);
/// Checks the index (exit 0 sound, 1 damaged); with --repair re-indexes what is wrong.
ExitStatus run_verify(const VerifyCommandOptions& options, Context& context, Prepared& prepared);
/// Removes a repository or ref from the shared store (exit 1 when it is not there).
ExitStatus run_unpublish(const UnpublishCommandOptions& options, Context& context);
/// The `status --json` document of an index (`kasava serve`'s /api/status too).
std::string status_json(Context& context, const QueryTarget& target, const store::Store& store);

/// `kasava watch`: watches the index's work tree until SIGINT/SIGTERM (core/repo/watch.hpp).
ExitStatus run_watch(Context& context, Prepared& prepared);

/// `kasava serve`: an HTTP server for the index until SIGINT/SIGTERM.
struct ServeCommandOptions {
  std::string listen = "127.0.0.1:7700";  ///< host:port ([v6]:port); port 0 picks a free one
  std::string token_file;                 ///< "" = no tokens
  bool insecure_no_auth = false;          ///< serve a non-loopback address without tokens
  bool log_queries = false;               ///< log the query string of each request
  std::vector<std::string> allowed_hosts; ///< --allow-host: names the Host header may carry
  double rate_limit = 20.0;               ///< requests per second per client; 0 = none
  std::string store;  ///< --store URL: serve this shared store ("" = KASAVA_STORE, else the local index)
};
SetupHooks serve_setup(const ServeCommandOptions& options);
ExitStatus run_serve(const ServeCommandOptions& options, Context& context, Prepared& prepared);

} // namespace kasava::commands
