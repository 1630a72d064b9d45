// Locating the index: see locate.hpp.
#include "core/index/locate.hpp"

#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/repo/source.hpp"

namespace kasava::index {

namespace fs = std::filesystem;

std::string default_index_path(const std::string& root) {
  return (fs::path(root) / ".kasava" / "index.db").string();
}

std::optional<std::string> find_index_upward(const std::string& start) {
  std::error_code error;
  fs::path dir = fs::absolute(start, error).lexically_normal();
  if (error) return std::nullopt;
  while (true) {
    const fs::path candidate = dir / ".kasava" / "index.db";
    if (fs::is_regular_file(candidate, error)) return candidate.string();
    if (!dir.has_parent_path() || dir.parent_path() == dir) return std::nullopt;
    dir = dir.parent_path();
  }
}

std::optional<std::string> folder_of_index(const std::string& index_path) {
  const fs::path path = fs::path(index_path).lexically_normal();
  const fs::path folder = path.parent_path();
  if (path.filename() != "index.db" || folder.filename() != ".kasava") return std::nullopt;
  return folder.parent_path().string();
}

bool same_folder(const std::string& a, const std::string& b) {
  std::error_code error;
  if (!fs::is_directory(a, error) || !fs::is_directory(b, error)) return false;
  const bool same = fs::equivalent(a, b, error);
  return same && !error;
}

void exclude_from_git(const std::string& root) {
  const auto git_dir = repo::common_git_dir(root);
  if (!git_dir) return;  // a plain directory
  std::error_code error;
  const fs::path info = fs::path(*git_dir) / "info";
  fs::create_directories(info, error);
  const fs::path exclude = info / "exclude";
  std::string existing;
  {
    std::ifstream in(exclude);
    std::ostringstream buffer;
    buffer << in.rdbuf();
    existing = buffer.str();
  }
  std::istringstream lines(existing);
  for (std::string line; std::getline(lines, line);) {
    if (line == ".kasava/" || line == ".kasava" || line == "/.kasava/") return;
  }
  std::ofstream out(exclude, std::ios::app);
  if (!existing.empty() && existing.back() != '\n') out << '\n';
  out << ".kasava/\n";
}

} // namespace kasava::index
