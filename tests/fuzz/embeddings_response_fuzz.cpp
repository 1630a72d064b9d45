// Fuzzes the parser of embeddings responses (core/remote/response) — bytes from a remote
// server: any body must give vectors that match what was asked for, or an error; the error
// detail extractor must return one short line of valid UTF-8.
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "core/remote/response.hpp"
#include "core/util/strings.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 2) return 0;
  const std::size_t count = data[0] % 8;
  const int dimensions = data[1] % 5;  // 0: any length
  const std::string_view body(reinterpret_cast<const char*>(data) + 2, size - 2);

  auto parsed = kasava::remote::parse_embeddings_response(body, count, dimensions);
  if (parsed) {
    if (parsed->vectors.size() != count) std::abort();
    for (const auto& vector : parsed->vectors) {
      if (vector.empty() || vector.size() != parsed->vectors.front().size()) std::abort();
      if (dimensions > 0 && vector.size() != static_cast<std::size_t>(dimensions)) std::abort();
    }
  } else if (parsed.error().message.empty()) {
    std::abort();
  }

  const std::string detail = kasava::remote::error_detail(body);
  if (detail.size() > 310 || detail.find('\n') != std::string::npos ||
      !kasava::util::is_valid_utf8(detail))
    std::abort();
  return 0;
}
