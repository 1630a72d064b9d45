// Confined paths and line ranges for read_file_range: see files.hpp. The check is done on the
// resolved path (std::filesystem::canonical follows every symlink), so a link inside the
// repository that points outside is refused like a plain '..'.
#include "core/mcp/files.hpp"

#include <algorithm>
#include <filesystem>

#include "core/util/strings.hpp"

namespace kasava::mcp {

namespace fs = std::filesystem;

namespace {

util::Error refuse(std::string_view relative, std::string_view reason) {
  std::string message = "refusing ";
  message += util::quoted(relative);
  message += ": ";
  message.append(reason);
  return util::Error{message};
}

// Whether `path` is `root` or lies below it (both canonical).
bool inside(const fs::path& root, const fs::path& path) {
  auto [root_end, path_it] = std::mismatch(root.begin(), root.end(), path.begin(), path.end());
  return root_end == root.end();
}

} // namespace

util::Result<std::string> confined_path(const std::string& root, std::string_view relative) {
  if (util::trim(relative).empty()) return refuse(relative, "the path is empty");
  const fs::path given{std::string(relative)};
  if (given.is_absolute() || relative.front() == '/' || relative.front() == '~') {
    return refuse(relative, "absolute paths are not allowed; give a path relative to the repository root");
  }
  bool first = true;
  for (const auto& part : given) {
    if (part == "..") return refuse(relative, "'..' is not allowed; the path must stay inside the repository");
    if (first && (part == ".git" || part == ".kasava")) {
      return refuse(relative, util::quoted(part.string()) + " is not part of the indexed code");
    }
    if (part != ".") first = false;
  }
  std::error_code error;
  const fs::path canonical_root = fs::canonical(root, error);
  if (error) return util::Error{"repository root " + util::quoted(root) + ": " + error.message()};
  const fs::path resolved = fs::canonical(canonical_root / given, error);
  if (error) return util::Error{util::quoted(relative) + ": no such file in the repository"};
  if (!inside(canonical_root, resolved)) {
    return refuse(relative, "it resolves outside the repository (a symlink?)");
  }
  if (!fs::is_regular_file(resolved, error)) {
    return util::Error{util::quoted(relative) + ": not a regular file"};
  }
  return resolved.string();
}

util::Result<LineRange> line_range(std::string_view text, std::int64_t first, std::int64_t last,
                                   std::int64_t max_lines) {
  const auto starts = util::line_starts(text);
  const auto total = static_cast<std::int64_t>(starts.size());  // a last line without '\n' counts
  if (first < 1) return util::Error{"start_line must be 1 or more"};
  if (last < first) return util::Error{"end_line " + std::to_string(last) + " is before start_line " + std::to_string(first)};
  if (first > total) {
    return util::Error{"start_line " + std::to_string(first) + " is beyond the end of the file (" +
                       std::to_string(total) + " lines)"};
  }
  LineRange range;
  range.first = first;
  range.total = total;
  range.last = std::min(last, total);
  if (range.last - first + 1 > max_lines) {
    range.last = first + max_lines - 1;
    range.truncated = true;
  }
  const std::size_t begin = starts[static_cast<std::size_t>(first - 1)];
  const std::size_t end = static_cast<std::size_t>(range.last) < starts.size()
                              ? starts[static_cast<std::size_t>(range.last)]
                              : text.size();
  range.text = util::to_valid_utf8(text.substr(begin, end - begin));
  if (!range.text.empty() && range.text.back() != '\n') range.text += '\n';
  return range;
}

} // namespace kasava::mcp
