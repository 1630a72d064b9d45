// Tests for core/util/code_partitions.cpp: k-majority clustering finds planted clusters,
// assignment picks the nearest centroid, probing order is nearest first.
#include <catch2/catch.hpp>

#include <random>
#include <set>

#include "core/util/code_partitions.hpp"
#include "core/util/hamming.hpp"

using namespace kasava;

TEST_CASE("util::partition_count is about the square root of the codes, at least one") {
  CHECK(util::partition_count(0) == 1);
  CHECK(util::partition_count(3) == 2);
  CHECK(util::partition_count(1'440'412) == 1200);
}

TEST_CASE("util::train_centroids finds planted clusters and assign_partitions keeps each together") {
  constexpr std::size_t bytes = 32;
  constexpr int clusters = 8;
  constexpr int per_cluster = 200;
  std::mt19937 random(5);
  std::vector<std::uint8_t> centers(clusters * bytes);
  for (auto& byte : centers) byte = static_cast<std::uint8_t>(random());
  // Each code is its cluster's center with 8 of 256 bits flipped; clusters interleaved.
  std::vector<std::uint8_t> codes;
  std::vector<int> truth;
  for (int i = 0; i < per_cluster; ++i) {
    for (int c = 0; c < clusters; ++c) {
      std::vector<std::uint8_t> code(centers.begin() + c * bytes, centers.begin() + (c + 1) * bytes);
      for (int flip = 0; flip < 8; ++flip) {
        const unsigned bit = random() % 256;
        code[bit / 8] = static_cast<std::uint8_t>(code[bit / 8] ^ (1u << (bit % 8)));
      }
      codes.insert(codes.end(), code.begin(), code.end());
      truth.push_back(c);
    }
  }
  const std::size_t count = truth.size();
  const auto centroids = util::train_centroids(codes.data(), count, bytes, clusters);
  REQUIRE(centroids.size() == clusters * bytes);
  CHECK(util::train_centroids(codes.data(), count, bytes, clusters) == centroids);  // deterministic
  const auto assignment = util::assign_partitions(codes.data(), count, centroids, bytes);
  REQUIRE(assignment.size() == count);
  // One partition per planted cluster, and each cluster in one partition.
  std::vector<std::set<std::uint32_t>> partitions_of(clusters);
  for (std::size_t i = 0; i < count; ++i) partitions_of[static_cast<std::size_t>(truth[i])].insert(assignment[i]);
  std::set<std::uint32_t> used;
  for (const auto& partitions : partitions_of) {
    CHECK(partitions.size() == 1);
    used.insert(partitions.begin(), partitions.end());
  }
  CHECK(used.size() == clusters);
  // Each centroid is its cluster's center: the majority of 200 codes, 8 bits flipped in each.
  for (int c = 0; c < clusters; ++c) {
    const std::uint32_t p = *partitions_of[static_cast<std::size_t>(c)].begin();
    CHECK(util::hamming_distance(centroids.data() + p * bytes, centers.data() + c * bytes, bytes) == 0);
  }
  // Probing starts at the query's own cluster and goes on by distance.
  const std::uint8_t* query = codes.data() + 3 * bytes;  // a code of cluster 3
  const auto order = util::partitions_by_distance(centroids, query, bytes);
  REQUIRE(order.size() == clusters);
  CHECK(order.front() == assignment[3]);
  for (std::size_t i = 1; i < order.size(); ++i) {
    CHECK(util::hamming_distance(centroids.data() + order[i - 1] * bytes, query, bytes) <=
          util::hamming_distance(centroids.data() + order[i] * bytes, query, bytes));
  }
}

TEST_CASE("util::train_centroids with fewer codes than partitions and with none") {
  const std::vector<std::uint8_t> codes = {0x0F, 0xF0};
  const auto centroids = util::train_centroids(codes.data(), 2, 1, 4);
  CHECK(centroids.size() == 4);
  const auto assignment = util::assign_partitions(codes.data(), 2, centroids, 1);
  CHECK(centroids[assignment[0]] == 0x0F);
  CHECK(centroids[assignment[1]] == 0xF0);
  CHECK(util::train_centroids(nullptr, 0, 1, 3) == std::vector<std::uint8_t>(3, 0));
  CHECK(util::assign_partitions(codes.data(), 2, {}, 1) == std::vector<std::uint32_t>{0, 0});
}
