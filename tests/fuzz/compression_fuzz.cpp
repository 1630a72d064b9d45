// Fuzzes the chunk-text codec (core/util/compression), whose decoder reads index files that may
// be damaged or hostile: any bytes must decode or be an error, never read or write out of
// range; what decodes has the size its stream says, and a prefix of it decodes alike. The same
// bytes, compressed, must come back exactly.
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "core/util/compression.hpp"

namespace {

// Small enough that a stream claiming more is refused before a large allocation.
constexpr std::size_t k_max_size = std::size_t{1} << 20;

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);

  // As a stream: decoded whole, and as a prefix of a length taken from the input.
  const auto decoded = kasava::util::decompress(bytes, k_max_size);
  if (decoded) {
    const auto announced = kasava::util::decompressed_size(bytes);
    if (!announced || *announced != decoded->size()) std::abort();
    const std::size_t wanted = size == 0 ? 0 : data[size - 1] * size / 255;
    const auto prefix = kasava::util::decompress(bytes, k_max_size, wanted);
    if (!prefix || *prefix != decoded->substr(0, wanted)) std::abort();
  }

  // As data: compressed, it must decompress to itself.
  const std::string compressed = kasava::util::compress(bytes);
  const auto restored = kasava::util::decompress(compressed, size);
  if (!restored || *restored != bytes) std::abort();
  return 0;
}
