// Code lists: training and probing order (see code_lists.hpp).
#include "core/store/code_lists.hpp"

#include <algorithm>
#include <cmath>
#include <thread>

#include "core/store/vectors.hpp"

namespace kasava::store {
namespace {

// k-means rounds on the sample: the assignment of the sample barely moves after a few.
constexpr int k_training_rounds = 8;
// Sample codes per list for training.
constexpr std::size_t k_sample_per_list = 48;

// Each code's nearest centre (`centres`: lists × bytes), ties to the lower list; codes
// [begin, end) of `codes`.
void assign_range(const std::uint8_t* codes, std::size_t begin, std::size_t end, std::size_t bytes,
                  const std::vector<std::uint8_t>& centres, std::size_t lists,
                  std::uint32_t* list_of) {
  std::vector<std::uint16_t> distances(lists);
  for (std::size_t i = begin; i < end; ++i) {
    hamming_distances(centres.data(), lists, codes + i * bytes, bytes, distances.data());
    list_of[i] = static_cast<std::uint32_t>(
        std::min_element(distances.begin(), distances.end()) - distances.begin());
  }
}

void assign(const std::uint8_t* codes, std::size_t count, std::size_t bytes,
            const std::vector<std::uint8_t>& centres, std::size_t lists, unsigned threads,
            std::uint32_t* list_of) {
  threads = std::max(1u, std::min<unsigned>(threads, static_cast<unsigned>(count / 4096 + 1)));
  std::vector<std::thread> workers;
  const std::size_t step = (count + threads - 1) / threads;
  for (unsigned t = 1; t < threads; ++t) {
    const std::size_t begin = std::min(count, t * step);
    const std::size_t end = std::min(count, begin + step);
    workers.emplace_back(assign_range, codes, begin, end, bytes, std::cref(centres), lists, list_of);
  }
  assign_range(codes, 0, std::min(count, step), bytes, centres, lists, list_of);
  for (auto& worker : workers) worker.join();
}

// Per list and bit, how many members have the bit set.
std::vector<std::uint32_t> bit_counts(const std::uint8_t* codes, std::size_t count,
                                      std::size_t bytes, const std::uint32_t* list_of,
                                      std::size_t lists) {
  const std::size_t bits = bytes * 8;
  std::vector<std::uint32_t> counts(lists * bits, 0);
  for (std::size_t i = 0; i < count; ++i) {
    std::uint32_t* row = counts.data() + static_cast<std::size_t>(list_of[i]) * bits;
    const std::uint8_t* code = codes + i * bytes;
    for (std::size_t bit = 0; bit < bits; ++bit) row[bit] += (code[bit / 8] >> (bit % 8)) & 1u;
  }
  return counts;
}

}  // namespace

std::size_t code_list_count(std::size_t count) {
  return std::max<std::size_t>(1, static_cast<std::size_t>(std::sqrt(static_cast<double>(count)) / 2));
}

CodePartition partition_codes(const std::uint8_t* codes, std::size_t count, std::size_t bytes,
                              std::size_t lists, unsigned threads) {
  CodePartition partition;
  lists = std::max<std::size_t>(1, std::min(lists, count));
  partition.lists = lists;
  partition.list_of.assign(count, 0);
  const std::size_t bits = bytes * 8;
  if (count == 0 || bytes == 0) {
    partition.shares.assign(lists * bits, 0);
    return partition;
  }
  // An evenly spaced sample, and the first centres evenly spaced within it.
  const std::size_t sample_size = std::min(count, lists * k_sample_per_list);
  std::vector<std::uint8_t> sample(sample_size * bytes);
  for (std::size_t i = 0; i < sample_size; ++i) {
    const std::size_t from = i * count / sample_size;
    std::copy_n(codes + from * bytes, bytes, sample.data() + i * bytes);
  }
  std::vector<std::uint8_t> centres(lists * bytes);
  for (std::size_t l = 0; l < lists; ++l) {
    const std::size_t from = l * sample_size / lists;
    std::copy_n(sample.data() + from * bytes, bytes, centres.data() + l * bytes);
  }
  std::vector<std::uint32_t> sample_list(sample_size, 0);
  for (int round = 0; round < k_training_rounds; ++round) {
    assign(sample.data(), sample_size, bytes, centres, lists, threads, sample_list.data());
    const auto counts = bit_counts(sample.data(), sample_size, bytes, sample_list.data(), lists);
    std::vector<std::uint32_t> members(lists, 0);
    for (const std::uint32_t l : sample_list) ++members[l];
    for (std::size_t l = 0; l < lists; ++l) {
      if (members[l] == 0) continue;  // an empty list keeps its centre
      std::uint8_t* centre = centres.data() + l * bytes;
      std::fill_n(centre, bytes, 0);
      for (std::size_t bit = 0; bit < bits; ++bit) {
        if (2 * counts[l * bits + bit] > members[l]) centre[bit / 8] |= static_cast<std::uint8_t>(1u << (bit % 8));
      }
    }
  }
  assign(codes, count, bytes, centres, lists, threads, partition.list_of.data());
  const auto counts = bit_counts(codes, count, bytes, partition.list_of.data(), lists);
  std::vector<std::uint32_t> members(lists, 0);
  for (const std::uint32_t l : partition.list_of) ++members[l];
  partition.shares.assign(lists * bits, 0);
  for (std::size_t l = 0; l < lists; ++l) {
    for (std::size_t bit = 0; bit < bits; ++bit) {
      // An empty list: shares of its centre, so it sorts where its (absent) members would.
      const double share =
          members[l] == 0 ? ((centres[l * bytes + bit / 8] >> (bit % 8)) & 1u)
                          : static_cast<double>(counts[l * bits + bit]) / members[l];
      partition.shares[l * bits + bit] = static_cast<std::uint8_t>(std::lround(share * 255.0));
    }
  }
  return partition;
}

std::vector<std::uint32_t> lists_by_distance(std::span<const std::uint8_t> shares,
                                             std::span<const std::uint8_t> code) {
  const std::size_t bits = code.size() * 8;
  if (bits == 0) return {};
  const std::size_t lists = shares.size() / bits;
  // The expected distance to a member: the share of members whose bit differs from the query's.
  std::vector<std::pair<std::uint32_t, std::uint32_t>> order(lists);
  std::vector<std::uint8_t> query_bits(bits);
  for (std::size_t bit = 0; bit < bits; ++bit) query_bits[bit] = (code[bit / 8] >> (bit % 8)) & 1u;
  for (std::size_t l = 0; l < lists; ++l) {
    const std::uint8_t* row = shares.data() + l * bits;
    std::uint32_t distance = 0;
    for (std::size_t bit = 0; bit < bits; ++bit) {
      distance += query_bits[bit] ? 255u - row[bit] : row[bit];
    }
    order[l] = {distance, static_cast<std::uint32_t>(l)};
  }
  std::sort(order.begin(), order.end());
  std::vector<std::uint32_t> result(lists);
  for (std::size_t l = 0; l < lists; ++l) result[l] = order[l].second;
  return result;
}

}  // namespace kasava::store
