// Hamming distances between binary codes (sign bits of vectors): the popcount kernel of
// the semantic pre-filter, of the index's partitions and of the shared store's.
//
// Popcount. x86-64's baseline (SSE2) has no POPCNT instruction: with the default flags
// __builtin_popcountll is a libgcc call. The batch kernel is compiled twice
// (target_clones) and the dynamic loader picks the POPCNT version on CPUs that have it, so
// the binary stays runnable on any x86-64 and fast on all real ones.
#include "core/util/hamming.hpp"

#include <cstring>
#include <limits>
#include <type_traits>

namespace kasava::util {

namespace {

std::uint64_t load_word(const std::uint8_t* bytes) {
  std::uint64_t word = 0;
  std::memcpy(&word, bytes, sizeof word);
  return word;
}

} // namespace

int hamming_distance(const std::uint8_t* a, const std::uint8_t* b, std::size_t bytes) {
  int distance = 0;
  std::size_t i = 0;
  for (; i + 8 <= bytes; i += 8) distance += __builtin_popcountll(load_word(a + i) ^ load_word(b + i));
  for (; i < bytes; ++i) distance += __builtin_popcount(static_cast<unsigned>(a[i] ^ b[i]));
  return distance;
}

namespace {

// Gives `f` each code's index and Hamming distance to `query`. Inlined into each clone of its
// callers, so the popcounts are compiled for that clone's instructions.
template <typename F>
[[gnu::always_inline]] inline void each_distance(const std::uint8_t* codes, std::size_t count,
                                                 const std::uint8_t* query, std::size_t bytes, F&& f) {
  const std::size_t words = bytes / 8;
  // The common case (64 to 512 dimensions): the query's words stay in registers. The built-in
  // model's 256 dimensions get a loop of their own, unrolled: 31 -> 20 instructions a code.
  const auto scan_words = [&](auto word_count) {
    std::uint64_t q[8] = {};
    for (std::size_t w = 0; w < word_count; ++w) q[w] = load_word(query + 8 * w);
    for (std::size_t c = 0; c < count; ++c) {
      const std::uint8_t* code = codes + c * bytes;
      int distance = 0;
      for (std::size_t w = 0; w < word_count; ++w) {
        distance += __builtin_popcountll(load_word(code + 8 * w) ^ q[w]);
      }
      f(c, distance);
    }
  };
  if (bytes == 32) return scan_words(std::integral_constant<std::size_t, 4>{});
  if (bytes % 8 == 0 && words <= 8) return scan_words(words);
  for (std::size_t c = 0; c < count; ++c) f(c, hamming_distance(codes + c * bytes, query, bytes));
}

} // namespace

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && defined(__linux__)
__attribute__((target_clones("popcnt", "default")))
#endif
void hamming_distances(const std::uint8_t* codes, std::size_t count, const std::uint8_t* query,
                       std::size_t bytes, std::uint16_t* out) {
  each_distance(codes, count, query, bytes,
                [out](std::size_t c, int distance) { out[c] = static_cast<std::uint16_t>(distance); });
}

// Partitioning the kernel's codes asks this 1.44M times of 1,200 centroids: the minimum is
// kept as it goes, not found in the distances afterwards.
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && defined(__linux__)
__attribute__((target_clones("popcnt", "default")))
#endif
std::size_t nearest_code(const std::uint8_t* codes, std::size_t count, const std::uint8_t* query,
                         std::size_t bytes) {
  std::size_t best = 0;
  if (count == 0) return best;
  int best_distance = std::numeric_limits<int>::max();
  each_distance(codes, count, query, bytes, [&](std::size_t c, int distance) {
    if (distance < best_distance) {
      best_distance = distance;
      best = c;
    }
  });
  return best;
}

} // namespace kasava::util
