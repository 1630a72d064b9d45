// Tests of core/repo/watch.*: the state format, what each inotify event means (an overflow
// cannot be forced in a test: its meaning is checked here), the skip rule, and a real
// watcher on a thread answering a refresh's cookie after each kind of change.
#include <catch2/catch.hpp>

#include <sys/inotify.h>

#include <atomic>
#include <filesystem>
#include <functional>
#include <thread>

#include "core/repo/watch.hpp"
#include "core/util/result.hpp"
#include "support.hpp"

using namespace kasava;
using namespace kasava::repo;

TEST_CASE("watch: the state round-trips and anything damaged is refused") {
  const WatchState state{"123-456-789", 42};
  CHECK(parse_watch_state(format_watch_state(state)) == state);
  CHECK_FALSE(parse_watch_state(""));
  CHECK_FALSE(parse_watch_state("kasava-watch 1\nepoch e\nsequence -1\n"));
  CHECK_FALSE(parse_watch_state("kasava-watch 1\nepoch e\nsequence 1x\n"));
  CHECK_FALSE(parse_watch_state("kasava-watch 2\nepoch e\nsequence 1\n"));
  CHECK_FALSE(parse_watch_state("kasava-watch 1\nepoch e\nsequence 1\nextra\n"));
}

TEST_CASE("watch: the listing is skipped only for the same epoch, sequence and index file") {
  const WatchState seen{"e1", 7};
  CHECK(may_skip_listing(WatchState{"e1", 7}, seen, " 1:2:3", " 1:2:3"));
  CHECK_FALSE(may_skip_listing(WatchState{"e1", 8}, seen, " 1:2:3", " 1:2:3"));  // a change
  CHECK_FALSE(may_skip_listing(WatchState{"e2", 7}, seen, " 1:2:3", " 1:2:3"));  // restarted
  CHECK_FALSE(may_skip_listing(std::nullopt, seen, " 1:2:3", " 1:2:3"));         // no watcher
  CHECK_FALSE(may_skip_listing(WatchState{"e1", 7}, std::nullopt, " 1:2:3", ""));
  CHECK_FALSE(may_skip_listing(WatchState{"e1", 7}, seen, " 1:2:4", " 1:2:3"));  // index written
  CHECK_FALSE(may_skip_listing(WatchState{"e1", 7}, seen, "", ""));              // no index
}

TEST_CASE("watch: what each event means") {
  using F = WatchedFolder;
  using M = EventMeaning;
  CHECK(classify_event(IN_Q_OVERFLOW, F::tree, "", false, "index.db") == M::rescan);
  CHECK(classify_event(IN_MODIFY, F::tree, "main.c", false, "index.db") == M::change);
  CHECK(classify_event(IN_CREATE | IN_ISDIR, F::tree, "lib", false, "index.db") == M::change_new_dir);
  CHECK(classify_event(IN_MOVED_TO | IN_ISDIR, F::tree, "lib", false, "index.db") == M::change_new_dir);
  CHECK(classify_event(IN_DELETE | IN_ISDIR, F::tree, "lib", false, "index.db") == M::change);
  CHECK(classify_event(IN_IGNORED, F::tree, "", false, "index.db") == M::ignore);
  // The index and its companions never count, wherever the index lies; cookies are answered.
  CHECK(classify_event(IN_MODIFY, F::private_, "index.db-wal", true, "index.db") == M::ignore);
  CHECK(classify_event(IN_MODIFY, F::tree, "index.db", true, "index.db") == M::ignore);
  CHECK(classify_event(IN_MOVED_TO, F::tree, "index.db.watch", true, "index.db") == M::ignore);
  CHECK(classify_event(IN_MODIFY, F::tree, "main.c", true, "index.db") == M::change);
  CHECK(classify_event(IN_CREATE, F::private_, "index.db.watch-cookie-1-0", true, "index.db") == M::cookie);
  CHECK(classify_event(IN_DELETE, F::private_, "index.db.watch-cookie-1-0", true, "index.db") == M::ignore);
  // Of git's folder, only what changes a listing or the indexed commit.
  CHECK(classify_event(IN_MOVED_TO, F::git, "index", false, "index.db") == M::change);
  CHECK(classify_event(IN_MODIFY, F::git, "HEAD", false, "index.db") == M::change);
  CHECK(classify_event(IN_CREATE, F::git, "index.lock", false, "index.db") == M::ignore);
  CHECK(classify_event(IN_CREATE, F::git, "COMMIT_EDITMSG", false, "index.db") == M::ignore);
  CHECK(classify_event(IN_MOVED_TO, F::git_info, "exclude", false, "index.db") == M::change);
  CHECK(classify_event(IN_MOVED_TO, F::git_refs, "main", false, "index.db") == M::change);
  CHECK(classify_event(IN_CREATE, F::git_refs, "main.lock", false, "index.db") == M::ignore);
}

