// Runs kasava in the background for fault tests (crash, concurrency): start, then kill it
// with a signal at a chosen moment, or wait for it. Header-only so the e2e target's source
// list (tests/CMakeLists.txt) needs no change.
#pragma once

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "harness.hpp"

namespace kasava::e2e {

/// A kasava child process with stdout and stderr in files; killed (SIGKILL) if still running
/// when the object goes away.
class BackgroundKasava {
public:
  BackgroundKasava(const std::vector<std::string>& args, const std::string& cwd,
                   const std::string& output_prefix)
      : m_out(output_prefix + ".out"), m_err(output_prefix + ".err") {
    std::vector<std::string> argv_storage{KASAVA_BINARY};
    argv_storage.insert(argv_storage.end(), args.begin(), args.end());
    m_started = std::chrono::steady_clock::now();
    m_pid = ::fork();
    if (m_pid == 0) {
      if (::chdir(cwd.c_str()) != 0) ::_exit(127);
      const int in = ::open("/dev/null", O_RDONLY);
      const int out = ::open(m_out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      const int err = ::open(m_err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      if (in < 0 || out < 0 || err < 0) ::_exit(127);
      ::dup2(in, 0);
      ::dup2(out, 1);
      ::dup2(err, 2);
      ::unsetenv("KASAVA_INDEX");
      ::setenv("NO_COLOR", "1", 1);
      std::vector<char*> argv;
      for (auto& arg : argv_storage) argv.push_back(arg.data());
      argv.push_back(nullptr);
      ::execv(argv[0], argv.data());
      ::_exit(127);
    }
  }
  ~BackgroundKasava() {
    if (m_pid > 0 && !m_done) {
      ::kill(m_pid, SIGKILL);
      wait();
    }
  }
  BackgroundKasava(const BackgroundKasava&) = delete;
  BackgroundKasava& operator=(const BackgroundKasava&) = delete;

  /// True while the child has not ended (reaps it when it has).
  bool running() {
    if (m_done) return false;
    int status = 0;
    if (::waitpid(m_pid, &status, WNOHANG) == m_pid) {
      finish(status);
      return false;
    }
    return true;
  }
  void signal(int number) {
    if (!m_done) ::kill(m_pid, number);
  }
  /// Waits for the end; returns the exit code, or -signal when a signal ended it.
  int wait() {
    if (!m_done) {
      int status = 0;
      while (::waitpid(m_pid, &status, 0) < 0 && errno == EINTR) {
      }
      finish(status);
    }
    return m_code;
  }
  double seconds() const { return m_seconds; }
  std::string err() const { return slurp(m_err); }
  std::string out() const { return slurp(m_out); }

private:
  void finish(int status) {
    m_done = true;
    m_code = WIFEXITED(status) ? WEXITSTATUS(status) : -WTERMSIG(status);
    m_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - m_started).count();
  }
  static std::string slurp(const std::string& path) {
    std::ifstream file(path, std::ios::binary);
    std::stringstream text;
    text << file.rdbuf();
    return text.str();
  }

  std::string m_out;
  std::string m_err;
  pid_t m_pid = -1;
  bool m_done = false;
  int m_code = -1;
  double m_seconds = 0.0;
  std::chrono::steady_clock::time_point m_started;
};

/// A fixture of `count` small Python files whose doc comments depend on `variant`, so the
/// same paths hold two different contents (0 and 1); each file defines `handler_<i>` with the
/// word "alpha" (variant 0) or "omega" (variant 1) in its doc comment, and variant 1 starts
/// with two more lines (so every result's line range differs between the variants).
inline void write_many_files(const FixtureRepo& repo, int count, int variant) {
  for (int i = 0; i < count; ++i) {
    const std::string n = std::to_string(i);
    const std::string word = variant == 0 ? "alpha" : "omega";
    repo.write("pkg" + std::to_string(i % 40) + "/module_" + n + ".py",
               std::string(variant == 0 ? "" : "import os\n\n") + "def handler_" + n + "(request):\n    \"\"\"Handles " + word + " request number " +
                   n + " for the " + word + " service.\"\"\"\n    return request.value + " + n +
                   "\n\n\nclass Worker" + n + ":\n    \"\"\"A " + word +
                   " worker.\"\"\"\n\n    def run(self):\n        return " + n + "\n");
  }
}

}  // namespace kasava::e2e
