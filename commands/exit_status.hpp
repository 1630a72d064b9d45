// kasava's exit codes, all in one place. Like grep: 0 found, 1 nothing found, 2 error.
#pragma once

namespace kasava::commands {

enum class ExitStatus : int {
  success = 0,    ///< the command did its work; for `ask`, results were found
  no_result = 1,  ///< `ask` found nothing (or nothing above --min-score)
  error = 2,      ///< bad input, missing index, I/O failure, …
  interrupted = 130,  ///< stopped by SIGINT (128 + SIGINT, as shells report it)
  terminated = 143,   ///< stopped by SIGTERM (128 + SIGTERM)
};

inline int exit_code(ExitStatus status) { return static_cast<int>(status); }

} // namespace kasava::commands
