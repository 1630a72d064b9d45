// A coarse partition of binary codes, so that a semantic search on a large index reads the
// codes of the partitions nearest its query instead of every code (an inverted file over
// Hamming space). The centroids are found by k-majority clustering: k-means where a
// centroid's bit is the majority of its members' bits. Pure functions; the index keeps the
// partitions (core/store/store.cpp) and so does the shared store (core/pgstore/store.cpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace kasava::util {

/// How many partitions `codes` codes get: about the square root, so that the centroids and
/// one partition cost about the same to read.
int partition_count(std::size_t codes);

/// Centroids (`k` codes of `bytes` bytes, back to back) of the `count` codes in `sample`.
/// Deterministic: the same sample gives the same centroids. Fewer than `k` distinct codes give
/// centroids that repeat, whose partitions stay empty.
std::vector<std::uint8_t> train_centroids(const std::uint8_t* sample, std::size_t count,
                                          std::size_t bytes, int k);

/// The partition of each of `count` codes: the index of its nearest centroid (the lowest
/// index among equally near ones).
std::vector<std::uint32_t> assign_partitions(const std::uint8_t* codes, std::size_t count,
                                             const std::vector<std::uint8_t>& centroids,
                                             std::size_t bytes);

/// Partition indexes ordered by the Hamming distance of their centroid to `query`, nearest
/// first (the lower index first among equally near ones).
std::vector<std::uint32_t> partitions_by_distance(const std::vector<std::uint8_t>& centroids,
                                                  const std::uint8_t* query, std::size_t bytes);

} // namespace kasava::util
