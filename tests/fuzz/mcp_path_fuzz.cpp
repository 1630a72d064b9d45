// Fuzzes confined_path (core/mcp/files), the check that keeps MCP reads inside the repository:
// whatever path an agent sends, an accepted one must resolve under the root.
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "core/mcp/files.hpp"

namespace {

// A root with a file, a folder, a link inside and links that leave it, next to a secret.
const std::string& fixture_root() {
  static const std::string root = [] {
    namespace fs = std::filesystem;
    char name[] = "/tmp/kasava-fuzz-XXXXXX";
    if (::mkdtemp(name) == nullptr) std::abort();
    const fs::path base = fs::canonical(name);
    fs::create_directories(base / "repo/src");
    fs::create_directories(base / "repo/.git");
    std::ofstream(base / "secret.txt") << "secret\n";
    std::ofstream(base / "repo/src/a.py") << "x = 1\n";
    std::ofstream(base / "repo/.git/config") << "[core]\n";
    fs::create_symlink("a.py", base / "repo/src/inside_link.py");
    fs::create_symlink(base / "secret.txt", base / "repo/src/out_link.txt");
    fs::create_symlink("../../secret.txt", base / "repo/src/rel_out.txt");
    fs::create_symlink("..", base / "repo/src/up");
    static const std::string to_remove = base.string();
    std::atexit([] {
      std::error_code error;
      std::filesystem::remove_all(to_remove, error);
    });
    return (base / "repo").string();
  }();
  return root;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string& root = fixture_root();
  const std::string_view relative(reinterpret_cast<const char*>(data), size);
  auto path = kasava::mcp::confined_path(root, relative);
  if (!path) return 0;
  if (path->rfind(root + "/", 0) != 0) std::abort();  // escaped the repository
  if (path->find("/.git/") != std::string::npos) std::abort();
  return 0;
}
