// The end-to-end harness of harness.hpp: posix_spawn with stdout and stderr in temporary files
// or pseudo-terminals drained while waiting (nothing can fill up and deadlock), a wait loop
// with a deadline, and fixture folders.
#include "tests/e2e/harness.hpp"

#include <catch2/catch.hpp>

#include <fcntl.h>
#include <poll.h>
#include <pty.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <optional>
#include <sstream>
#include <thread>

extern char** environ;

namespace kasava::e2e {

namespace fs = std::filesystem;

namespace {

constexpr const char* k_kasava_binary = KASAVA_BINARY;

/// Prefixes of environment variables that could point a child at the user's files or change
/// what it does; none of them pass into a child.
constexpr const char* k_dropped_prefixes[] = {"KASAVA_", "GIT_"};
constexpr const char* k_dropped_names[] = {"NO_COLOR",       "CLICOLOR_FORCE",  "CLICOLOR",
                                           "XDG_CACHE_HOME", "XDG_CONFIG_HOME", "HOME"};

std::string make_temp_dir(const std::string& label) {
  const char* base = std::getenv("TMPDIR");
  std::string pattern =
      std::string(base && *base ? base : "/tmp") + "/kasava-e2e-" + label + "-XXXXXX";
  std::vector<char> buffer(pattern.begin(), pattern.end());
  buffer.push_back('\0');
  if (::mkdtemp(buffer.data()) == nullptr) {
    throw std::runtime_error("mkdtemp '" + pattern + "': " + std::strerror(errno));
  }
  return fs::canonical(buffer.data()).string();
}

/// Folders shared by every child of this test run: HOME and XDG_CACHE_HOME live here so
/// nothing a test runs can read or write the user's own.
class RunFolders {
public:
  static const RunFolders& get() {
    static const RunFolders folders;
    return folders;
  }
  std::string home() const { return m_root + "/home"; }
  std::string cache() const { return m_root + "/cache"; }
  ~RunFolders() {
    std::error_code error;
    fs::remove_all(m_root, error);
  }

private:
  RunFolders() : m_root(make_temp_dir("run")) {
    fs::create_directories(home());
    fs::create_directories(cache());
  }
  std::string m_root;
};

bool dropped(const std::string& name) {
  for (const char* prefix : k_dropped_prefixes) {
    if (name.rfind(prefix, 0) == 0) return true;
  }
  for (const char* exact : k_dropped_names) {
    if (name == exact) return true;
  }
  return false;
}

std::map<std::string, std::string> child_environment(const RunOptions& options) {
  std::map<std::string, std::string> env;
  for (char** entry = environ; entry != nullptr && *entry != nullptr; ++entry) {
    const std::string text = *entry;
    const auto equals = text.find('=');
    if (equals == std::string::npos) continue;
    const std::string name = text.substr(0, equals);
    if (!dropped(name)) env[name] = text.substr(equals + 1);
  }
  const RunFolders& folders = RunFolders::get();
  env["HOME"] = folders.home();
  env["XDG_CACHE_HOME"] = folders.cache();
  env["GIT_CONFIG_NOSYSTEM"] = "1";
  env["GIT_CONFIG_GLOBAL"] = "/dev/null";
  env["LC_ALL"] = "C";
  for (const auto& [name, value] : options.env) env[name] = value;
  for (const auto& name : options.unset_env) env.erase(name);
  return env;
}

std::string slurp(int fd) {
  std::string text;
  if (::lseek(fd, 0, SEEK_SET) < 0) return text;
  char buffer[65536];
  for (;;) {
    const ssize_t count = ::read(fd, buffer, sizeof buffer);
    if (count < 0 && errno == EINTR) continue;
    if (count <= 0) break;
    text.append(buffer, static_cast<std::size_t>(count));
  }
  return text;
}

/// An anonymous temporary file for one stream of the child; closed on scope exit.
class CaptureFile {
public:
  CaptureFile() {
    std::string pattern = RunFolders::get().home() + "/../capture-XXXXXX";
    std::vector<char> buffer(pattern.begin(), pattern.end());
    buffer.push_back('\0');
    m_fd = ::mkostemp(buffer.data(), O_CLOEXEC);  // the child gets it only as stdout/stderr
    if (m_fd < 0) throw std::runtime_error(std::string("mkstemp: ") + std::strerror(errno));
    ::unlink(buffer.data());
  }
  ~CaptureFile() {
    if (m_fd >= 0) ::close(m_fd);
  }
  CaptureFile(const CaptureFile&) = delete;
  CaptureFile& operator=(const CaptureFile&) = delete;
  int fd() const { return m_fd; }

private:
  int m_fd = -1;
};

std::string command_line(const std::string& program, const std::vector<std::string>& args) {
  std::string text = program;
  for (const auto& arg : args) {
    const bool plain = !arg.empty() && arg.find_first_of(" \t\n'\"\\$`*?") == std::string::npos;
    text += ' ';
    text += plain ? arg : "'" + arg + "'";
  }
  return text;
}

/// A pseudo-terminal for one stream of the child: the child gets the secondary side, the
/// harness reads the primary side while the child runs (a terminal buffers only a few KiB).
class Terminal {
public:
  Terminal() {
    if (::openpty(&m_primary, &m_secondary, nullptr, nullptr, nullptr) != 0) {
      throw std::runtime_error(std::string("openpty: ") + std::strerror(errno));
    }
    ::fcntl(m_primary, F_SETFD, FD_CLOEXEC);
    ::fcntl(m_secondary, F_SETFD, FD_CLOEXEC);
    ::fcntl(m_primary, F_SETFL, ::fcntl(m_primary, F_GETFL) | O_NONBLOCK);
  }
  ~Terminal() {
    close_secondary();
    if (m_primary >= 0) ::close(m_primary);
  }
  Terminal(const Terminal&) = delete;
  Terminal& operator=(const Terminal&) = delete;

