// Fuzzes the chunk-text codecs (core/util/compression): zstd, and the LZ77 decoder that reads
// the packs of older indexes. Both read index files that may be damaged or hostile: any bytes
// must decode or be an error, never read or write out of range; what decodes has the size its
// stream says, and a prefix of it decodes alike. The same bytes, compressed, must come back
// exactly.
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>

#include "core/util/compression.hpp"

namespace {

// Small enough that a stream claiming more is refused before a large allocation.
constexpr std::size_t k_max_size = std::size_t{1} << 20;

template <typename Decode, typename Size>
void check_decoder(std::string_view bytes, Decode decode, Size announced_size) {
  const auto decoded = decode(bytes, k_max_size, std::string_view::npos);
  if (!decoded) return;
  const std::optional<std::size_t> announced = announced_size(bytes);
  if (!announced || *announced != decoded->size()) std::abort();
  const std::size_t wanted =
      bytes.empty() ? 0 : static_cast<unsigned char>(bytes.back()) * bytes.size() / 255;
  const auto prefix = decode(bytes, k_max_size, wanted);
  if (!prefix || *prefix != decoded->substr(0, wanted)) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);

  // As a stream of either codec: decoded whole, and as a prefix of a length taken from it.
  check_decoder(
      bytes,
      [](std::string_view in, std::size_t max, std::size_t wanted) {
        return kasava::util::decompress(in, max, wanted);
      },
      [](std::string_view in) { return kasava::util::decompressed_size(in); });
  check_decoder(
      bytes,
      [](std::string_view in, std::size_t max, std::size_t wanted) {
        return kasava::util::decompress_lz77(in, max, wanted);
      },
      [](std::string_view in) { return kasava::util::lz77_decompressed_size(in); });

  // As data: compressed, it must decompress to itself, whole and as a prefix.
  const std::string compressed = kasava::util::compress(bytes);
  const auto restored = kasava::util::decompress(compressed, size);
  if (!restored || *restored != bytes) std::abort();
  const std::size_t half = size / 2;
  const auto prefix = kasava::util::decompress(compressed, size, half);
  if (!prefix || *prefix != bytes.substr(0, half)) std::abort();
  return 0;
}
