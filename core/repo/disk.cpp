// Reading listed files from disk for the working-tree and plain-directory sources, with the
// symlink rules of `kasava index`: a link is followed only to a regular file inside the root.
#include "core/repo/detail.hpp"
#include "core/util/strings.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <filesystem>

namespace kasava::repo::detail {

namespace fs = std::filesystem;

namespace {

/// An open file descriptor, closed on scope exit.
class FileDescriptor {
public:
  explicit FileDescriptor(int fd) : m_fd(fd) {}
  FileDescriptor(const FileDescriptor&) = delete;
  FileDescriptor& operator=(const FileDescriptor&) = delete;
  ~FileDescriptor() {
    if (m_fd >= 0) ::close(m_fd);
  }
  int get() const { return m_fd; }

private:
  int m_fd;
};

std::string lower_first(std::string text) {
  if (!text.empty()) text[0] = static_cast<char>(std::tolower(static_cast<unsigned char>(text[0])));
  return text;
}

util::Result<std::string> read_regular_file(const std::string& path) {
  FileDescriptor file(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (file.get() < 0) return util::Error{errno_text(errno)};
  struct stat info {};
  if (::fstat(file.get(), &info) != 0) return util::Error{errno_text(errno)};
  if (!S_ISREG(info.st_mode)) return util::Error{"not a regular file"};

  std::string content;
  content.resize(static_cast<std::size_t>(info.st_size));
  std::size_t filled = 0;
  while (filled < content.size()) {
    const ssize_t count = ::read(file.get(), content.data() + filled, content.size() - filled);
    if (count < 0 && errno == EINTR) continue;
    if (count < 0) return util::Error{errno_text(errno)};
    if (count == 0) break;
    filled += static_cast<std::size_t>(count);
  }
  content.resize(filled);
  // The file may have grown since fstat: read on to EOF rather than return a truncated copy.
  char tail[4096];
  for (;;) {
    const ssize_t count = ::read(file.get(), tail, sizeof tail);
    if (count < 0 && errno == EINTR) continue;
    if (count < 0) return util::Error{errno_text(errno)};
    if (count == 0) break;
    content.append(tail, static_cast<std::size_t>(count));
  }
  return content;
}

}  // namespace

bool is_excluded_path(std::string_view relative) {
  std::size_t start = 0;
  while (start <= relative.size()) {
    std::size_t end = relative.find('/', start);
    if (end == std::string_view::npos) end = relative.size();
    const std::string_view component = relative.substr(start, end - start);
    if (component == ".git" || component == ".kasava") return true;
    start = end + 1;
  }
  return false;
}

std::string error_text(const std::error_code& error) {
  return lower_first(error.message());
}

std::string errno_text(int error_number) {
  return lower_first(std::strerror(error_number));
}

std::string canonical_root(const std::string& root) {
  std::error_code error;
  const fs::path real = fs::canonical(root, error);
  return error ? root : real.string();
}

util::Result<std::string> read_from_disk(const std::string& root, const std::string& real_root,
                                         const std::string& relative) {
  try {
    // Listed paths never climb out; a path from elsewhere must not either.
    if (relative.empty() || relative.front() == '/' || relative == ".." ||
        relative.rfind("../", 0) == 0 || relative.find("/../") != std::string::npos ||
        relative.ends_with("/..")) {
      return util::Error{"invalid path"};
    }
    const std::string full = root + "/" + relative;
    std::error_code error;
    const fs::file_status status = fs::symlink_status(full, error);
    if (error) return util::Error{error_text(error)};
    if (fs::is_regular_file(status)) return read_regular_file(full);
    if (!fs::is_symlink(status)) return util::Error{"not a regular file"};

    const fs::path target = fs::canonical(full, error);
    if (error == std::errc::too_many_symbolic_link_levels) return util::Error{"symlink loop"};
    if (error == std::errc::no_such_file_or_directory) return util::Error{"dangling symlink"};
    if (error) return util::Error{"resolving symlink: " + error_text(error)};

    const std::string target_text = target.string();
    const std::string prefix = real_root == "/" ? real_root : real_root + "/";
    if (target_text.compare(0, prefix.size(), prefix) != 0) {
      return util::Error{"symlink leaves the repository"};
    }
    if (is_excluded_path(std::string_view(target_text).substr(prefix.size()))) {
      return util::Error{"symlink points into '.git' or '.kasava'"};
    }
    const fs::file_status target_status = fs::status(target, error);
    if (error) return util::Error{"resolving symlink: " + error_text(error)};
    if (fs::is_directory(target_status)) return util::Error{std::string(k_symlink_to_directory)};
    if (!fs::is_regular_file(target_status)) return util::Error{"symlink to a special file"};
    return read_regular_file(target_text);
  } catch (const std::exception& exception) {
    // std::filesystem::path and std::string may still throw (allocation); never let it escape.
    return util::Error{exception.what()};
  }
}

}  // namespace kasava::repo::detail
