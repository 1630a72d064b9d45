// Hamming distances between binary codes stored back to back: a popcount per 64 bits.
#pragma once

#include <cstddef>
#include <cstdint>

namespace kasava::util {

/// Hamming distance between two codes of `bytes` bytes.
int hamming_distance(const std::uint8_t* a, const std::uint8_t* b, std::size_t bytes);

/// Hamming distances of `count` codes stored back to back (`bytes` each) to `query`, into
/// `out`. Uses the CPU's popcount instruction when it has one (checked at run time).
void hamming_distances(const std::uint8_t* codes, std::size_t count, const std::uint8_t* query,
                       std::size_t bytes, std::uint16_t* out);

/// The index of the code among `count` (back to back, `bytes` each) nearest to `query` by
/// Hamming distance, the lowest among equally near ones; 0 when count is 0.
std::size_t nearest_code(const std::uint8_t* codes, std::size_t count, const std::uint8_t* query,
                         std::size_t bytes);

} // namespace kasava::util