  int primary() const { return m_primary; }
  int secondary() const { return m_secondary; }
  void close_secondary() {
    if (m_secondary >= 0) ::close(m_secondary);
    m_secondary = -1;
  }
  /// Appends what is available now to text; false once the child side is gone (EIO).
  bool drain(std::string& text) {
    char buffer[4096];
    for (;;) {
      const ssize_t count = ::read(m_primary, buffer, sizeof buffer);
      if (count > 0) {
        text.append(buffer, static_cast<std::size_t>(count));
        continue;
      }
      if (count < 0 && errno == EINTR) continue;
      return count < 0 && errno == EAGAIN;
    }
  }

private:
  int m_primary = -1;
  int m_secondary = -1;
};

/// Output of a terminal as a program wrote it: the terminal turns "\n" into "\r\n".
std::string from_terminal(std::string text) {
  std::string plain;
  plain.reserve(text.size());
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '\r' && i + 1 < text.size() && text[i + 1] == '\n') continue;
    plain += text[i];
  }
  return plain;
}

// Waits for the child until the deadline, reading the terminals meanwhile; kills its process
// group after the deadline.
int wait_with_deadline(pid_t pid, std::chrono::steady_clock::time_point deadline, bool& timed_out,
                       const std::function<void()>& pump) {
  auto pause = std::chrono::microseconds(200);
  for (;;) {
    pump();
    int status = 0;
    const pid_t done = ::waitpid(pid, &status, WNOHANG);
    if (done == pid) return status;
    if (done < 0 && errno != EINTR)
      throw std::runtime_error(std::string("waitpid: ") + std::strerror(errno));
    if (std::chrono::steady_clock::now() >= deadline) {
      timed_out = true;
      ::kill(-pid, SIGKILL);
      ::kill(pid, SIGKILL);
      while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
      }
      return status;
    }
    std::this_thread::sleep_for(pause);
    pause = std::min(pause * 2, std::chrono::microseconds(5000));
  }
}

}  // namespace

RunOptions& RunOptions::set_env(const std::string& name, const std::string& value) {
  env[name] = value;
  return *this;
}