namespace {

/// watch_tree on a thread, stopped and joined at the end.
class WatcherThread {
public:
  WatcherThread(const std::string& root, const std::string& index_path) {
    m_thread = std::thread([this, root, index_path] {
      try {
        watch_tree(root, index_path, m_stop, [this](std::size_t) { m_ready = true; });
      } catch (const util::Failure& failure) {
        m_error = failure.what();
        m_ready = true;
      }
    });
    while (!m_ready) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  ~WatcherThread() {
    m_stop = true;
    m_thread.join();
  }
  const std::string& error() const { return m_error; }

private:
  std::atomic<bool> m_stop{false};
  std::atomic<bool> m_ready{false};
  std::string m_error;
  std::thread m_thread;
};

}  // namespace

TEST_CASE("watch: the watcher counts every change made before a refresh asks") {
  test::TempDir dir;
  const std::string root = dir.path();
  test::write(root + "/src/a.c", "int a;\n");
  test::write(root + "/.kasava/index.db", "");
  const std::string index_path = root + "/.kasava/index.db";
  CHECK_FALSE(ask_watcher(index_path, 200));  // nobody watches yet
  std::optional<WatchState> last;
  {
    WatcherThread watcher(root, index_path);
    REQUIRE(watcher.error().empty());
    last = ask_watcher(index_path, 5000);
    REQUIRE(last);
    // Nothing changed: the same state, however often asked (the cookies themselves and the
    // index's own files are not changes).
    test::write(index_path + "-wal", "x");
    CHECK(ask_watcher(index_path, 5000) == last);
    CHECK(ask_watcher(index_path, 5000) == last);

    const auto changed_after = [&](const std::function<void()>& change) {
      change();
      const auto now = ask_watcher(index_path, 5000);
      REQUIRE(now);
      const bool changed = now->epoch == last->epoch && now->sequence > last->sequence;
      last = now;
      return changed;
    };
    CHECK(changed_after([&] { test::write(root + "/src/a.c", "int b;\n"); }));
    CHECK(changed_after([&] { test::write(root + "/src/new.c", "int c;\n"); }));
    CHECK(changed_after([&] { std::filesystem::rename(root + "/src/new.c", root + "/src/old.c"); }));
    CHECK(changed_after([&] { std::filesystem::remove(root + "/src/old.c"); }));
    // A new folder, then a file in it: the folder is watched before the cookie is answered.
    CHECK(changed_after([&] { std::filesystem::create_directories(root + "/lib/deep"); }));
    CHECK(changed_after([&] { test::write(root + "/lib/deep/x.c", "int x;\n"); }));
    // A folder moved in from outside the tree, then a file in it.
    test::TempDir outside;
    test::write(outside.path() + "/moved/inner/y.c", "int y;\n");
    CHECK(changed_after([&] { std::filesystem::rename(outside.path() + "/moved", root + "/moved"); }));
    CHECK(changed_after([&] { test::write(root + "/moved/inner/y.c", "int z;\n"); }));
    CHECK(changed_after([&] { std::filesystem::remove_all(root + "/lib"); }));

    // A second watcher for the same index is refused.
    WatcherThread second(root, index_path);
    CHECK(second.error().find("another watcher") != std::string::npos);
  }
  // Stopped: no answer, so a refresh lists the tree.
  CHECK_FALSE(ask_watcher(index_path, 200));
}

TEST_CASE("watch: what the last full listing saw is read back with the index's stat data") {
  test::TempDir dir;
  const std::string index_path = dir.path() + "/index.db";
  test::write(index_path, "db");
  CHECK_FALSE(read_seen(index_path));
  record_seen(index_path, WatchState{"e", 3});
  const auto seen = read_seen(index_path);
  REQUIRE(seen);
  CHECK(seen->first == WatchState{"e", 3});
  CHECK(seen->second == index_fingerprint(index_path));
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  test::write(index_path, "db2");
  CHECK(seen->second != index_fingerprint(index_path));
  // An empty WAL (a reader's) is no write; one with frames is.
  const std::string before = index_fingerprint(index_path);
  test::write(index_path + "-wal", "");
  CHECK(index_fingerprint(index_path) == before);
  test::write(index_path + "-wal", "frames");
  CHECK(index_fingerprint(index_path) != before);
}

TEST_CASE("watch: in a linked worktree, a commit and git's index there count as changes") {
  test::TempDir dir;
  const std::string main_tree = dir.path() + "/main";
  test::write(main_tree + "/a.c", "int a;\n");
  test::git(main_tree, "init -q");
  test::git(main_tree, "add a.c");
  test::git(main_tree, "commit -q -m first");
  const std::string linked = dir.path() + "/linked";
  test::git(main_tree, "worktree add -q " + linked);
  const std::string index_path = linked + "/.kasava/index.db";
  test::write(index_path, "");
  WatcherThread watcher(linked, index_path);
  REQUIRE(watcher.error().empty());
  const auto before = ask_watcher(index_path, 5000);
  REQUIRE(before);
  test::git(linked, "commit -q --allow-empty -m second");  // HEAD's branch moves: no file changes
  const auto after_commit = ask_watcher(index_path, 5000);
  REQUIRE(after_commit);
  CHECK(after_commit->sequence > before->sequence);
  test::git(linked, "rm -q --cached a.c");  // only git's index of the linked worktree changes
  const auto after_rm = ask_watcher(index_path, 5000);
  REQUIRE(after_rm);
  CHECK(after_rm->sequence > after_commit->sequence);
}
