// Tests of the chunk-text compressor (core/util/compression.cpp): round trips of every kind of
// input, the stream format pinned byte for byte (indexes store it), prefixes, and a decoder
// that rejects every truncation and survives every damaged byte.
#include <catch2/catch.hpp>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "core/util/compression.hpp"

using kasava::util::compress;
using kasava::util::decompress;
using kasava::util::decompressed_size;

namespace {

constexpr std::size_t k_no_limit = std::size_t{1} << 30;

std::string random_bytes(std::size_t size, std::uint32_t seed) {
  std::mt19937 random(seed);
  std::string bytes(size, '\0');
  for (char& byte : bytes) byte = static_cast<char>(random() & 0xFF);
  return bytes;
}

// Code-like text: functions over a small vocabulary, as source files repeat themselves.
std::string source_text(std::size_t size, std::uint32_t seed) {
  static const char* const k_words[] = {"parse", "config", "buffer", "token",  "index",  "search",
                                        "error", "value",  "count",  "offset", "stream", "client",
                                        "cache", "entry",  "table",  "query",  "path",   "file"};
  std::mt19937 random(seed);
  auto word = [&] { return std::string(k_words[random() % std::size(k_words)]); };
  std::string text;
  while (text.size() < size) {
    const std::string name = word() + "_" + word();
    text += "/// Returns the " + word() + " of the " + word() + ".\n";
    text += "int " + name + "(const " + word() + "& " + word() + ") {\n";
    for (unsigned line = 0; line < 3 + random() % 5; ++line) {
      text += "  if (" + word() + " != nullptr && " + word() + "." + word() + "() > " +
              std::to_string(random() % 100) + ") return " + word() + ";\n";
    }
    text += "  return " + name + "_" + word() + "(" + std::to_string(random() % 1000) + ");\n}\n\n";
  }
  text.resize(size);
  return text;
}

std::string round_trip(const std::string& data) {
  const std::string packed = compress(data);
  REQUIRE(decompressed_size(packed) == data.size());
  auto unpacked = decompress(packed, data.size());
  if (!unpacked) FAIL(unpacked.error().message);
  return *unpacked;
}

std::string bytes(std::initializer_list<int> values) {
  std::string out;
  for (const int value : values) out.push_back(static_cast<char>(value));
  return out;
}

std::string error_of(const std::string& stream, std::size_t max_size = k_no_limit) {
  auto result = decompress(stream, max_size);
  REQUIRE_FALSE(result);
  return result.error().message;
}

}  // namespace

TEST_CASE("util::compress round trips empty, tiny and every short input") {
  CHECK(compress("") == bytes({0}));
  CHECK(round_trip("").empty());
  for (std::size_t size = 1; size <= 40; ++size) {
    const std::string same(size, 'x');
    CHECK(round_trip(same) == same);
    const std::string random = random_bytes(size, static_cast<std::uint32_t>(size));
    CHECK(round_trip(random) == random);
    const std::string text = source_text(size, 7);
    CHECK(round_trip(text) == text);
  }
}

TEST_CASE("util::compress round trips incompressible bytes, barely larger") {
  for (const std::size_t size : {100u, 4096u, 70'000u, 300'000u}) {
    const std::string random = random_bytes(size, 42);
    const std::string packed = compress(random);
    INFO(size << " bytes became " << packed.size());
    CHECK(packed.size() <= size + size / 64 + 16);
    CHECK(round_trip(random) == random);
  }
}

