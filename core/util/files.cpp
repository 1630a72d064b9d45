// File-system helpers: see files.hpp.
#include "core/util/files.hpp"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <sys/stat.h>
#include <unistd.h>

namespace kasava::util {

Result<std::string> read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Error{"reading '" + path + "': " + std::strerror(errno)};
  std::ostringstream buffer;
  buffer << in.rdbuf();
  if (in.bad()) return Error{"reading '" + path + "': read error"};
  return buffer.str();
}

Status write_file_atomic(const std::string& path, std::string_view content) {
  const std::string temporary = path + ".tmp." + std::to_string(::getpid());
  {
    std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
    if (!out) return Error{"writing '" + path + "': " + std::strerror(errno)};
    out.write(content.data(), static_cast<std::streamsize>(content.size()));
    if (!out.flush()) return Error{"writing '" + path + "': " + std::strerror(errno)};
  }
  std::error_code error;
  std::filesystem::rename(temporary, path, error);
  if (error) {
    std::filesystem::remove(temporary, error);
    return Error{"writing '" + path + "': " + error.message()};
  }
  return ok_status();
}

namespace {

// Without HOME and XDG_CACHE_HOME (a service, a container): a folder of this user's own in
// $TMPDIR or /tmp, made 0700. One that is there already is used only when it is a folder of
// ours that nobody else can write to: in a shared /tmp another user may have made it first,
// to read our clones or to plant a clone or cached vectors of their own.
std::string private_temporary_cache() {
  const char* tmpdir = std::getenv("TMPDIR");
  const std::string base = tmpdir != nullptr && *tmpdir == '/' ? tmpdir : "/tmp";
  const std::string path = base + "/kasava-" + std::to_string(::geteuid());
  if (::mkdir(path.c_str(), 0700) != 0 && errno != EEXIST) {
    throw Failure("creating cache folder '" + path + "': " + std::strerror(errno) +
                  " (set XDG_CACHE_HOME)");
  }
  struct stat info {};
  if (::lstat(path.c_str(), &info) != 0) {
    throw Failure("cache folder '" + path + "': " + std::strerror(errno) + " (set XDG_CACHE_HOME)");
  }
  if (!S_ISDIR(info.st_mode) || info.st_uid != ::geteuid() || (info.st_mode & 022) != 0) {
    throw Failure("cache folder '" + path + "' is not private: it is " +
                  (!S_ISDIR(info.st_mode)              ? std::string("not a folder")
                   : info.st_uid != ::geteuid()        ? "owned by user " + std::to_string(info.st_uid)
                                                       : std::string("writable by others")) +
                  " (set XDG_CACHE_HOME or HOME)");
  }
  return path;
}

} // namespace

std::string cache_directory() {
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg) {
    return std::string(xdg) + "/kasava";
  }
  if (const char* home = std::getenv("HOME"); home && *home) {
    return std::string(home) + "/.cache/kasava";
  }
  return private_temporary_cache();
}

std::string absolute_path(const std::string& path) {
  std::error_code error;
  auto absolute = std::filesystem::absolute(path, error);
  if (error) return path;
  auto normal = absolute.lexically_normal().string();
  if (normal.size() > 1 && normal.back() == '/') normal.pop_back();
  return normal;
}

} // namespace kasava::util
