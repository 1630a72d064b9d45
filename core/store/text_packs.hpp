// Chunk text as the index keeps it: the text, signature and doc comment of a file's chunks
// compressed together in packs (util::compress: zstd; packs of schema 4 and 5 indexes are
// kasava's own LZ77, still read), and where each chunk's strings lie in its pack. Pure code, no
// SQLite: the indexer packs on its worker threads (pack_texts), and store.cpp and verify.cpp read
// packs back through these functions. store.cpp explains the tables.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/types/chunk.hpp"
#include "core/util/result.hpp"

namespace kasava::store {

/// A pack takes a file's consecutive chunks until their strings reach this many bytes.
/// Compressing chunks together finds the repeats between them (measured on CPython's Lib with
/// the LZ77 of schema 5: each chunk alone 2.1x, 16 KiB packs 3.6x, 64 KiB 3.9x, whole files
/// 3.9x); bounded so that reading one chunk decodes at most about this much.
inline constexpr std::size_t k_pack_target_bytes = 64 * 1024;
/// No pack decodes to more, and a reader refuses one that says it does (an allocation bound
/// against damaged files). A chunk whose strings alone are larger is stored uncompressed.
inline constexpr std::size_t k_max_pack_bytes = 64 * 1024 * 1024;

/// Where one chunk's strings lie in its pack's decoded bytes: its text, its signature and its
/// doc, back to back from `offset`.
struct TextPlace {
  std::uint32_t offset = 0;
  std::uint32_t text_bytes = 0;
  std::uint32_t signature_bytes = 0;
  std::uint32_t doc_bytes = 0;
};

/// The chunk strings of one file, packed for the store by pack_texts().
struct PackedTexts {
  /// Where one chunk's strings went.
  struct Entry {
    bool packed = false;   ///< false: too large for a pack, stored as plain columns
    std::size_t pack = 0;  ///< index into `packs`
    TextPlace place;
  };
  std::vector<std::string> packs;  ///< compressed streams, each decoding to its chunks' strings
  std::vector<Entry> entries;      ///< one per chunk, in order
};

/// Packs the text, signature and doc of `chunks` (one file's, in order).
PackedTexts pack_texts(const std::vector<types::Chunk>& chunks);

/// How a pack is compressed; the value is the format byte of the references into it.
enum class PackCodec : std::uint8_t {
  lz77 = 1,  ///< kasava's own (util::decompress_lz77): packs written by schema 4 and 5
  zstd = 2,  ///< util::compress: every pack written since schema 6
};

/// A chunk's link to its strings, stored as a BLOB in its `text` column: the pack's row id,
/// how the pack is compressed and the place in it.
struct TextReference {
  std::int64_t pack_id = 0;
  TextPlace place;
  PackCodec codec = PackCodec::zstd;
};

/// The bytes of a reference: a format byte (the codec), then the pack id and the four numbers
/// of the place as LEB128 varints.
std::string encode_reference(const TextReference& reference);
/// The reference in `bytes`; nullopt when they are not one (unknown format byte, truncated,
/// numbers out of range, bytes left over).
std::optional<TextReference> decode_reference(std::span<const std::uint8_t> bytes);

/// Decodes a pack as stored, or only its first `wanted` bytes; an error when it is damaged or
/// larger than k_max_pack_bytes.
util::Result<std::string> unpack(std::span<const std::uint8_t> pack, PackCodec codec,
                                 std::size_t wanted = k_max_pack_bytes);

/// The bytes of a decoded pack that a chunk's strings need: up to the end of its place.
inline std::size_t bytes_needed(const TextPlace& place) {
  return std::size_t{place.offset} + place.text_bytes + place.signature_bytes + place.doc_bytes;
}

/// One chunk's strings.
struct ChunkStrings {
  std::string text;
  std::string signature;
  std::string doc;
};

/// The strings at `place` in a decoded pack; nullopt when the place reaches past its end.
std::optional<ChunkStrings> strings_at(std::string_view decoded_pack, const TextPlace& place);

}  // namespace kasava::store
