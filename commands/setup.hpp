// Setup before a command runs, in one place, as git's RUN_SETUP: the command table in cli/
// says what each command needs (the `Needs` column) and run_command provides it — the
// directory of -C, the index found, opened or refreshed — before the command's run function.
// A new kind of target (another store, a server) is then a change here, not in each command.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "commands/context.hpp"
#include "commands/exit_status.hpp"
#include "commands/index_lock.hpp"
#include "commands/options.hpp"
#include "commands/target.hpp"
#include "core/store/store.hpp"

namespace kasava::commands {

/// What a command needs before it runs.
enum class Needs {
  writable_index,  ///< index: the repository (TARGET, -C's URL cloned, or here) opened, and
                   ///< its index locked and opened for writing (in a dry run, neither)
  located_index,   ///< the index found (resolve_query_target); it may not exist yet
  index,           ///< found, and it exists (verify opens it itself: damage is what it checks)
  readable_index,  ///< found, exists, and opened read-only (status)
  fresh_index,     ///< found and brought up to date first (ask, mcp's search): created when
                   ///< missing; without the refresh (ask --no-refresh), as `index`
  index_per_call,  ///< mcp: nothing yet; each tool call asks prepare() for what it needs
};

/// What a command may leave between its setup hook and its run (ask: a search started early).
struct CommandState {
  virtual ~CommandState() = default;
};

/// What the setup provided.
struct Prepared {
  /// The index and its repository; for Needs::writable_index, index_path and root only.
  QueryTarget target;
  /// Needs::readable_index: the index, read-only; Needs::fresh_index without a refresh: the
  /// same, when it could be opened; Needs::writable_index: for writing (null in a dry run),
  /// rebuilt beside the old one when that is what opening it decided.
  std::unique_ptr<store::Store> store;
  std::unique_ptr<repo::Source> source;  ///< Needs::writable_index: what to index
  std::string cloned_into;               ///< Needs::writable_index: a URL's clone, else ""
  std::unique_ptr<IndexLock> lock;       ///< Needs::writable_index: held until the command ends
  std::unique_ptr<CommandState> state;   ///< what SetupHooks::before_refresh left, if anything
};

/// What `kasava index` asks of Needs::writable_index.
struct WriteRequest {
  std::string target;    ///< TARGET: a folder or a URL; "" = -C's URL, else the current folder
  std::string revision;  ///< --rev: a commit's tree; "" = the working tree
  bool rebuild = false;  ///< --rebuild: the index is built anew beside the old one
  bool dry_run = false;  ///< --dry-run: the repository only; the index is neither locked nor opened
};

/// A command's say in its setup (ask's and index's).
struct SetupHooks {
  /// What the command needs instead of its table's Needs (status --store: no index).
  std::optional<Needs> needs;
  WriteRequest write;   ///< Needs::writable_index
  bool refresh = true;  ///< Needs::fresh_index: false (ask --no-refresh) needs only Needs::index
  /// Needs::fresh_index: runs once the index is found, before it is refreshed (ask resolves its
  /// chat model there, to fail before indexing, and starts searching the index as it is).
  std::function<void(Context&, Prepared&)> before_refresh;
  /// Needs::writable_index: runs once the repository is known, before its index is locked and
  /// opened (index checks what it will publish, to fail before writing anything).
  std::function<void(Context&)> before_write;
};

/// Provides what `needs` says on the context's current folder. An MCP server calls it again
/// for every tool call (the index may have appeared or changed since).
Prepared prepare(Context& context, Needs needs, const SetupHooks& hooks = {});

/// Where -C points: a folder, or the cache clone of a URL (`kasava index URL` makes it).
struct Place {
  std::string directory;  ///< the folder to run in (for a URL: its clone, which may not exist)
  std::string url;        ///< the URL given, or "" for a folder
};
/// -C's value read as `kasava index TARGET` reads it: a URL (as repo::is_url) is its clone in
/// `<cache_dir>/repos/<host>/<path>`; anything else is a folder.
Place place_of(const std::string& value, const std::string& cache_dir);

/// Runs a command: enters -C's place (chdir, so relative paths in the other options and the
/// command's arguments are relative to it, as with git), makes the context, provides what
/// `needs` says and calls `run`; then flushes the output. Errors throw util::Failure.
ExitStatus run_command(GlobalOptions global, Needs needs, const SetupHooks& hooks,
                       const std::function<ExitStatus(Context&, Prepared&)>& run);

} // namespace kasava::commands
