// compress()/decompress(): a byte-aligned LZ77 of our own for chunk text in the index.
//
// Format. A stream is the decoded size as a varint, then sequences until that many bytes
// have come out:
//
//   sequence := token [varint] literals [distance-varint [varint]]
//   token    := LLL MMMMM   (high 3 bits: literal count; low 5 bits: match length - 4)
//
// The literal count 0–6 is in the token; 7 means 7 plus a varint that follows the token.
// Then the literals, as they are. When the decoded size is reached after them, the stream
// ends: the token's match bits must be 0 and no byte may follow. Otherwise a match follows:
// its distance (1 = the byte just written; 0 = the distance of the previous match, which
// costs one byte where source code repeats at a fixed distance — columns, aligned lines),
// and its length, 4 + M, where M = 31 means 31 plus a varint after the distance. A match may
// overlap the bytes it produces (distance < length repeats a run). Varints are LEB128 (7 bits
// a byte, low bits first) of at most 32 bits.
//
// Why this shape. Chunk text is small (a few hundred bytes to a few KiB per chunk, tens of
// KiB per file) and must decode fast for every search result; it is mostly ASCII with many
// short repeats (indentation, keywords, identifiers used again a few lines down). So no
// entropy coding — every field is whole bytes, the decoder is a loop of copies — and
// variable-length distances: a repeat within the last 127 bytes costs 2 bytes with its token.
//
// Compressor: hash chains over the 4-byte prefixes of every position (nearest first, a
// bounded number of steps), lazy by one byte (a longer match starting at the next byte wins
// over the one found here), and the previous distance is always tried first since it is the
// cheapest to write. Distances are limited to k_max_distance, so the chains stay short.
//
// Measured on CPython's Lib (43 MB of chunk text, signatures and docs in packs of 64 KiB):
// 3.87x (zlib, with Huffman coding, gives 4.13x at level 1, 4.97x at 6). 3 literal bits beat 4
// (3.84x); lazy matching gains 4% for ~60% more compressor time (still ~1.5% of an index
// run's instructions, on the worker threads); a preset dictionary (2–8 KiB of lines common
// in other code) gained 2–5% on small files but costs hashing it for every input: left out.
//
// Decompressor: every field is checked before it is used — counts against the input left
// and the output left, distances against the bytes written so far — so a damaged stream is
// an error, never a read or write out of range; trailing bytes are an error too. It can stop
// after a prefix: a chunk early in a pack needs only the bytes up to its end.
#include "core/util/compression.hpp"

#include <algorithm>
#include <bit>
#include <cstdint>
#include <cstring>
#include <memory>
#include <vector>

namespace kasava::util {
namespace {

constexpr std::size_t k_min_match = 4;
constexpr unsigned k_literal_bits = 3;
constexpr unsigned k_match_bits = 8 - k_literal_bits;
constexpr std::size_t k_literal_escape = (1u << k_literal_bits) - 1;  // then a varint
constexpr std::size_t k_match_escape = (1u << k_match_bits) - 1;      // then a varint
constexpr std::size_t k_max_distance = std::size_t{1} << 16;
// Chain steps per position: more finds longer matches, slower (measured on CPython's Lib:
// 4 steps 3.78x, 8 steps 3.87x, 16 steps 3.92x for 11% more time).
constexpr int k_max_chain = 8;
// Hash table entries at most (2^bits): more only cost clearing it for every input.
constexpr unsigned k_max_hash_bits = 14;
// A match this long is good enough: stop searching, and do not try the next byte.
constexpr std::size_t k_good_enough_match = 64;

std::uint32_t load32(const unsigned char* bytes) {
  std::uint32_t value = 0;
  std::memcpy(&value, bytes, sizeof value);
  return value;
}

std::uint64_t load64(const unsigned char* bytes) {
  std::uint64_t value = 0;
  std::memcpy(&value, bytes, sizeof value);
  return value;
}

// How many bytes from `here` on equal those from `there`, at most `limit`; eight at a time
// (the first differing byte of a little-endian word is its lowest set bit / 8).
std::size_t common_length(const unsigned char* there, const unsigned char* here,
                          std::size_t limit) {
  std::size_t length = 0;
  while (length + 8 <= limit) {
    const std::uint64_t difference = load64(there + length) ^ load64(here + length);
    if (difference != 0) {
      if constexpr (std::endian::native == std::endian::little) {
        return length + static_cast<std::size_t>(std::countr_zero(difference)) / 8;
      } else {
        break;  // the byte loop below finds it
      }
    }
    length += 8;
  }
  while (length < limit && there[length] == here[length]) ++length;
  return length;
}

std::size_t varint_bytes(std::size_t value) {
  std::size_t bytes = 1;
  while (value >= 0x80) {
    value >>= 7;
    ++bytes;
  }
  return bytes;
}

// Appends to a string through a pointer: room is made once per sequence, not checked per
// byte (push_back per byte cost a tenth of the compressor's time).
class Writer {
public:
  explicit Writer(std::size_t expected) { m_out.resize(expected); }

