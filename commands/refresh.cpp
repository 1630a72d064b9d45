// The refresh before a query: see refresh.hpp.
#include "commands/refresh.hpp"

#include <filesystem>
#include <optional>

#include "commands/index_lock.hpp"
#include "commands/open_index.hpp"
#include "commands/progress.hpp"
#include "core/index/locate.hpp"
#include "core/repo/source.hpp"
#include "core/repo/watch.hpp"

namespace kasava::commands {

namespace fs = std::filesystem;

bool refresh_index(Context& context, const QueryTarget& target) {
  if (!target.root) return true;
  // This runs before every `ask`: everything here is on its latency (see bench/README.md).
  const bool existed = fs::exists(target.index_path);
  // Another user's index, or a read-only artifact, is searched as it is: nothing of ours
  // (lock file included) is left beside it.
  if (existed && !store::Store::may_write(target.index_path)) {
    context.output.warning("not refreshing the index: '" + target.index_path +
                           "' cannot be written here");
    return false;
  }
  // While a `kasava index` writes, search what it has committed so far instead of waiting
  // for it (and then parsing the same files again).
  std::optional<IndexLock> lock;
  try {
    lock.emplace(target.index_path, LockWait::no_wait);
  } catch (const util::Failure& failure) {
    if (!existed) throw;
    context.output.warning(std::string("not refreshing the index: ") + failure.what());
    return false;
  }
  if (!lock->held()) {
    if (!existed) {
      lock.reset();
      lock.emplace(target.index_path, LockWait::wait);  // nothing to search yet: wait for it
    } else {
      return true;
    }
  }
  context.embedder();  // a bad --model is an error of its own, not a reason to skip the refresh
  // With `kasava watch` running: when nothing changed since the last full listing (and no
  // one else wrote the index), there is nothing to list. Otherwise list, and remember the
  // watcher's state asked *before* listing, so a change made meanwhile is seen next time.
  std::optional<repo::WatchState> watched;
  if (existed) {
    watched = repo::ask_watcher(target.index_path, 2000);
    const auto seen = watched ? repo::read_seen(target.index_path) : std::nullopt;
    if (seen && repo::may_skip_listing(watched, seen->first,
                                       repo::index_fingerprint(target.index_path), seen->second))
      return true;
  }
  std::unique_ptr<store::Store> store;
  try {
    store = open_index_for_writing(context, target.index_path, *target.root, ModelChange::fail);
  } catch (const ModelMismatch&) {
    throw;  // the user's to rebuild: the message says how
  } catch (const util::Failure& failure) {
    // An index that cannot be written (a read-only artifact) can still be searched.
    if (!existed) throw;
    context.output.warning(std::string("not refreshing the index: ") + failure.what());
    return false;
  }
  auto source = repo::open_source(*target.root, {});
  if (!source) {
    context.output.warning("not refreshing the index: " + source.error().message);
    return false;
  }
  // An index that exists was excluded when it was made; reading .git/info/exclude again (a
  // second repository open) would only cost time.
  if (!existed) index::exclude_from_git(*target.root);
  // A run that warned (a file it could not read) or left chunks pending (a remote model that
  // failed) is not one a watcher may vouch for: the next refresh lists the tree again.
  auto callbacks = progress_callbacks(context);
  bool warned = false;
  if (watched) {
    callbacks.warning = [&warned, warn = std::move(callbacks.warning)](const std::string& text) {
      warned = true;
      if (warn) warn(text);
    };
  }
  auto summary = index::run_index(**source, *store, index_options_for(context, *store, 0),
                                  callbacks);
  context.output.end_progress();
  if (!summary) throw util::Failure(summary.error());
  finish_index_run(std::move(store), target.index_path);
  if (watched && !warned && summary->embedding.pending == 0)
    repo::record_seen(target.index_path, *watched);
  return true;
}

} // namespace kasava::commands