TEST_CASE("util::compress round trips long runs and repeats, far smaller") {
  const std::string run(1'000'000, 'a');
  CHECK(compress(run).size() < 200);
  CHECK(round_trip(run) == run);

  std::string pattern;
  while (pattern.size() < 200'000) pattern += "\t\tcase 42: return \"forty-two\";\n";
  CHECK(compress(pattern).size() < 1'000);
  CHECK(round_trip(pattern) == pattern);

  // Repeats farther back than the compressor looks (64 KiB) still round trip.
  const std::string block = random_bytes(100'000, 3);
  const std::string twice = block + block;
  CHECK(round_trip(twice) == twice);

  // Every byte value, NULs included.
  std::string all;
  for (int round = 0; round < 50; ++round) {
    for (int value = 0; value < 256; ++value) all.push_back(static_cast<char>(value));
  }
  CHECK(round_trip(all) == all);
}

TEST_CASE("util::compress shrinks source text several times") {
  const std::string text = source_text(64 * 1024, 1);
  const std::string packed = compress(text);
  INFO("64 KiB of code-like text became " << packed.size() << " bytes");
  CHECK(packed.size() * 3 < text.size());
  CHECK(round_trip(text) == text);
}

TEST_CASE("util::compress writes the documented format") {
  // "abcabcabcabc": size 12; literals "abc" then a match of 9 at distance 3 (token 3<<5 | 9-4).
  const std::string stream = bytes({12, (3 << 5) | 5, 'a', 'b', 'c', 3});
  CHECK(compress("abcabcabcabc") == stream);
  CHECK(decompress(stream, 12).value() == "abcabcabcabc");

  // Distance 0 repeats the previous distance; a match field of 31 takes a varint of more
  // length; a literal count of 7 takes a varint of more literals.
  const std::string repeat = bytes({11, (2 << 5) | 0, 'x', 'y', 2, (1 << 5) | 0, '-', 0});
  CHECK(decompress(repeat, 11).value() == "xyxyxy-y-y-");
  const std::string long_match = bytes({41, (1 << 5) | 31, 'z', 1, 5});
  CHECK(decompress(long_match, 41).value() == std::string(41, 'z'));
  const std::string many_literals =
      bytes({9, 7 << 5, 2, '1', '2', '3', '4', '5', '6', '7', '8', '9'});
  CHECK(decompress(many_literals, 9).value() == "123456789");
}

TEST_CASE("util::decompress names what is wrong with a malformed stream") {
  CHECK(error_of("") == "damaged compressed data: malformed size");
  CHECK(error_of(bytes({0x80, 0x80, 0x80, 0x80, 0x80, 0x01})) ==
        "damaged compressed data: malformed size");  // a varint over 32 bits
  CHECK(error_of(bytes({0}) + "x") == "damaged compressed data: bytes after its end");
  CHECK(error_of(bytes({3, 1 << 5, 'a'})) == "damaged compressed data: truncated");
  CHECK(error_of(bytes({2, 3 << 5, 'a', 'b', 'c'})) ==
        "damaged compressed data: more bytes than its size");
  CHECK(error_of(bytes({5, (1 << 5) | 0, 'a', 2})) ==
        "damaged compressed data: a match before its start");
  CHECK(error_of(bytes({5, (1 << 5) | 0, 'a', 0})) ==
        "damaged compressed data: a repeated distance before any match");
  CHECK(error_of(bytes({1, (1 << 5) | 3, 'a'})) ==
        "damaged compressed data: a match past its size");
  CHECK(error_of(bytes({5, (1 << 5) | 1, 'a', 1})) ==
        "damaged compressed data: more bytes than its size");
  CHECK(error_of(compress("twelve bytes"), 11) == "damaged compressed data: larger than allowed");
  CHECK(decompress(compress("twelve bytes"), 12));
}

TEST_CASE("util::decompress decodes a prefix without reading the rest") {
  const std::string text = source_text(20'000, 5);
  const std::string packed = compress(text);
  for (std::size_t wanted = 0; wanted <= text.size() + 10; wanted += 97) {
    auto prefix = decompress(packed, text.size(), wanted);
    REQUIRE(prefix);
    CHECK(*prefix == text.substr(0, wanted));
  }
  // Damage after the prefix goes unseen; damage within it does not.
  std::string damaged = packed;
  damaged.resize(packed.size() / 2);
  CHECK(decompress(damaged, text.size(), 100).value() == text.substr(0, 100));
  CHECK_FALSE(decompress(damaged, text.size()));
}

TEST_CASE("util::decompress rejects every truncation of a stream") {
  for (const std::string& data :
       {source_text(3'000, 9), random_bytes(500, 9), std::string(5'000, ' '), std::string("ab")}) {
    const std::string packed = compress(data);
    for (std::size_t size = 0; size < packed.size(); ++size) {
      INFO("truncated to " << size << " of " << packed.size() << " bytes");
      CHECK_FALSE(decompress(packed.substr(0, size), k_no_limit));
    }
  }
}

TEST_CASE("util::decompress survives every damaged byte") {
  // Each byte of each stream flipped in several ways: an error, or bytes of the size the
  // stream says (run under AddressSanitizer in CI, this is what finds a read out of range).
  for (const std::string& data : {source_text(2'000, 11), random_bytes(300, 11),
                                  std::string(1'000, '=') + source_text(500, 12)}) {
    const std::string packed = compress(data);
    std::size_t rejected = 0;
    for (std::size_t at = 0; at < packed.size(); ++at) {
      for (const int flip : {0x01, 0x10, 0x80, 0xFF}) {
        std::string damaged = packed;
        damaged[at] = static_cast<char>(damaged[at] ^ flip);
        const auto result = decompress(damaged, 1 << 20);
        if (!result) {
          ++rejected;
          continue;
        }
        const auto size = decompressed_size(damaged);
        REQUIRE(size);
        CHECK(result->size() == *size);
      }
    }
    CHECK(rejected > 0);
  }
}
