// The end-to-end test harness: runs the built kasava binary (and git) as a child process in a
// controlled environment, and builds fixture repositories in temporary folders.
#pragma once

#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "core/util/json_value.hpp"

/// Integers read from JSON (util::JsonValue::get_integer) print as numbers in failed checks.
template <>
struct Catch::StringMaker<std::optional<std::int64_t>> {
  static std::string convert(const std::optional<std::int64_t>& value) {
    return value ? std::to_string(*value) : std::string("(none)");
  }
};

namespace kasava::e2e {

/// What a child process did.
struct RunResult {
  int exit_code = -1;      ///< exit status, or -1 when killed by a signal
  int signal = 0;          ///< the signal that ended it, 0 when it exited
  bool timed_out = false;  ///< killed by the harness after RunOptions::timeout
  std::string out;         ///< everything it wrote to stdout
  std::string err;         ///< everything it wrote to stderr
  double seconds = 0.0;    ///< wall time
};

/// How stdout of the child is connected.
enum class StdoutMode {
  capture,          ///< a temporary file, read after the child ends
  closed_pipe,      ///< a pipe whose read end is closed before the child writes (EPIPE)
  first_byte_pipe,  ///< a pipe read for one byte, then closed (like `| head -c1`)
  terminal,         ///< a pseudo-terminal (isatty is true), read into RunResult::out
};

struct RunOptions {
  std::string cwd;                         ///< "" = the test's current directory
  std::map<std::string, std::string> env;  ///< variables to set (after the defaults)
  std::vector<std::string> unset_env;      ///< variables to remove (after the defaults)
  std::chrono::seconds timeout{60};        ///< the child is killed after this
  StdoutMode stdout_mode = StdoutMode::capture;
  bool stderr_terminal = false;  ///< stderr on a pseudo-terminal, read into err

  /// Sets one variable for the child (out of line: GCC 12 warns falsely on the inline form).
  RunOptions& set_env(const std::string& name, const std::string& value);
};

/// Runs `program` (a path, or a name looked up in PATH) with `args`, without a shell. The
/// child starts from the test's environment, minus anything that could reach the user's
/// files or change kasava's behaviour (NO_COLOR, CLICOLOR_FORCE, KASAVA_*, GIT_*), with
/// HOME and XDG_CACHE_HOME in a temporary folder of this test run, and stdin from /dev/null.
/// A child that outlives the timeout is killed with its process group and the result says
/// so (timed_out); the caller decides what that means.
RunResult run_program(const std::string& program, const std::vector<std::string>& args,
                      const RunOptions& options = {});

/// Runs the kasava binary under test (KASAVA_BINARY) like run_program, and fails the test
/// when it times out or dies by a signal (a crash is never what a test expects).
RunResult run_kasava(const std::vector<std::string>& args, const RunOptions& options = {});

/// A multi-line description of a result (command, exit, stdout, stderr) for test messages.
std::string describe(const RunResult& result);

/// Parses stdout that must be one JSON document; fails the current test otherwise.
util::JsonValue parse_json_output(const std::string& text);

/// True when text contains an ANSI escape sequence (ESC '[').
bool has_ansi_escapes(const std::string& text);

/// Lines of text without their '\n' (a final line without one counts).
std::vector<std::string> lines_of(const std::string& text);

/// A unique temporary folder, removed with everything in it when the object goes away.
class TempDir {
public:
  explicit TempDir(const std::string& label = "tmp");
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  /// Absolute, symlink-free path of the folder.
  const std::string& path() const { return m_path; }
  /// path()/relative
  std::string operator/(const std::string& relative) const { return m_path + "/" + relative; }

private:
  std::string m_path;
};

/// Whether a FixtureRepo starts as a git repository.
enum class GitInit { yes, no };

/// A repository (or plain folder) made by a test in its own temporary folder. Git runs with a
/// fixed identity and config so the fixture does not depend on the user's settings.
class FixtureRepo {
public:
  explicit FixtureRepo(GitInit init = GitInit::yes);

  /// Absolute path of the root.
  const std::string& root() const { return m_dir.path(); }
  /// root()/relative
  std::string path(const std::string& relative) const { return m_dir / relative; }

  /// Writes a file (creating folders on the way), replacing what was there.
  void write(const std::string& relative, const std::string& content) const;
  /// Appends text to a file (which must exist).
  void append(const std::string& relative, const std::string& text) const;
  /// Deletes a file or folder.
  void remove(const std::string& relative) const;
  /// The content of a file; fails the test when it cannot be read.
  std::string read(const std::string& relative) const;
  bool exists(const std::string& relative) const;
  /// Creates a symbolic link at `relative` pointing to `target` (as given, not resolved).
  void symlink(const std::string& target, const std::string& relative) const;

  /// Runs git in the root with a fixed identity; fails the test unless it exits 0. Returns
  /// its stdout.
  std::string git(const std::vector<std::string>& args) const;
  /// Runs git in the root and returns the result whatever it is.
  RunResult git_result(const std::vector<std::string>& args) const;
  /// `git add -A && git commit -m message`; returns the new commit id.
  std::string commit_all(const std::string& message) const;

  /// Runs kasava in the root (or options.cwd when set).
  RunResult kasava(const std::vector<std::string>& args, RunOptions options = {}) const;

  /// root()/.kasava/index.db
  std::string index_path() const { return path(".kasava/index.db"); }

private:
  TempDir m_dir;
};

/// The fixed options git runs with in fixtures (identity, branch name, no signing).
std::vector<std::string> git_fixture_config();

/// A definition in the sample project that a query made of words from its doc comment
/// should find first.
struct SampleDefinition {
  const char* language;   ///< language name as kasava reports it
  const char* path;       ///< file, relative to the root
  const char* symbol;     ///< the definition's name ("" for prose)
  const char* query;      ///< words from its doc comment
  const char* code_line;  ///< a line of its body, expected in the snippet
};

/// One definition per language of write_sample_project().
const std::vector<SampleDefinition>& sample_definitions();

/// Writes a small project with files in Python, Go, TypeScript, Rust, Java, C and Markdown,
/// each with distinctive names and doc comments (see sample_definitions()).
void write_sample_project(const FixtureRepo& repo);

/// Number of files write_sample_project() writes.
std::size_t sample_file_count();

/// Checks a `kasava ask --json` document against the schema of PRODUCT.md (query, results
/// with rank, path, start_line, end_line, language, kind, symbol, score, snippet). With a
/// repo, also that every path exists there and every line range lies within its file.
void check_ask_schema(const util::JsonValue& document, const std::string& query,
                      const FixtureRepo* repo);

/// The paths of the results of an ask --json document, in rank order.
std::vector<std::string> result_paths(const util::JsonValue& document);

}  // namespace kasava::e2e
