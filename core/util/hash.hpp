// FNV-1a, 64 bits: the one non-cryptographic hash kasava computes in several places (model
// checksums and word tables, the listing digest, answer tags). Header-only so the model's word
// lookups inline it.
#pragma once

#include <cstdint>
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

} // namespace kasava::util
