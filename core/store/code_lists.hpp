// Code lists: a coarse partition of the binary codes (vectors.hpp) so that the semantic scan of
// a large index reads the few lists nearest the query instead of every code. Pure functions
// (training, probing order); the tables that hold the lists are store.cpp's.
//
// Training is k-means in Hamming space (k-modes: a list's centre is its members' majority bit)
// on an evenly spaced sample, then every code goes to its nearest centre. What a list keeps
// for probing is, per bit, the share of its members with that bit set: the expected Hamming
// distance from a query code to the list's members is then a sum over bits, which orders the
// lists better than the distance to the majority code (a bit set in 51% of the members counts
// half, not fully).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace kasava::store {

/// An index with fewer codes keeps none: the exhaustive scan of ~40 bytes a code is then a few
/// milliseconds, and exact.
inline constexpr std::size_t k_code_lists_min_codes = 200'000;

/// A partition of `count` codes.
struct CodePartition {
  std::size_t lists = 0;
  std::vector<std::uint32_t> list_of;   ///< per code, its list (< lists)
  std::vector<std::uint8_t> shares;     ///< lists × bits: members with the bit set, 0..255
};

/// How many lists suit `count` codes: about √count / 2 (lists of ~2√count codes), at least 1.
std::size_t code_list_count(std::size_t count);

/// Partitions `count` codes of `bytes` bytes each (back to back) into `lists` lists, on up to
/// `threads` threads. Deterministic: the same codes give the same partition.
CodePartition partition_codes(const std::uint8_t* codes, std::size_t count, std::size_t bytes,
                              std::size_t lists, unsigned threads);

/// The lists (`shares` as in CodePartition, `bytes * 8` entries per list) ordered by the
/// expected Hamming distance from `code` to their members, nearest first (ties by list).
std::vector<std::uint32_t> lists_by_distance(std::span<const std::uint8_t> shares,
                                             std::span<const std::uint8_t> code);

}  // namespace kasava::store
