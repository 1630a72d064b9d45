// File-system helpers: see files.hpp.
#include "core/util/files.hpp"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
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

std::string cache_directory() {
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg) {
    return std::string(xdg) + "/kasava";
  }
  if (const char* home = std::getenv("HOME"); home && *home) {
    return std::string(home) + "/.cache/kasava";
  }
  return "/tmp/kasava-cache";
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