  /// Makes room for `bytes` more.
  void reserve(std::size_t bytes) {
    if (m_out.size() - m_used < bytes) m_out.resize(std::max(m_out.size() * 2, m_used + bytes));
  }
  // The calls below need room made by reserve().
  void byte(unsigned value) { m_out[m_used++] = static_cast<char>(value); }
  void varint(std::size_t value) {
    while (value >= 0x80) {
      byte(static_cast<unsigned>((value & 0x7F) | 0x80));
      value >>= 7;
    }
    byte(static_cast<unsigned>(value));
  }
  void bytes(const unsigned char* from, std::size_t count) {
    std::memcpy(m_out.data() + m_used, from, count);
    m_used += count;
  }

  std::string take() && {
    m_out.resize(m_used);
    return std::move(m_out);
  }

private:
  std::string m_out;
  std::size_t m_used = 0;
};

constexpr std::size_t k_max_varint_bytes = 5;
// Spare bytes after the decoder's output: a copy of up to this many bytes moves all of them
// at once (two instructions instead of a call), rewriting the bytes after it.
constexpr std::size_t k_copy_slack = 16;

struct Match {
  std::size_t length = 0;
  std::size_t distance = 0;
  bool repeat = false;  // same distance as the previous match: written as 0, one byte

  // Bytes saved by writing this match instead of its bytes as literals.
  std::ptrdiff_t gain() const {
    const std::size_t cost = 1 + (repeat ? 1 : varint_bytes(distance));
    return static_cast<std::ptrdiff_t>(length) - static_cast<std::ptrdiff_t>(cost);
  }
};

// Hash chains over the 4-byte prefixes of the positions of `bytes`.
class MatchFinder {
public:
  MatchFinder(const unsigned char* bytes, std::size_t size) : m_bytes(bytes), m_size(size) {
    // A table about the size of the input: small inputs (most chunks) do not pay for
    // clearing a large one.
    unsigned bits = 8;
    while (bits < k_max_hash_bits && (std::size_t{1} << bits) < size) ++bits;
    m_shift = 32 - bits;
    m_head.assign(std::size_t{1} << bits, -1);
    // Not cleared: an entry is written when its position is added, before any chain reaches it.
    m_previous = std::make_unique_for_overwrite<std::int32_t[]>(size);
  }

  /// Adds every position before `position` not added yet (those with 4 bytes to hash).
  void add_up_to(std::size_t position) {
    const std::size_t last = m_size >= k_min_match ? m_size - k_min_match + 1 : 0;
    position = std::min(position, last);
    for (; m_added < position; ++m_added) {
      const std::uint32_t slot = hash(m_added);
      m_previous[m_added] = m_head[slot];
      m_head[slot] = static_cast<std::int32_t>(m_added);
    }
  }

