// k-majority clustering of binary codes and the nearest-centroid questions a partitioned
// search asks (see code_partitions.hpp).
#include "core/util/code_partitions.hpp"

#include "core/util/hamming.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <thread>

namespace kasava::util {
namespace {

// Rounds of assignment and majority: the partitions barely move after a few, and a search
// that probes several partitions does not need the last percent of their quality.
constexpr int k_training_rounds = 8;

// The nearest of `k` centroids to `code`.
std::uint32_t nearest_centroid(const std::vector<std::uint8_t>& centroids, std::size_t k,
                               const std::uint8_t* code, std::size_t bytes) {
  return static_cast<std::uint32_t>(nearest_code(centroids.data(), k, code, bytes));
}

} // namespace

int partition_count(std::size_t codes) {
  return std::max(1, static_cast<int>(std::lround(std::sqrt(static_cast<double>(codes)))));
}

std::vector<std::uint8_t> train_centroids(const std::uint8_t* sample, std::size_t count,
                                          std::size_t bytes, int k) {
  const auto partitions = static_cast<std::size_t>(std::max(k, 1));
  std::vector<std::uint8_t> centroids(partitions * bytes, 0);
  if (count == 0 || bytes == 0) return centroids;
  // Seeds spread evenly over the sample.
  for (std::size_t p = 0; p < partitions; ++p) {
    const std::size_t from = p * count / partitions;
    std::copy_n(sample + from * bytes, bytes, centroids.begin() + static_cast<std::ptrdiff_t>(p * bytes));
  }
  const std::size_t bits = bytes * 8;
  std::vector<std::uint32_t> members(partitions);
  std::vector<std::uint32_t> ones(partitions * bits);
  std::vector<std::uint32_t> assignment(count, 0);
  for (int round = 0; round < k_training_rounds; ++round) {
    bool moved = round == 0;
    for (std::size_t i = 0; i < count; ++i) {
      const std::uint32_t nearest = nearest_centroid(centroids, partitions, sample + i * bytes, bytes);
      moved = moved || nearest != assignment[i];
      assignment[i] = nearest;
    }
    if (!moved) break;
    std::fill(members.begin(), members.end(), 0);
    std::fill(ones.begin(), ones.end(), 0);
    for (std::size_t i = 0; i < count; ++i) {
      const std::uint8_t* code = sample + i * bytes;
      std::uint32_t* counts = ones.data() + assignment[i] * bits;
      ++members[assignment[i]];
      for (std::size_t bit = 0; bit < bits; ++bit) counts[bit] += (code[bit / 8] >> (bit % 8)) & 1u;
    }
    for (std::size_t p = 0; p < partitions; ++p) {
      if (members[p] == 0) continue;  // an empty partition keeps its centroid
      std::uint8_t* centroid = centroids.data() + p * bytes;
      const std::uint32_t* counts = ones.data() + p * bits;
      for (std::size_t bit = 0; bit < bits; ++bit) {
        const std::uint32_t twice = 2 * counts[bit];
        if (twice == members[p]) continue;  // a tie keeps the bit
        const auto mask = static_cast<std::uint8_t>(1u << (bit % 8));
        if (twice > members[p]) {
          centroid[bit / 8] |= mask;
        } else {
          centroid[bit / 8] &= static_cast<std::uint8_t>(~mask);
        }
      }
    }
  }
  return centroids;
}

std::vector<std::uint32_t> assign_partitions(const std::uint8_t* codes, std::size_t count,
                                             const std::vector<std::uint8_t>& centroids,
                                             std::size_t bytes) {
  std::vector<std::uint32_t> assignment(count, 0);
  if (bytes == 0 || centroids.size() < bytes) return assignment;
  const std::size_t k = centroids.size() / bytes;
  const auto assign = [&](std::size_t from, std::size_t to) {
    for (std::size_t i = from; i < to; ++i) assignment[i] = nearest_centroid(centroids, k, codes + i * bytes, bytes);
  };
  // The kernel's 1.44M codes against 1,200 centroids: about 5 s of CPU, shared by the cores
  // when there is enough of it to be worth a thread.
  const std::size_t threads =
      count * k < (std::size_t{1} << 20) ? 1 : std::clamp<std::size_t>(std::thread::hardware_concurrency(), 1, 8);
  std::vector<std::thread> workers;
  for (std::size_t t = 1; t < threads; ++t) {
    workers.emplace_back(assign, t * count / threads, (t + 1) * count / threads);
  }
  assign(0, count / threads);
  for (auto& worker : workers) worker.join();
  return assignment;
}

std::vector<std::uint32_t> partitions_by_distance(const std::vector<std::uint8_t>& centroids,
                                                  const std::uint8_t* query, std::size_t bytes) {
  if (bytes == 0) return {};
  const std::size_t k = centroids.size() / bytes;
  std::vector<std::uint16_t> distances(k);
  hamming_distances(centroids.data(), k, query, bytes, distances.data());
  std::vector<std::uint32_t> order(k);
  std::iota(order.begin(), order.end(), 0u);
  std::stable_sort(order.begin(), order.end(),
                   [&](std::uint32_t a, std::uint32_t b) { return distances[a] < distances[b]; });
  return order;
}

} // namespace kasava::util
