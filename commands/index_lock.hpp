// One writer per index: `kasava index` (and `verify --repair`) hold an advisory lock on
// `<index>.lock` next to the index file while they write, so a second run waits for the
// first instead of interleaving its batches with it.
#pragma once

#include <functional>
#include <string>

namespace kasava::commands {

/// Whether acquiring waits for another holder.
enum class LockWait { wait, no_wait };

/// An exclusive flock(2) on `<index path>.lock`, released when the object goes away (or the
/// process dies: the kernel drops it, so a killed `kasava index` never leaves a stale lock).
/// The lock file itself stays: deleting it would let two processes lock two different files.
class IndexLock {
public:
  /// Locks `<index_path>.lock`, creating it and its folder. With LockWait::wait, blocks until
  /// the holder is done, calling `on_wait` once first (e.g. to tell the user) and giving up
  /// when interrupted (SIGINT/SIGTERM) with util::Failure("interrupted"). With
  /// LockWait::no_wait, check held() instead. Throws util::Failure when the lock file cannot
  /// be created.
  IndexLock(const std::string& index_path, LockWait wait,
            const std::function<void()>& on_wait = {});
  ~IndexLock();
  IndexLock(const IndexLock&) = delete;
  IndexLock& operator=(const IndexLock&) = delete;

  /// True when this process holds the lock (always, after a LockWait::wait constructor).
  bool held() const { return m_held; }
  /// The lock file's path.
  const std::string& path() const { return m_path; }

private:
  std::string m_path;
  int m_fd = -1;
  bool m_held = false;
};

} // namespace kasava::commands
