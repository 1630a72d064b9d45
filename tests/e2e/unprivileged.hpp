// Running kasava as a user who may not write the fixtures: as root (CI), through setpriv as
// nobody (uid/gid 65534), whom permissions stop; as anyone else, as that user, whom they stop
// already. Fixture folders (0700 from mkdtemp) must be opened to others for nobody to read them.
#pragma once

#include <unistd.h>

#include <filesystem>
#include <string>
#include <vector>

#include "tests/e2e/harness.hpp"

namespace kasava::e2e {

/// True when the tests run as root: then unprivileged runs go through setpriv.
inline bool running_as_root() { return ::geteuid() == 0; }

/// Lets every user read `path` and, for folders, enter them (and everything below when
/// `recursive`): nobody must read the fixtures of a test run as root.
inline void open_to_others(const std::string& path, bool recursive = true) {
  namespace fs = std::filesystem;
  const auto readable = fs::perms::others_read | fs::perms::group_read;
  const auto enterable = fs::perms::others_exec | fs::perms::group_exec;
  fs::permissions(path, readable | (fs::is_directory(path) ? enterable : fs::perms::none),
                  fs::perm_options::add);
  if (!recursive || !fs::is_directory(path)) return;
  for (const auto& entry : fs::recursive_directory_iterator(path)) {
    if (entry.is_symlink()) continue;
    fs::permissions(entry.path(), readable | (entry.is_directory() ? enterable : fs::perms::none),
                    fs::perm_options::add);
  }
}

/// A HOME (and cache) the unprivileged user may write, for the duration of a test.
class UnprivilegedHome {
public:
  UnprivilegedHome() : m_dir("home") {
    std::filesystem::permissions(m_dir.path(), std::filesystem::perms::all);
  }
  /// Options whose HOME and XDG folders are here.
  RunOptions options(RunOptions base = {}) const {
    base.set_env("HOME", m_dir.path());
    base.set_env("XDG_CACHE_HOME", m_dir / "cache");
    base.set_env("XDG_CONFIG_HOME", m_dir / "config");
    return base;
  }

private:
  TempDir m_dir;
};

/// Runs kasava as an unprivileged user (see the top of the file), with the HOME of `home`;
/// fails the test when it times out or dies by a signal, as run_kasava does.
inline RunResult run_kasava_unprivileged(const UnprivilegedHome& home,
                                         const std::vector<std::string>& args,
                                         const RunOptions& options = {}) {
  if (!running_as_root()) return run_kasava(args, home.options(options));
  std::vector<std::string> command = {"--reuid=65534", "--regid=65534", "--clear-groups",
                                      KASAVA_BINARY};
  command.insert(command.end(), args.begin(), args.end());
  RunResult result = run_program("setpriv", command, home.options(options));
  INFO(describe(result));
  REQUIRE_FALSE(result.timed_out);
  REQUIRE(result.signal == 0);
  return result;
}

/// An unprivileged user with a HOME of their own running kasava from `cwd` (see
/// run_kasava_unprivileged).
class UnprivilegedReader {
public:
  explicit UnprivilegedReader(const std::string& cwd) { m_options.cwd = cwd; }
  RunResult run(const std::vector<std::string>& args) const {
    return run_kasava_unprivileged(m_home, args, m_options);
  }

private:
  UnprivilegedHome m_home;
  RunOptions m_options;
};

}  // namespace kasava::e2e
