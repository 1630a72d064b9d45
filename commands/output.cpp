// Terminal-aware output: see output.hpp.
#include "commands/output.hpp"

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <unistd.h>

#include "core/util/strings.hpp"

namespace kasava::commands {
namespace {

bool env_set(const char* name) {
  const char* value = std::getenv(name);
  return value != nullptr && *value != '\0';
}

bool decide_color(ColorChoice choice, bool stdout_tty) {
  switch (choice) {
    case ColorChoice::always: return true;
    case ColorChoice::never: return false;
    case ColorChoice::automatic: break;
  }
  if (env_set("NO_COLOR")) return false;
  if (env_set("CLICOLOR_FORCE") && std::string_view(std::getenv("CLICOLOR_FORCE")) != "0") return true;
  const char* term = std::getenv("TERM");
  if (term != nullptr && std::string_view(term) == "dumb") return false;
  return stdout_tty;
}

constexpr std::size_t k_flush_threshold = 64 * 1024;

} // namespace

Output::Output(const GlobalOptions& options)
    : m_stdout_tty(::isatty(STDOUT_FILENO) == 1),
      m_stderr_tty(::isatty(STDERR_FILENO) == 1),
      m_color(decide_color(options.color, m_stdout_tty)),
      m_quiet(options.quiet) {}

void Output::out(std::string_view text) {
  m_buffer.append(text);
  if (m_buffer.size() >= k_flush_threshold) flush();
}

bool Output::flush() {
  if (!m_buffer.empty()) {
    const std::size_t written = std::fwrite(m_buffer.data(), 1, m_buffer.size(), stdout);
    m_buffer.clear();
    if (written == 0 && errno == EPIPE) return false;
  }
  return std::fflush(stdout) == 0 && !std::ferror(stdout);
}

void Output::warning(std::string_view message) {
  if (m_quiet) return;
  end_progress();
  // Warnings quote file names and messages from elsewhere: one line, nothing a terminal obeys.
  const std::string line = util::escape_controls(message);
  std::fprintf(stderr, "kasava: warning: %s\n", line.c_str());
}

void Output::progress(std::string_view line) {
  if (!shows_progress()) return;
  const std::string shown = util::escape_controls(line);
  std::fprintf(stderr, "\r\033[K%s", shown.c_str());
  std::fflush(stderr);
  m_progress_shown = true;
}

void Output::end_progress() {
  if (!m_progress_shown) return;
  std::fputs("\r\033[K", stderr);
  std::fflush(stderr);
  m_progress_shown = false;
}

std::string Output::paint(std::string_view text, Style style) const {
  if (!m_color || style == Style::plain) return std::string(text);
  const char* code = "";
  switch (style) {
    case Style::plain: break;
    case Style::path: code = "1;35"; break;       // bold magenta, as ripgrep
    case Style::line_number: code = "32"; break;  // green
    case Style::symbol: code = "1;33"; break;     // bold yellow
    case Style::kind: code = "36"; break;         // cyan
    case Style::match: code = "1;31"; break;      // bold red
    case Style::dim: code = "2"; break;
    case Style::score: code = "2"; break;
  }
  std::string painted = "\033[";
  painted += code;
  painted += 'm';
  painted.append(text);
  painted += "\033[0m";
  return painted;
}

} // namespace kasava::commands
