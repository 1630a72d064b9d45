// The partitions of a model's codes in the shared store (schema 6): an inverted file over
// Hamming space, as the local index keeps one (util/code_partitions.hpp), so that a search
// across most of the store reads the codes of the partitions nearest its query instead of
// every code. A publish gives each code it writes its nearest centroid; a publish that finds
// the model's codes grown past a bound trains the centroids again from all of them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/pgstore/store.hpp"

namespace kasava::pgstore {

class Connection;

/// A model's centroids as `code_partitions` holds them.
struct CodePartitions {
  std::int64_t generation = 0;          ///< incremented by each training
  std::size_t code_bytes = 0;           ///< the length of the codes partitioned
  std::vector<std::uint8_t> centroids;  ///< count() codes of code_bytes, back to back
  std::vector<std::int64_t> sizes;      ///< codes in each partition when trained
  std::int64_t trained_codes = 0;       ///< codes of the model when trained

  std::size_t count() const { return sizes.size(); }
};

/// The model's partitions, or nullopt when it has none (or a row that does not hold
/// together: a damaged store is read whole).
std::optional<CodePartitions> read_partitions(Connection& connection, std::int16_t model);

/// The partition of each code (raw bytes) as a publish writes it: its nearest centroid, or
/// -1 when the model has no partitions or the code is not of their length.
std::vector<std::int32_t> partitions_of(const std::optional<CodePartitions>& partitions,
                                        const std::vector<const std::string*>& codes);

/// The partitions a search for `code` reads: -1 (codes written before the centroids) and
/// the nearest ones until their sizes reach `share` of the trained codes.
std::vector<std::int32_t> partitions_to_read(const CodePartitions& partitions, const std::string& code,
                                             double share);

/// Trains the model's centroids from every code it has and gives each code its partition,
/// in one transaction, when the model has at least k_partition_min_codes codes and none are
/// trained yet or the codes have doubled since. It takes the publishers' lock
/// (k_collect_lock) exclusively, so no publish is writing codes against older centroids;
/// when a publish or a collection holds it, nothing is done (a later publish does it).
/// Returns the codes partitioned, 0 when nothing was done. `min_codes`: for tests.
std::int64_t train_partitions(Connection& connection, std::int16_t model,
                              std::int64_t min_codes = k_partition_min_codes);

} // namespace kasava::pgstore
