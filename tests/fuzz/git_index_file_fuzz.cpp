// Fuzzes core/repo's reader of git's index file (`.git/index`), which a repository given to
// kasava may hold in any state: any bytes must parse or be declined (nullopt, so libgit2 is
// asked instead), never read out of range; what parses holds entries whose paths are
// non-empty views that stay readable, in the file's order.
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "core/repo/git_index_file.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  auto parsed = kasava::repo::detail::parse_git_index(bytes);
  if (!parsed) return 0;
  std::size_t total = 0;
  for (const auto& entry : parsed->entries) {
    if (entry.path.empty() || entry.stage > 3) std::abort();
    // Touch every byte of the path, so a view into freed or foreign memory is caught.
    for (char c : entry.path) total += static_cast<unsigned char>(c);
  }
  // A moved file keeps its paths readable (the store hands its blocks over).
  const auto moved = std::move(*parsed);
  for (const auto& entry : moved.entries) total += entry.path.size();
  static volatile std::size_t sink;
  sink = total;
  return 0;
}
