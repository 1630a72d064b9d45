// compress()/decompress(): chunk text in the index as zstd frames; decompress_lz77(): the
// byte-aligned LZ77 of our own that indexes of schema 4 and 5 hold, read only.
//
// zstd. One frame per pack, at level 3, with its decoded size in the frame header. Measured
// on /usr/lib/python3.11's chunk strings in 64 KiB packs (bench/codec_compare): 4.64x against
// our LZ77's 3.91x, compression about twice as fast, decoding in the same range (~400-500
// MB/s of text); level 1 gave 4.48x, level 6 5.09x at a third of the compression speed. No
// dictionary. The frame's size is checked against the caller's bound before anything is
// allocated, and a prefix is decoded by streaming into a buffer of the bytes wanted, so that
// a search result early in a pack does not decode the whole pack. zstd's decoder is itself
// safe on any input (it is fuzzed upstream; our fuzz target runs it too). No checksum: like
// the LZ77 it replaced, a damaged frame may decode to other bytes of the right size.
//
// LZ77 format (decode only). A stream is the decoded size as a varint, then sequences until
// that many bytes have come out:
//
//   sequence := token [varint] literals [distance-varint [varint]]
//   token    := LLL MMMMM   (high 3 bits: literal count; low 5 bits: match length - 4)
//
// The literal count 0-6 is in the token; 7 means 7 plus a varint that follows the token.
// Then the literals, as they are. When the decoded size is reached after them, the stream
// ends: the token's match bits must be 0 and no byte may follow. Otherwise a match follows:
// its distance (1 = the byte just written; 0 = the distance of the previous match), and its
// length, 4 + M, where M = 31 means 31 plus a varint after the distance. A match may overlap
// the bytes it produces (distance < length repeats a run). Varints are LEB128 (7 bits a byte,
// low bits first) of at most 32 bits. Every field is checked before it is used — counts
// against the input left and the output left, distances against the bytes written so far —
// so a damaged stream is an error, never a read or write out of range; trailing bytes are an
// error too. It can stop after a prefix, as the zstd decoder does.
#include "core/util/compression.hpp"

#include <zstd.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <limits>
#include <new>
#include <optional>

namespace kasava::util {
namespace {

// zstd's level for new packs (see above).
constexpr int k_zstd_level = 3;

constexpr std::size_t k_min_match = 4;
constexpr unsigned k_literal_bits = 3;
constexpr unsigned k_match_bits = 8 - k_literal_bits;
constexpr std::size_t k_literal_escape = (1u << k_literal_bits) - 1;  // then a varint
constexpr std::size_t k_match_escape = (1u << k_match_bits) - 1;      // then a varint
// Spare bytes after the decoder's output: a copy of up to this many bytes moves all of them
// at once (two instructions instead of a call), rewriting the bytes after it.
constexpr std::size_t k_copy_slack = 16;

// Reads a stream's fields, never past its end.
class Reader {
public:
  explicit Reader(std::string_view bytes)
      : m_next(reinterpret_cast<const unsigned char*>(bytes.data())), m_left(bytes.size()) {}

  std::size_t left() const { return m_left; }
  const unsigned char* next() const { return m_next; }
  void skip(std::size_t count) {
    m_next += count;
    m_left -= count;
  }

  bool byte(unsigned& value) {
    if (m_left == 0) return false;
    value = *m_next;
    skip(1);
    return true;
  }

