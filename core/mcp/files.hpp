// What read_file_range may read: a path an agent gives, resolved inside the indexed
// repository and refused when it could leave it ('..', absolute paths, symlinks pointing
// outside, .git); and the requested lines of a file's text.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "core/util/result.hpp"

namespace kasava::mcp {

/// The absolute path of the regular file `relative` names inside `root` (an existing
/// folder), after following symlinks. Errors, with the path quoted: empty, absolute, a `..`
/// component, inside `.git` or `.kasava`, missing, not a regular file, or resolving
/// outside root.
util::Result<std::string> confined_path(const std::string& root, std::string_view relative);

/// Lines [first, last] of a text, 1-based and inclusive, as read_file_range returns them.
struct LineRange {
  std::int64_t first = 0;  ///< first line returned
  std::int64_t last = 0;   ///< last line returned (first - 1 when none)
  std::int64_t total = 0;  ///< lines in the whole text
  bool truncated = false;  ///< fewer lines than asked, because of max_lines
  std::string text;        ///< the lines, each ending with '\n'
};

/// Cuts lines [first, last] (last clamped to the text's end and to first + max_lines - 1)
/// out of text. Errors when first is beyond the end or last < first.
util::Result<LineRange> line_range(std::string_view text, std::int64_t first, std::int64_t last,
                                   std::int64_t max_lines);

} // namespace kasava::mcp
