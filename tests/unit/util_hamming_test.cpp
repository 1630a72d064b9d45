// Tests for core/util/hamming.cpp: the popcount kernels against a count bit by bit.
#include <catch2/catch.hpp>

#include <algorithm>
#include <random>
#include <vector>

#include "core/util/hamming.hpp"

using namespace kasava;

TEST_CASE("util::hamming_distances equals a bit-by-bit count") {
  std::mt19937 random(11);
  std::uniform_int_distribution<int> byte(0, 255);
  for (const std::size_t bytes : {1u, 5u, 8u, 32u, 40u, 72u}) {
    const std::size_t count = 50;
    std::vector<std::uint8_t> codes(bytes * count);
    std::vector<std::uint8_t> query(bytes);
    for (auto& b : codes) b = static_cast<std::uint8_t>(byte(random));
    for (auto& b : query) b = static_cast<std::uint8_t>(byte(random));
    std::vector<std::uint16_t> distances(count);
    util::hamming_distances(codes.data(), count, query.data(), bytes, distances.data());
    for (std::size_t c = 0; c < count; ++c) {
      int expected = 0;
      for (std::size_t i = 0; i < bytes * 8; ++i) {
        expected += ((codes[c * bytes + i / 8] ^ query[i / 8]) >> (i % 8)) & 1;
      }
      CHECK(distances[c] == expected);
      CHECK(util::hamming_distance(codes.data() + c * bytes, query.data(), bytes) == expected);
    }
    // nearest_code: the first of the smallest distances.
    const auto smallest = std::min_element(distances.begin(), distances.end());
    CHECK(util::nearest_code(codes.data(), count, query.data(), bytes) ==
          static_cast<std::size_t>(smallest - distances.begin()));
    std::copy_n(query.begin(), bytes, codes.begin() + static_cast<std::ptrdiff_t>(30 * bytes));  // distance 0 at 30
    std::copy_n(query.begin(), bytes, codes.begin() + static_cast<std::ptrdiff_t>(40 * bytes));  // and at 40
    CHECK(util::nearest_code(codes.data(), count, query.data(), bytes) == 30);
  }
  CHECK(util::nearest_code(nullptr, 0, nullptr, 8) == 0);
}