  // A LEB128 varint of at most 32 bits (5 bytes, the last holding 4 bits).
  bool varint(std::size_t& value) {
    value = 0;
    for (unsigned shift = 0; shift < 35; shift += 7) {
      unsigned part = 0;
      if (!byte(part)) return false;
      if (shift == 28 && part > 0x0F) return false;
      value |= static_cast<std::size_t>(part & 0x7F) << shift;
      if ((part & 0x80) == 0) return true;
    }
    return false;
  }

private:
  const unsigned char* m_next;
  std::size_t m_left;
};

Error damaged(const char* what) {
  return Error{std::string("damaged compressed data: ") + what};
}

// One compression and one decompression context per thread: making one costs more than
// compressing a small pack, and the indexer's workers and readers run on several threads.
struct CompressContext {
  ZSTD_CCtx* context = ZSTD_createCCtx();
  ~CompressContext() { ZSTD_freeCCtx(context); }
};
struct DecompressContext {
  ZSTD_DCtx* context = ZSTD_createDCtx();
  ~DecompressContext() { ZSTD_freeDCtx(context); }
};

}  // namespace

std::string compress(std::string_view data) {
  thread_local CompressContext compressor;
  if (compressor.context == nullptr) throw std::bad_alloc();
  std::string out(ZSTD_compressBound(data.size()), '\0');
  const std::size_t size = ZSTD_compressCCtx(compressor.context, out.data(), out.size(),
                                             data.data(), data.size(), k_zstd_level);
  // Only out of memory: the output has zstd's bound for this input.
  if (ZSTD_isError(size)) throw std::bad_alloc();
  out.resize(size);
  return out;
}

std::optional<std::size_t> decompressed_size(std::string_view compressed) {
  const unsigned long long size = ZSTD_getFrameContentSize(compressed.data(), compressed.size());
  if (size == ZSTD_CONTENTSIZE_ERROR || size == ZSTD_CONTENTSIZE_UNKNOWN ||
      size > std::numeric_limits<std::size_t>::max()) {
    return std::nullopt;
  }
  return static_cast<std::size_t>(size);
}

Result<std::string> decompress(std::string_view compressed, std::size_t max_size,
                               std::size_t wanted) {
  const auto size = decompressed_size(compressed);
  if (!size) return damaged("malformed size");
  if (*size > max_size) return damaged("larger than allowed");
  // The whole frame, and nothing after it (one frame per stream).
  const std::size_t frame = ZSTD_findFrameCompressedSize(compressed.data(), compressed.size());
  if (ZSTD_isError(frame)) return damaged("truncated");
  if (frame != compressed.size()) return damaged("bytes after its end");
  thread_local DecompressContext decompressor;
  if (decompressor.context == nullptr) throw std::bad_alloc();
  ZSTD_DCtx* const context = decompressor.context;
  const std::size_t end = std::min(*size, wanted);
  if (end < *size) {
    // A prefix: stream into a buffer of `end` bytes and stop when it is full. zstd's buffers
    // for it are bounded by the frame's size, checked above.
    std::string out(end, '\0');
    ZSTD_DCtx_reset(context, ZSTD_reset_session_only);
    ZSTD_inBuffer in{compressed.data(), compressed.size(), 0};
    ZSTD_outBuffer to{out.data(), out.size(), 0};
    while (to.pos < to.size) {
      const std::size_t read = in.pos;
      const std::size_t written = to.pos;
      const std::size_t result = ZSTD_decompressStream(context, &to, &in);
      if (ZSTD_isError(result) || result == 0) break;
      if (in.pos == read && to.pos == written) break;  // no progress
    }
    ZSTD_DCtx_reset(context, ZSTD_reset_session_only);
    if (to.pos == end) return out;
    // The streaming decoder refused (a frame asking for a larger window than it allows, say):
    // the prefix is what the whole frame decodes to, or the whole frame's error.
  }
  std::string out(*size, '\0');
  const std::size_t got =
      ZSTD_decompressDCtx(context, out.data(), out.size(), compressed.data(), compressed.size());
  if (ZSTD_isError(got)) return damaged("corrupted");
  if (got != *size) return damaged("not the size it says");
  out.resize(end);
  return out;
}

std::optional<std::size_t> lz77_decompressed_size(std::string_view compressed) {
  Reader reader(compressed);
  std::size_t size = 0;
  if (!reader.varint(size)) return std::nullopt;
  return size;
}

Result<std::string> decompress_lz77(std::string_view compressed, std::size_t max_size,
                                    std::size_t wanted) {
  Reader reader(compressed);
  std::size_t size = 0;
  if (!reader.varint(size)) return damaged("malformed size");
  if (size > max_size) return damaged("larger than allowed");
  // Bytes from `end` on are not written (a prefix was wanted); every field is still checked
  // against the whole size. The slack lets a short copy move 16 bytes at once.
  const std::size_t end = std::min(size, wanted);
  std::string out(end + k_copy_slack, '\0');
  auto* const begin = reinterpret_cast<unsigned char*>(out.data());
  std::size_t position = 0;
  std::size_t previous_distance = 0;
  while (position < end) {
    unsigned token = 0;
    if (!reader.byte(token)) return damaged("truncated");
    std::size_t literals = token >> k_match_bits;
    if (literals == k_literal_escape) {
      std::size_t more = 0;
      if (!reader.varint(more)) return damaged("truncated");
      literals += more;
    }
    if (literals > reader.left()) return damaged("truncated");
    if (literals > size - position) return damaged("more bytes than its size");
    const std::size_t literals_kept = std::min(literals, end - position);
    if (literals_kept <= k_copy_slack && reader.left() >= k_copy_slack) {
      std::memcpy(begin + position, reader.next(), k_copy_slack);  // past `literals`: slack
    } else {
      std::memcpy(begin + position, reader.next(), literals_kept);
    }
    reader.skip(literals);
    position += literals;

    const std::size_t match_field = token & k_match_escape;
    if (position == size && match_field != 0) return damaged("a match past its size");
    if (position >= end) break;
    std::size_t distance = 0;
    if (!reader.varint(distance)) return damaged("truncated");
    if (distance == 0) {
      if (previous_distance == 0) return damaged("a repeated distance before any match");
      distance = previous_distance;
    }
    if (distance > position) return damaged("a match before its start");
    std::size_t length = k_min_match + match_field;
    if (match_field == k_match_escape) {
      std::size_t more = 0;
      if (!reader.varint(more)) return damaged("truncated");
      length += more;
    }
    if (length > size - position) return damaged("more bytes than its size");
    const std::size_t kept = std::min(length, end - position);
    unsigned char* to = begin + position;
    const unsigned char* from = to - distance;
    if (kept <= k_copy_slack && distance >= k_copy_slack) {
      std::memcpy(to, from, k_copy_slack);  // past `kept`: bytes written again later, or slack
    } else if (distance >= kept) {
      std::memcpy(to, from, kept);
    } else {
      // Overlapping: each byte may be one this match just wrote (a run).
      for (std::size_t i = 0; i < kept; ++i) to[i] = from[i];
    }
    position += length;
    previous_distance = distance;
  }
  if (end == size && reader.left() != 0) return damaged("bytes after its end");
  out.resize(end);
  return out;
}
}  // namespace kasava::util
