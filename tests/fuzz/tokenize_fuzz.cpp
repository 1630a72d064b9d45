// Fuzzes the code-aware tokenizer and the glob matcher (core/util): token byte ranges must lie
// inside the text, and nothing may crash or loop on any bytes.
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "core/util/glob.hpp"
#include "core/util/tokenize.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  kasava::util::for_each_code_token(text, [&](std::string_view token, std::size_t begin,
                                              std::size_t end) {
    if (begin > end || end > text.size() || token.empty()) std::abort();
  });
  (void)kasava::util::query_terms(text);
  (void)kasava::util::split_identifier(text.substr(0, 256));
  // The first half as a pattern, the second as a path.
  const auto half = text.size() / 2;
  (void)kasava::util::glob_match(text.substr(0, std::min<std::size_t>(half, 64)), text.substr(half));
  return 0;
}
