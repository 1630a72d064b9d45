// The opt-in watcher (`kasava watch`): inotify on a work tree so that the refresh before a
// query can tell "nothing changed" without an lstat of every file. Coarse by design: the
// watcher only counts changes (a sequence number under an epoch that is new at each start);
// a refresh that finds the count where its last full listing left it skips the listing, and
// anything else (a change, no live watcher, a new epoch, no answer) means a full listing.
#pragma once

#include <atomic>
#include <functional>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

namespace kasava::repo {

/// The files of the watcher of the index at `index_path`, all beside it.
struct WatchFiles {
  std::string state;          ///< `<index>.watch`: the watcher's epoch and sequence
  std::string lock;           ///< `<index>.watch.lock`: flock'ed by the live watcher
  std::string seen;           ///< `<index>.watch.seen`: what the last full refresh saw
  std::string cookie_prefix;  ///< `<index>.watch-cookie-`: a refresh's question, see below
};
WatchFiles watch_files(const std::string& index_path);

/// What the watcher publishes: changes counted since it started.
struct WatchState {
  std::string epoch;           ///< unique per watcher start
  std::uint64_t sequence = 0;  ///< changes seen so far (an overflow counts as one)
  bool operator==(const WatchState&) const = default;
};
std::string format_watch_state(const WatchState& state);
/// nullopt for anything damaged or of another format.
std::optional<WatchState> parse_watch_state(std::string_view text);

/// The listing may be skipped only when a live watcher's state is the one the last full
/// listing recorded, for the same index file (`fingerprint`: its stat data).
bool may_skip_listing(const std::optional<WatchState>& current,
                      const std::optional<WatchState>& seen, std::string_view fingerprint,
                      std::string_view seen_fingerprint);

/// Where a watched folder is, for what its events mean.
enum class WatchedFolder {
  tree,      ///< a folder of the work tree
  git,       ///< `.git`: only HEAD, index, packed-refs and config change a listing
  git_info,  ///< `.git/info`: only exclude
  git_refs,  ///< `.git/refs` and below: any ref
  private_,  ///< `.kasava` or an index folder outside the tree: only cookies
};

/// What one inotify event means.
enum class EventMeaning {
  ignore,
  change,           ///< count it
  change_new_dir,   ///< count it, and watch the new folder (and what it holds)
  rescan,           ///< events were lost (IN_Q_OVERFLOW): count it, watch every folder again
  cookie,           ///< a refresh asks: publish the state, then delete the cookie
};
/// `name` is the event's file name ("" for events of the folder itself); `index_name` the
/// index file's name, whose companions (-wal, .lock, .watch…) are never changes;
/// `holds_index`: the folder is the index's.
EventMeaning classify_event(std::uint32_t mask, WatchedFolder folder, std::string_view name,
                            bool holds_index, std::string_view index_name);

/// Watches the work tree `root` for the index at `index_path` until `stop` is set:
/// publishes its state in watch_files(index_path).state, answers cookies, and holds the lock.
/// `on_ready` is called once every folder is watched. Throws util::Failure: another
/// watcher runs, the inotify limits (naming the sysctl to raise), an unreadable root.
void watch_tree(const std::string& root, const std::string& index_path,
                const std::atomic<bool>& stop, const std::function<void(std::size_t folders)>& on_ready);

/// For the refresh: the live watcher's state once it has handled every change made before
/// this call (a cookie round trip through its queue, at most `timeout_ms`), or nullopt when
/// there is no live watcher or no answer. Never throws.
std::optional<WatchState> ask_watcher(const std::string& index_path, int timeout_ms);

/// The stat data of the index file and its WAL, as text: a write by anyone changes it.
std::string index_fingerprint(const std::string& index_path);
/// The last full listing's state and fingerprint (`seen`), written atomically; read back.
void record_seen(const std::string& index_path, const WatchState& state);
std::optional<std::pair<WatchState, std::string>> read_seen(const std::string& index_path);

}  // namespace kasava::repo