  /// The longest match for `position` (at most `limit` bytes, which is at least
  /// k_min_match) among the positions before it, nearest first; length 0 when none reaches
  /// k_min_match. Then adds `position`. Every position before it must be added.
  Match find_and_add(std::size_t position, std::size_t limit) {
    const std::uint32_t slot = hash(position);
    std::int32_t candidate = m_head[slot];
    m_previous[position] = candidate;
    m_head[slot] = static_cast<std::int32_t>(position);
    m_added = position + 1;

    Match best;
    const unsigned char* here = m_bytes + position;
    const std::uint32_t prefix = load32(here);
    for (int steps = 0; candidate >= 0 && steps < k_max_chain; ++steps) {
      const auto from = static_cast<std::size_t>(candidate);
      const std::size_t distance = position - from;
      if (distance > k_max_distance) break;
      const unsigned char* there = m_bytes + from;
      // A candidate can only win if it matches one byte further than the best so far.
      if (there[best.length] == here[best.length] && load32(there) == prefix) {
        const std::size_t length = common_length(there, here, limit);
        if (length > best.length) {
          best = Match{length, distance, false};
          if (length >= k_good_enough_match || length == limit) break;
        }
      }
      candidate = m_previous[from];
    }
    return best;
  }

private:
  std::uint32_t hash(std::size_t position) const {
    return (load32(m_bytes + position) * 2654435761u) >> m_shift;
  }

  const unsigned char* m_bytes;
  std::size_t m_size;
  unsigned m_shift = 0;
  std::size_t m_added = 0;
  std::vector<std::int32_t> m_head;
  std::unique_ptr<std::int32_t[]> m_previous;
};

// Appends one sequence: literals, then a match unless `match` has length 0 (the last one).
void put_sequence(Writer& out, const unsigned char* literals, std::size_t literal_count,
                  const Match& match) {
  out.reserve(1 + 3 * k_max_varint_bytes + literal_count);
  const std::size_t literal_field = std::min(literal_count, k_literal_escape);
  const std::size_t match_field =
      match.length == 0 ? 0 : std::min(match.length - k_min_match, k_match_escape);
  out.byte(static_cast<unsigned>((literal_field << k_match_bits) | match_field));
  if (literal_field == k_literal_escape) out.varint(literal_count - k_literal_escape);
  out.bytes(literals, literal_count);
  if (match.length == 0) return;
  out.varint(match.repeat ? 0 : match.distance);
  if (match_field == k_match_escape) out.varint(match.length - k_min_match - k_match_escape);
}

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

}  // namespace

std::string compress(std::string_view data) {
  Writer out(data.size() / 2 + 16);
  out.reserve(k_max_varint_bytes);
  out.varint(data.size());
  if (data.empty()) return std::move(out).take();

  const auto* bytes = reinterpret_cast<const unsigned char*>(data.data());
  const std::size_t end = data.size();
  MatchFinder finder(bytes, end);

  // The previous match's distance, as the decoder knows it (0: none yet).
  std::size_t previous_distance = 0;
  // The best match at `position`: the previous distance when it does at least as well.
  const auto best_match = [&](std::size_t position) {
    finder.add_up_to(position);
    const std::size_t limit = end - position;
    Match best = finder.find_and_add(position, limit);
    if (previous_distance != 0 && previous_distance <= position) {
      const unsigned char* here = bytes + position;
      const unsigned char* there = here - previous_distance;
      if (load32(there) == load32(here)) {
        const Match repeat{common_length(there, here, limit), previous_distance, true};
        if (repeat.gain() >= best.gain()) best = repeat;
      }
    }
    return best;
  };

  std::size_t anchor = 0;  // first byte not yet written
  std::size_t position = anchor;
  while (position + k_min_match <= end) {
    Match match = best_match(position);
    if (match.length < k_min_match) {
      ++position;
      continue;
    }
    // Lazy: a better match one byte later is worth a literal.
    while (match.length < k_good_enough_match && position + 1 + k_min_match <= end) {
      const Match next = best_match(position + 1);
      if (next.length < k_min_match || next.gain() <= match.gain()) break;
      ++position;
      match = next;
    }
    put_sequence(out, bytes + anchor, position - anchor, match);
    previous_distance = match.distance;
    position += match.length;
    anchor = position;
  }
  if (anchor < end) put_sequence(out, bytes + anchor, end - anchor, Match{});
  return std::move(out).take();
}

std::optional<std::size_t> decompressed_size(std::string_view compressed) {
  Reader reader(compressed);
  std::size_t size = 0;
  if (!reader.varint(size)) return std::nullopt;
  return size;
}

Result<std::string> decompress(std::string_view compressed, std::size_t max_size,
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
