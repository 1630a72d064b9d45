// FNV-1a, 64 bits: the one non-cryptographic hash kasava computes in several places (model
// checksums and word tables, answer tags), and the 8-bytes-at-a-time walk of the digests that
// must be fast (the listing digest, the tracked paths' digest). Header-only so the model's word
// lookups inline it.
#pragma once

#include <cstdint>
#include <cstring>
#include <string_view>

namespace kasava::util {

inline constexpr std::uint64_t k_fnv1a64_basis = 14695981039346656037ULL;
inline constexpr std::uint64_t k_fnv1a64_prime = 1099511628211ULL;

/// FNV-1a of `bytes`, continued from `hash` (a previous result) or started from the basis.
constexpr std::uint64_t fnv1a64(std::string_view bytes, std::uint64_t hash = k_fnv1a64_basis) {
  for (const char c : bytes) {
    hash ^= static_cast<unsigned char>(c);
    hash *= k_fnv1a64_prime;
  }
  return hash;
}

/// One step of the word-at-a-time digests: `word` mixed into `state` by an odd multiplier
/// (the golden ratio's), the high bits then folded down so that every bit reaches the low ones.
constexpr std::uint64_t mix_word(std::uint64_t state, std::uint64_t word) {
  state = (state ^ word) * 0x9E3779B97F4A7C15ULL;
  return state ^ (state >> 29);
}

/// Calls `mix(word)` for each 8 bytes of `bytes` in native byte order, the last word padded
/// with zeros: for digests that mix a word per step instead of a byte (mix the length in
/// first, so that the padding is unambiguous).
template <typename Mix>
void for_each_word(std::string_view bytes, Mix&& mix) {
  std::size_t at = 0;
  for (; at + 8 <= bytes.size(); at += 8) {
    std::uint64_t word;
    std::memcpy(&word, bytes.data() + at, 8);
    mix(word);
  }
  if (at < bytes.size()) {
    std::uint64_t word = 0;
    std::memcpy(&word, bytes.data() + at, bytes.size() - at);
    mix(word);
  }
}

} // namespace kasava::util
