// Fuzzes the chunker (core/parse) with any bytes in any language: the first byte picks the
// language, the rest is the file. Checks the chunker's promise: sorted, valid 1-based ranges.
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "core/parse/chunker.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const std::vector<std::string> languages = [] {
    auto names = kasava::parse::known_languages();
    names.push_back("");  // plain text: line windows
    return names;
  }();
  static kasava::parse::Chunker chunker(kasava::parse::ChunkerOptions{40, 150, 500});
  if (size == 0) return 0;
  const std::string& language = languages[data[0] % languages.size()];
  const std::string_view content(reinterpret_cast<const char*>(data + 1), size - 1);
  const auto chunks = chunker.chunk("fuzz/input", language, content);
  int previous_start = 0;
  for (const auto& chunk : chunks) {
    if (chunk.start_line < 1 || chunk.end_line < chunk.start_line) std::abort();
    if (chunk.start_line < previous_start) std::abort();
    previous_start = chunk.start_line;
  }
  return 0;
}