RunResult run_program(const std::string& program, const std::vector<std::string>& args,
                      const RunOptions& options) {
  const auto started = std::chrono::steady_clock::now();
  std::vector<std::string> argv_storage;
  argv_storage.push_back(program);
  argv_storage.insert(argv_storage.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& arg : argv_storage) argv.push_back(arg.data());
  argv.push_back(nullptr);

  std::vector<std::string> env_storage;
  for (const auto& [name, value] : child_environment(options))
    env_storage.push_back(name + "=" + value);
  std::vector<char*> envp;
  for (auto& entry : env_storage) envp.push_back(entry.data());
  envp.push_back(nullptr);

  CaptureFile out_file;
  CaptureFile err_file;
  std::optional<Terminal> out_terminal;
  std::optional<Terminal> err_terminal;
  if (options.stdout_mode == StdoutMode::terminal) out_terminal.emplace();
  if (options.stderr_terminal) err_terminal.emplace();
  int pipe_fds[2] = {-1, -1};
  if (options.stdout_mode == StdoutMode::closed_pipe ||
      options.stdout_mode == StdoutMode::first_byte_pipe) {
    if (::pipe2(pipe_fds, O_CLOEXEC) != 0) throw std::runtime_error("pipe2 failed");
  }

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  const int stdout_fd = out_terminal                                 ? out_terminal->secondary()
                        : options.stdout_mode == StdoutMode::capture ? out_file.fd()
                                                                     : pipe_fds[1];
  posix_spawn_file_actions_adddup2(&actions, stdout_fd, STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(
      &actions, err_terminal ? err_terminal->secondary() : err_file.fd(), STDERR_FILENO);
  if (!options.cwd.empty()) posix_spawn_file_actions_addchdir_np(&actions, options.cwd.c_str());

  posix_spawnattr_t attributes;
  posix_spawnattr_init(&attributes);
  // Its own process group, so a timeout kills whatever it started too; default signal
  // dispositions and an empty mask, whatever the test runner has set.
  sigset_t empty_mask;
  sigset_t default_signals;
  sigemptyset(&empty_mask);
  sigemptyset(&default_signals);
  sigaddset(&default_signals, SIGPIPE);
  sigaddset(&default_signals, SIGINT);
  sigaddset(&default_signals, SIGTERM);
  posix_spawnattr_setsigmask(&attributes, &empty_mask);
  posix_spawnattr_setsigdefault(&attributes, &default_signals);
  posix_spawnattr_setpgroup(&attributes, 0);
  posix_spawnattr_setflags(&attributes,
                           POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);

  pid_t pid = 0;
  const int spawned =
      ::posix_spawnp(&pid, program.c_str(), &actions, &attributes, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attributes);
  if (pipe_fds[1] >= 0) ::close(pipe_fds[1]);
  if (out_terminal) out_terminal->close_secondary();
  if (err_terminal) err_terminal->close_secondary();
  if (spawned == 0 && options.stdout_mode == StdoutMode::first_byte_pipe) {
    // Like `head -c1`: wait for the first byte (or the end), then go away.
    pollfd readable{pipe_fds[0], POLLIN, 0};
    const auto limit =
        std::chrono::duration_cast<std::chrono::milliseconds>(options.timeout).count();
    if (::poll(&readable, 1, static_cast<int>(limit)) == 1) {
      char byte = 0;
      while (::read(pipe_fds[0], &byte, 1) < 0 && errno == EINTR) {
      }
    }
  }
  // With closed_pipe the reader goes away before the child can write: its first write to
  // stdout fails with EPIPE; with first_byte_pipe, a later one does.
  if (pipe_fds[0] >= 0) ::close(pipe_fds[0]);
  if (spawned != 0) {
    throw std::runtime_error("starting " + command_line(program, args) + ": " +
                             std::strerror(spawned));
  }

  RunResult result;
  std::string out_text;
  std::string err_text;
  const auto pump = [&] {
    if (out_terminal) out_terminal->drain(out_text);
    if (err_terminal) err_terminal->drain(err_text);
  };
  const int status = wait_with_deadline(pid, started + options.timeout, result.timed_out, pump);
  pump();  // what the child wrote just before it ended
  if (WIFEXITED(status)) {
    result.exit_code = WEXITSTATUS(status);
  } else if (WIFSIGNALED(status)) {
    result.signal = WTERMSIG(status);
  }
  if (out_terminal) {
    result.out = from_terminal(std::move(out_text));
  } else if (options.stdout_mode == StdoutMode::capture) {
    result.out = slurp(out_file.fd());
  }
  result.err = err_terminal ? from_terminal(std::move(err_text)) : slurp(err_file.fd());
  if (result.timed_out) {
    result.err +=
        "[killed by the test harness after " + std::to_string(options.timeout.count()) + "s]";
  }
  result.seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  return result;
}

RunResult run_kasava(const std::vector<std::string>& args, const RunOptions& options) {
  RunResult result = run_program(k_kasava_binary, args, options);
  if (result.timed_out) {
    FAIL("timed out after " << options.timeout.count() << "s: " << command_line("kasava", args)
                            << "\n"
                            << describe(result));
  }
  // Death by a signal (a crash, or SIGPIPE on a closed stdout) is never what a test expects.
  if (result.signal != 0) {
    FAIL("kasava was killed by signal " << result.signal << " (" << strsignal(result.signal)
                                        << "): " << command_line("kasava", args) << "\n"
                                        << describe(result));
  }
  return result;
}

std::string describe(const RunResult& result) {
  std::ostringstream text;
  if (result.signal != 0) {
    text << "killed by signal " << result.signal;
  } else {
    text << "exit " << result.exit_code;
  }
  text << " after " << result.seconds << "s\n--- stdout ---\n"
       << result.out.substr(0, 4000) << (result.out.size() > 4000 ? "\n[…]" : "")
       << "\n--- stderr ---\n"
       << result.err.substr(0, 4000) << "\n---";
  return text.str();
}

util::JsonValue parse_json_output(const std::string& text) {
  auto parsed = util::parse_json(text);
  if (!parsed)
    FAIL("output is not one JSON document (" << parsed.error().message << "):\n" << text);
  return std::move(parsed).value();
}

bool has_ansi_escapes(const std::string& text) {
  return text.find("\x1b[") != std::string::npos;
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::size_t start = 0;
  while (start < text.size()) {
    auto end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    lines.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return lines;
}

// ---- TempDir, FixtureRepo --------------------------------------------------------------

TempDir::TempDir(const std::string& label) : m_path(make_temp_dir(label)) {}

TempDir::~TempDir() {
  std::error_code error;
  // Tests make read-only folders and files; give write permission back before removing.
  for (auto it = fs::recursive_directory_iterator(
           m_path, fs::directory_options::skip_permission_denied, error);
       !error && it != fs::recursive_directory_iterator(); it.increment(error)) {
    if (it->is_directory(error) && !it->is_symlink(error)) {
      fs::permissions(it->path(), fs::perms::owner_all, fs::perm_options::add, error);
    }
  }
  fs::permissions(m_path, fs::perms::owner_all, fs::perm_options::add, error);
  fs::remove_all(m_path, error);
}

std::vector<std::string> git_fixture_config() {
  return {"-c", "user.name=t",          "-c", "user.email=t@t",    "-c", "init.defaultBranch=main",
          "-c", "commit.gpgsign=false", "-c", "tag.gpgsign=false", "-c", "core.autocrlf=false"};
}

FixtureRepo::FixtureRepo(GitInit init) : m_dir("repo") {
  if (init == GitInit::yes) git({"init", "-q"});
}

void FixtureRepo::write(const std::string& relative, const std::string& content) const {
  const fs::path full = path(relative);
  fs::create_directories(full.parent_path());
  std::ofstream out(full, std::ios::binary | std::ios::trunc);
  out.write(content.data(), static_cast<std::streamsize>(content.size()));
  out.close();
  if (!out) FAIL("writing '" << full.string() << "' failed");
}

void FixtureRepo::append(const std::string& relative, const std::string& text) const {
  if (!exists(relative)) FAIL("appending to '" << relative << "': no such file");
  std::ofstream out(path(relative), std::ios::binary | std::ios::app);
  out.write(text.data(), static_cast<std::streamsize>(text.size()));
  out.close();
  if (!out) FAIL("appending to '" << relative << "' failed");
}

void FixtureRepo::remove(const std::string& relative) const {
  std::error_code error;
  fs::remove_all(path(relative), error);
  if (error) FAIL("removing '" << relative << "': " << error.message());
}

std::string FixtureRepo::read(const std::string& relative) const {
  std::ifstream in(path(relative), std::ios::binary);
  if (!in) FAIL("reading '" << relative << "' failed");
  std::ostringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

bool FixtureRepo::exists(const std::string& relative) const {
  std::error_code error;
  return fs::exists(fs::symlink_status(path(relative), error));
}

void FixtureRepo::symlink(const std::string& target, const std::string& relative) const {
  const fs::path full = path(relative);
  fs::create_directories(full.parent_path());
  if (::symlink(target.c_str(), full.c_str()) != 0) {
    FAIL("symlink '" << relative << "' -> '" << target << "': " << std::strerror(errno));
  }
}

RunResult FixtureRepo::git_result(const std::vector<std::string>& args) const {
  std::vector<std::string> full = git_fixture_config();
  full.insert(full.end(), args.begin(), args.end());
  RunOptions options;
  options.cwd = root();
  return run_program("git", full, options);
}

std::string FixtureRepo::git(const std::vector<std::string>& args) const {
  RunResult result = git_result(args);
  if (result.exit_code != 0 || result.timed_out) {
    FAIL(command_line("git", args) << " failed\n" << describe(result));
  }
  return result.out;
}

std::string FixtureRepo::commit_all(const std::string& message) const {
  git({"add", "-A"});
  git({"commit", "-q", "--no-verify", "-m", message});
  std::string id = git({"rev-parse", "HEAD"});
  while (!id.empty() && (id.back() == '\n' || id.back() == '\r')) id.pop_back();
  return id;
}

RunResult FixtureRepo::kasava(const std::vector<std::string>& args, RunOptions options) const {
  if (options.cwd.empty()) options.cwd = root();
  return run_kasava(args, options);
}

// ---- The sample project ----------------------------------------------------------------

namespace {

struct SampleFile {
  const char* path;
  const char* content;
};

const SampleFile k_sample_files[] = {
    {"src/billing/invoice.py", R"("""Invoice helpers for the billing service."""


def compute_invoice_total(line_items, tax_rate):
    """Sum the line items of an invoice and apply the regional tax rate."""
    subtotal = sum(item.price * item.quantity for item in line_items)
    return subtotal * (1 + tax_rate)


class InvoicePrinter:
    """Renders invoices as plain text for the mail gateway."""

    def render(self, invoice):
        return "Invoice %s" % invoice.number
)"},
    {"src/cli.py", R"(import sys


def parse_arguments(argv):
    """Parse the command-line arguments of the tool."""
    return argv[1:]


if __name__ == "__main__":
    print(parse_arguments(sys.argv))
)"},
    {"internal/config/config.go", R"(package config

import "os"

// Config holds the server settings read at start-up.
type Config struct {
	Port int
	Host string
}

// parseConfig reads the YAML configuration file and fills in default values.
func parseConfig(path string) (*Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	_ = data
	return &Config{Port: 8080, Host: "localhost"}, nil
}

// loadDefaults returns the settings used when no file exists.
func loadDefaults() *Config {
	return &Config{Port: 80}
}
)"},
    {"web/src/retry.ts", R"(/**
 * Retries a failing network request with exponential backoff and random jitter.
 */
export async function retryWithBackoff<T>(operation: () => Promise<T>, attempts: number): Promise<T> {
  let delay = 100;
  for (let i = 0; i < attempts - 1; i++) {
    try {
      return await operation();
    } catch (error) {
      await new Promise((resolve) => setTimeout(resolve, delay + Math.random() * delay));
      delay *= 2;
    }
  }
  return operation();
}
)"},
    {"src/lib.rs",
     R"(/// Compresses a byte buffer with run-length encoding before it is written to disk.
pub fn run_length_encode(input: &[u8]) -> Vec<u8> {
    let mut output = Vec::new();
    let mut i = 0;
    while i < input.len() {
        let byte = input[i];
        let mut run = 1;
        while i + run < input.len() && input[i + run] == byte && run < 255 {
            run += 1;
        }
        output.push(run as u8);
        output.push(byte);
        i += run;
    }
    output
}
)"},
    {"src/main/java/com/example/UserRepository.java", R"(package com.example;

import java.util.HashMap;
import java.util.Map;

/** Stores user accounts in memory, keyed by email address. */
public class UserRepository {
    private final Map<String, User> users = new HashMap<>();

    /** Finds a user account by its email address, ignoring letter case. */
    public User findUserByEmail(String email) {
        return users.get(email.toLowerCase());
    }
}
)"},
    {"native/checksum.c", R"(#include <stddef.h>

/* Computes the CRC-32 checksum of a memory block, as zip archives use it. */
unsigned int crc32_checksum(const unsigned char *data, size_t length) {
    unsigned int crc = 0xFFFFFFFFu;
    for (size_t i = 0; i < length; ++i) {
        crc ^= data[i];
        for (int bit = 0; bit < 8; ++bit) {
            crc = (crc >> 1) ^ (0xEDB88320u & (0u - (crc & 1u)));
        }
    }
    return ~crc;
}
)"},
    {"docs/deploy.md", R"(# Deployment

To deploy the service to production, build the container image, push it to the
registry and start the rollout script with the canary flag.

## Rollback

When the canary fails its health checks, the rollback script restores the previous release.
)"},
};

}  // namespace

const std::vector<SampleDefinition>& sample_definitions() {
  static const std::vector<SampleDefinition> definitions = {
      {"python", "src/billing/invoice.py", "compute_invoice_total",
       "sum the line items of an invoice and apply the tax rate",
       "subtotal = sum(item.price * item.quantity for item in line_items)"},
      {"go", "internal/config/config.go", "parseConfig",
       "read the YAML configuration file with default values", "os.ReadFile(path)"},
      {"typescript", "web/src/retry.ts", "retryWithBackoff",
       "retry a failing network request with exponential backoff and jitter", "delay *= 2;"},
      {"rust", "src/lib.rs", "run_length_encode", "compress a byte buffer with run-length encoding",
       "output.push(run as u8);"},
      {"java", "src/main/java/com/example/UserRepository.java", "findUserByEmail",
       "find a user account by email address ignoring letter case",
       "return users.get(email.toLowerCase());"},
      {"c", "native/checksum.c", "crc32_checksum",
       "CRC-32 checksum of a memory block for zip archives", "crc ^= data[i];"},
      {"markdown", "docs/deploy.md", "", "deploy to production with the container image rollout",
       "registry and start the rollout script with the canary flag."},
  };
  return definitions;
}

void write_sample_project(const FixtureRepo& repo) {
  for (const auto& file : k_sample_files) repo.write(file.path, file.content);
}

std::size_t sample_file_count() {
  return std::size(k_sample_files);
}

void check_ask_schema(const util::JsonValue& document, const std::string& query,
                      const FixtureRepo* repo) {
  INFO("ask --json output: " << document.dump());
  REQUIRE(document.is_object());
  REQUIRE(document["query"].is_string());
  CHECK(document["query"].as_string() == query);
  REQUIRE(document["results"].is_array());
  std::int64_t expected_rank = 1;
  for (const auto& result : document["results"].as_array()) {
    INFO("result: " << result.dump());
    REQUIRE(result.is_object());
    for (const char* key : {"path", "language", "kind", "symbol", "snippet"}) {
      INFO("key: " << key);
      CHECK(result[key].is_string());
    }
    for (const char* key : {"rank", "start_line", "end_line"}) {
      INFO("key: " << key);
      CHECK(result[key].get_integer().has_value());
    }
    REQUIRE(result["score"].is_number());
    CHECK(result["rank"].get_integer() == expected_rank++);
    const double score = result["score"].as_number();
    CHECK(score > 0.0);
    CHECK(score <= 1.0);
    CHECK_FALSE(result["kind"].as_string().empty());

    const std::string& path = result["path"].as_string();
    CHECK_FALSE(path.empty());
    CHECK(path.front() != '/');
    CHECK(path.find('\\') == std::string::npos);
    CHECK(path.find("./") != 0);
    CHECK(path.rfind(".kasava/", 0) != 0);
    const std::int64_t start = result["start_line"].get_integer().value_or(0);
    const std::int64_t end = result["end_line"].get_integer().value_or(0);
    CHECK(start >= 1);
    CHECK(end >= start);
    // The snippet is the text of the range: never more lines than the range holds.
    const std::size_t snippet_lines = lines_of(result["snippet"].as_string()).size();
    CHECK(snippet_lines <= static_cast<std::size_t>(end - start + 1));
    if (repo != nullptr && repo->exists(path)) {
      const std::size_t file_lines = lines_of(repo->read(path)).size();
      CHECK(static_cast<std::size_t>(end) <= file_lines);
    } else if (repo != nullptr) {
      FAIL_CHECK("result path '" << path << "' does not exist in the repository");
    }
  }
}

std::vector<std::string> result_paths(const util::JsonValue& document) {
  std::vector<std::string> paths;
  for (const auto& result : document["results"].as_array())
    paths.push_back(result["path"].as_string());
  return paths;
}

}  // namespace kasava::e2e
