// Terminal-aware output for commands: results to stdout (buffered, checked on flush),
// warnings and progress to stderr, colour only when wanted (--color, NO_COLOR,
// CLICOLOR_FORCE, TERM=dumb).
#pragma once

#include <string>
#include <string_view>

#include "commands/options.hpp"

namespace kasava::commands {

enum class Style { plain, path, line_number, symbol, kind, match, dim, score };

class Output {
public:
  explicit Output(const GlobalOptions& options);

  bool stdout_is_terminal() const { return m_stdout_tty; }
  bool stderr_is_terminal() const { return m_stderr_tty; }
  bool color() const { return m_color; }

  /// Appends to the stdout buffer (written on flush or when it grows large).
  void out(std::string_view text);
  /// Writes the buffer; returns false when stdout is gone (e.g. a closed pipe).
  bool flush();

  /// `kasava: warning: <message>` on stderr (not with --quiet).
  void warning(std::string_view message);
  /// A progress line redrawn in place on stderr; only when stderr is a terminal, not quiet.
  void progress(std::string_view line);
  /// Clears the progress line, if one is shown.
  void end_progress();
  bool shows_progress() const { return m_stderr_tty && !m_quiet; }

  /// text wrapped in the ANSI colour of style when colour is on, else text.
  std::string paint(std::string_view text, Style style) const;

private:
  bool m_stdout_tty = false;
  bool m_stderr_tty = false;
  bool m_color = false;
  bool m_quiet = false;
  bool m_progress_shown = false;
  std::string m_buffer;
};

} // namespace kasava::commands
