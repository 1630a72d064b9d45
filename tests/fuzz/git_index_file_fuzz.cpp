// Fuzzes core/repo's reader of git's index file (`.git/index`), which a repository given to
// kasava may hold in any state: any bytes must parse or be declined (nullopt, so libgit2 is
// asked instead), never read out of range; what parses holds entries whose paths are
// non-empty views that stay readable, in the file's order — but for a split index's
// replacements, which have no path until its shared index is applied. An input holding a
// second "DIRC" is also read as a split index (before it) and its shared index (from it).
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "core/repo/git_index_file.hpp"

namespace {

std::size_t touch(const kasava::repo::detail::GitIndexFile& file, bool empty_paths_allowed) {
  std::size_t total = 0;
  for (const auto& entry : file.entries) {
    if ((entry.path.empty() && !empty_paths_allowed) || entry.stage > 3) std::abort();
    // Touch every byte of the path, so a view into freed or foreign memory is caught.
    for (char c : entry.path) total += static_cast<unsigned char>(c);
  }
  return total;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using kasava::repo::detail::apply_split_index;
  using kasava::repo::detail::parse_git_index;
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  std::size_t total = 0;
  if (auto parsed = parse_git_index(bytes)) {
    total += touch(*parsed, parsed->link.has_value());
    // A moved file keeps its paths readable (the store hands its blocks over).
    const auto moved = std::move(*parsed);
    for (const auto& entry : moved.entries) total += entry.path.size();
  }
  const std::size_t second = bytes.find("DIRC", 4);
  if (second != std::string_view::npos) {
    auto split = parse_git_index(bytes.substr(0, second));
    auto shared = parse_git_index(bytes.substr(second));
    if (split && shared) {
      if (auto merged = apply_split_index(std::move(*split), std::move(*shared))) {
        total += touch(*merged, false);
      }
    }
  }
  static volatile std::size_t sink;
  sink = total;
  return 0;
}
