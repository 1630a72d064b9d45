// Packing chunk strings for the store, and reading them back; see text_packs.hpp.
#include "core/store/text_packs.hpp"

#include <limits>

#include "core/util/compression.hpp"

namespace kasava::store {
namespace {

void put_varint(std::string& out, std::uint64_t value) {
  while (value >= 0x80) {
    out.push_back(static_cast<char>((value & 0x7F) | 0x80));
    value >>= 7;
  }
  out.push_back(static_cast<char>(value));
}

// Reads a LEB128 varint of at most `max` from bytes[at...], advancing `at`; false when it is
// truncated, too long or larger than `max`.
bool get_varint(std::span<const std::uint8_t> bytes, std::size_t& at, std::uint64_t max,
                std::uint64_t& value) {
  value = 0;
  for (unsigned shift = 0; shift < 64; shift += 7) {
    if (at >= bytes.size()) return false;
    const std::uint8_t part = bytes[at++];
    const std::uint64_t bits = part & 0x7F;
    if (shift > 0 && bits > (std::numeric_limits<std::uint64_t>::max() >> shift)) return false;
    value |= bits << shift;
    if ((part & 0x80) == 0) return value <= max;
  }
  return false;
}

}  // namespace

PackedTexts pack_texts(const std::vector<types::Chunk>& chunks) {
  PackedTexts packed;
  packed.entries.reserve(chunks.size());
  std::string current;  // the decoded bytes of the pack being filled
  const auto close_pack = [&] {
    packed.packs.push_back(util::compress(current));
    current.clear();
  };
  for (const types::Chunk& chunk : chunks) {
    const std::size_t bytes = chunk.text.size() + chunk.signature.size() + chunk.doc.size();
    PackedTexts::Entry& entry = packed.entries.emplace_back();
    // Empty strings need no reference; too large ones could not be read back.
    if (bytes == 0 || bytes > k_max_pack_bytes) continue;
    if (current.size() + bytes > k_max_pack_bytes) close_pack();
    entry.packed = true;
    entry.pack = packed.packs.size();
    entry.place.offset = static_cast<std::uint32_t>(current.size());
    entry.place.text_bytes = static_cast<std::uint32_t>(chunk.text.size());
    entry.place.signature_bytes = static_cast<std::uint32_t>(chunk.signature.size());
    entry.place.doc_bytes = static_cast<std::uint32_t>(chunk.doc.size());
    current += chunk.text;
    current += chunk.signature;
    current += chunk.doc;
    if (current.size() >= k_pack_target_bytes) close_pack();
  }
  if (!current.empty()) close_pack();
  return packed;
}

std::string encode_reference(const TextReference& reference) {
  std::string bytes(1, static_cast<char>(reference.codec));
  put_varint(bytes, static_cast<std::uint64_t>(reference.pack_id));
  put_varint(bytes, reference.place.offset);
  put_varint(bytes, reference.place.text_bytes);
  put_varint(bytes, reference.place.signature_bytes);
  put_varint(bytes, reference.place.doc_bytes);
  return bytes;
}

std::optional<TextReference> decode_reference(std::span<const std::uint8_t> bytes) {
  if (bytes.empty() || (bytes[0] != static_cast<std::uint8_t>(PackCodec::lz77) &&
                        bytes[0] != static_cast<std::uint8_t>(PackCodec::zstd))) {
    return std::nullopt;
  }
  std::size_t at = 1;
  constexpr auto k_max_id = static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max());
  constexpr std::uint64_t k_max_number = std::numeric_limits<std::uint32_t>::max();
  std::uint64_t id = 0;
  std::uint64_t numbers[4] = {};
  if (!get_varint(bytes, at, k_max_id, id) || id == 0) return std::nullopt;
  for (std::uint64_t& number : numbers) {
    if (!get_varint(bytes, at, k_max_number, number)) return std::nullopt;
  }
  if (at != bytes.size()) return std::nullopt;
  TextReference reference;
  reference.pack_id = static_cast<std::int64_t>(id);
  reference.codec = static_cast<PackCodec>(bytes[0]);
  reference.place.offset = static_cast<std::uint32_t>(numbers[0]);
  reference.place.text_bytes = static_cast<std::uint32_t>(numbers[1]);
  reference.place.signature_bytes = static_cast<std::uint32_t>(numbers[2]);
  reference.place.doc_bytes = static_cast<std::uint32_t>(numbers[3]);
  return reference;
}

util::Result<std::string> unpack(std::span<const std::uint8_t> pack, PackCodec codec,
                                 std::size_t wanted) {
  const std::string_view bytes(reinterpret_cast<const char*>(pack.data()), pack.size());
  return codec == PackCodec::lz77 ? util::decompress_lz77(bytes, k_max_pack_bytes, wanted)
                                  : util::decompress(bytes, k_max_pack_bytes, wanted);
}

std::optional<ChunkStrings> strings_at(std::string_view decoded_pack, const TextPlace& place) {
  if (bytes_needed(place) > decoded_pack.size()) return std::nullopt;
  std::size_t at = place.offset;
  ChunkStrings strings;
  strings.text = decoded_pack.substr(at, place.text_bytes);
  at += place.text_bytes;
  strings.signature = decoded_pack.substr(at, place.signature_bytes);
  at += place.signature_bytes;
  strings.doc = decoded_pack.substr(at, place.doc_bytes);
  return strings;
}

}  // namespace kasava::store
