// Tests of the chunk-text codecs (core/util/compression.cpp): zstd round trips of every kind of
// input; the LZ77 format of older indexes pinned byte for byte, and streams its compressor
// wrote still decoded; for both decoders prefixes, every truncation rejected and every damaged
// byte survived.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdint>
#include <optional>
#include <random>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/util/compression.hpp"

using kasava::util::compress;
using kasava::util::decompress;
using kasava::util::decompress_lz77;
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

std::string from_hex(std::string_view hex) {
  std::string out;
  for (std::size_t i = 0; i + 1 < hex.size(); i += 2) {
    out.push_back(static_cast<char>(std::stoi(std::string(hex.substr(i, 2)), nullptr, 16)));
  }
  return out;
}

std::string error_of(const std::string& stream, std::size_t max_size = k_no_limit) {
  auto result = decompress(stream, max_size);
  REQUIRE_FALSE(result);
  return result.error().message;
}

std::string lz77_error_of(const std::string& stream, std::size_t max_size = k_no_limit) {
  auto result = decompress_lz77(stream, max_size);
  REQUIRE_FALSE(result);
  return result.error().message;
}

// Streams written by kasava's LZ77 compressor (indexes of schema 4 and 5), kept as they were:
// the compressor is gone, its streams must still decode.
// 996 bytes of 3000
const std::string k_lz77_source_text = from_hex(
    "b817e1122f2f2f2052657475726e732074686520736561726368206f660ee21d70617273652e0a696e742069"
    "6e6465785f73747265616d28636f6e7374207461626c652607e20329207b0a20206966202823e30720213d20"
    "6e756c6c70747220262649e109636c69656e742829203e20393329207278c320706174683b3dab7175657279"
    "3ce10363616368652e66696c653a45323600a46572726f723b010d113b017d013c263776c46f66667365743d"
    "03f7010a3e0152073e25303d008d01043b01200b3a01ad02212e4002b4012e3800031008d802225f8701ec02"
    "283838293b0a7d0a0a9d03c4636f6e66696700008501029c03e305656e7472795f6275666665720002512126"
    "25069c0302f5010bad010215212e890102a60206e202b876616c75659d0302b20107a502463135eb01009701"
    "043d015f0b3d015e08a70213db0301e20412790597044534340085636f756eda03010d119f03019d04013c5f"
    "3334d3040702b40106f0014f3430d304088102039803225fbd039328373332dd03008f0104dc0303940301de"
    "03016c225f9f0302dd0301890304830206de0300c90611ae01037b01af013231dc03109f0302c404212ec202"
    "0cec0101950105a80200e8010b3d008d01232ed005003c2635e402016c1fdc0300a1746f6b656e3d4e3930a1"
    "03088901029e0203a40272393834e20202e40103e20203dd0107dc09018a010bbf0600c6011ddb0927748705"
    "2633e00202c601363b9d030171089d034537320001fc0118a402023d06a3024e36399c0308f00202df01225f"
    "ed0672393235a30200c80104a20202990108e20802f60502a20201be0404bd0806a30210a40803cd0506e807"
    "26368f0a01f60504e80101540b3d02c30b06ac07523934a402039c0a0c9c0300f70c019401013d2632c80401"
    "15069d030ec40b0121212ef901013c26389d030abc0c109e0301b406202ef40302d903253700028e082c3ba5"
    "0802c70503b0067e3637339f0302db07029e0300da0209c005010c2226a2021a9d030123079c032635a30209"
    "a80702bc0f0b3d0137222e8f0202a502063e02ad0618db0304e008069610333599040298020c7d00b902087d"
    "07dc0909830c022311df0306dc0907ba0102cb04043e01f4020a3c04d60a043c2837980a02cd1104dd03069a"
    "0303be0673383230800c02e10203de0302970301de03018a02215fe20809dd030cfb0617820607e408463636"
    "000048253b3e0ea80e02ac0508e3024639370001b00117a60202a00306a6024632357a08ba07026611e30201"
    "060c3d0a7911940b03c10c07ff0c07f014057d045005e002225fcf0a7f383035c10c0007a20302a102225feb"
    "0109a30f01ff0206a3030fa60204a10305cc0406e0090ae7080a8406");

// 305 bytes of 300
const std::string k_lz77_random_bytes = from_hex(
    "ac02e0a50299bf505b51b70d4ca14752186d5cb0fda02dec7d84228c814a25f5e7d4515b98f8914346ab72f2"
    "c07d4f60179b46596b8ab91b2cf58e07b74fc0a8f01bf8df85b547b2e3bb01f08388d7d1444872a04e139975"
    "5aa6bb112b12fd308a2f6ea0ac2808c4a181df697c4ba24813e0543252bbed4826a72277761ff47664849c8d"
    "b941fc5ad576946a916fd1be844aeea7a395c3a3d1067c68f13a41a764c805255b5dfcb27d6fd5d70a40b1d0"
    "75d72b8c84fa762284eca29c5711f1d5ace1b3234efec29393d2b0f96b5ef2b30f20982b13d73249078da24c"
    "ff7ded72f6dbb92a2abb117f51cc76cbd52bdef1f8d15b38a6fcd2f6819ea61e78c9da722e6f2f59dd3be354"
    "391b0405d3c1aa6c79d5f9f8d9f5e20007c150b07fceb1c242b93fdc7af62321eb8a2b307e0021d778");

// 267 bytes of 1500
const std::string k_lz77_run_and_text = from_hex(
    "dc0b3f3d01c407e1112f2f2f2052657475726e732074686520746f6b656e206f660de21d73747265616d2e0a"
    "696e7420656e7472795f717565727928636f6e737420636f756e742619e11e29207b0a202069662028736561"
    "72636820213d206e756c6c707472202626206572726f722e06e1032829203e20383829207276023f233b3dab"
    "76616c75653c038501019901013d45343900c4636c69656e743e022a123fc1636f6e66696740463732008461"
    "6368653f8c7461626c7d01e401222ed401013d45353700a4696e646578008d7061727300019e01212ed50102"
    "f701067a0115043d01870114b80161756e743d2e327908c302029b03235fe801ec02363231293b0a7d0a0ae0"
    "03006b");

// 4 bytes of 2
const std::string k_lz77_ab = from_hex("02406162");

// Both decoders, for the tests that hold for either.
struct Decoder {
  const char* name;
  kasava::util::Result<std::string> (*decode)(std::string_view, std::size_t, std::size_t);
  std::optional<std::size_t> (*size)(std::string_view);
};
const Decoder k_zstd{"zstd", &decompress, &decompressed_size};
const Decoder k_lz77{"lz77", &decompress_lz77, &kasava::util::lz77_decompressed_size};

// Compressed streams and what they decode to, for each decoder.
std::vector<std::pair<std::string, std::string>> streams_of(const Decoder& decoder) {
  if (&decoder == &k_lz77) {
    return {{k_lz77_source_text, source_text(3000, 9)},
            {k_lz77_random_bytes, random_bytes(300, 11)},
            {k_lz77_run_and_text, std::string(1000, '=') + source_text(500, 12)},
            {k_lz77_ab, "ab"}};
  }
  std::vector<std::pair<std::string, std::string>> out;
  for (std::string data : {source_text(3000, 9), random_bytes(300, 11),
                           std::string(1000, '=') + source_text(500, 12), std::string("ab")}) {
    out.emplace_back(compress(data), data);
  }
  return out;
}

}  // namespace

TEST_CASE("util::compress round trips empty, tiny and every short input") {
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

TEST_CASE("util::compress writes zstd frames that say their size") {
  const std::string packed = compress("abcabcabcabc");
  REQUIRE(packed.size() >= 4);
  CHECK(packed.substr(0, 4) == bytes({0x28, 0xB5, 0x2F, 0xFD}));  // zstd's magic number
  CHECK(decompressed_size(packed) == 12);
  CHECK(decompress(packed, 12).value() == "abcabcabcabc");
}

TEST_CASE("util::compress round trips incompressible bytes, barely larger") {
  for (const std::size_t size : {100u, 4096u, 70'000u, 300'000u}) {
    const std::string random = random_bytes(size, 42);
    const std::string packed = compress(random);
    INFO(size << " bytes became " << packed.size());
    CHECK(packed.size() <= size + size / 64 + 32);
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

TEST_CASE("util::decompress names what is wrong with a malformed frame") {
  CHECK(error_of("") == "damaged compressed data: malformed size");
  CHECK(error_of("not a zstd frame") == "damaged compressed data: malformed size");
  const std::string packed = compress("twelve bytes");
  CHECK(error_of(packed + "x") == "damaged compressed data: bytes after its end");
  CHECK(error_of(packed + compress("twelve bytes")) ==
        "damaged compressed data: bytes after its end");  // one frame per stream
  CHECK(error_of(packed.substr(0, packed.size() - 1)) == "damaged compressed data: truncated");
  CHECK(error_of(packed, 11) == "damaged compressed data: larger than allowed");
  CHECK(decompress(packed, 12));
}

TEST_CASE("util::decompress_lz77 reads the documented format") {
  // "abcabcabcabc": size 12; literals "abc" then a match of 9 at distance 3 (token 3<<5 | 9-4).
  const std::string stream = bytes({12, (3 << 5) | 5, 'a', 'b', 'c', 3});
  CHECK(decompress_lz77(stream, 12).value() == "abcabcabcabc");
  CHECK(kasava::util::lz77_decompressed_size(stream) == 12);

  // Distance 0 repeats the previous distance; a match field of 31 takes a varint of more
  // length; a literal count of 7 takes a varint of more literals.
  const std::string repeat = bytes({11, (2 << 5) | 0, 'x', 'y', 2, (1 << 5) | 0, '-', 0});
  CHECK(decompress_lz77(repeat, 11).value() == "xyxyxy-y-y-");
  const std::string long_match = bytes({41, (1 << 5) | 31, 'z', 1, 5});
  CHECK(decompress_lz77(long_match, 41).value() == std::string(41, 'z'));
  const std::string many_literals =
      bytes({9, 7 << 5, 2, '1', '2', '3', '4', '5', '6', '7', '8', '9'});
  CHECK(decompress_lz77(many_literals, 9).value() == "123456789");
  CHECK(decompress_lz77(bytes({0}), 0).value().empty());
}

TEST_CASE("util::decompress_lz77 decodes the streams kasava's LZ77 compressor wrote") {
  for (const auto& [stream, data] : streams_of(k_lz77)) {
    CHECK(decompress_lz77(stream, data.size()).value() == data);
  }
}

TEST_CASE("util::decompress_lz77 names what is wrong with a malformed stream") {
  CHECK(lz77_error_of("") == "damaged compressed data: malformed size");
  CHECK(lz77_error_of(bytes({0x80, 0x80, 0x80, 0x80, 0x80, 0x01})) ==
        "damaged compressed data: malformed size");  // a varint over 32 bits
  CHECK(lz77_error_of(bytes({0}) + "x") == "damaged compressed data: bytes after its end");
  CHECK(lz77_error_of(bytes({3, 1 << 5, 'a'})) == "damaged compressed data: truncated");
  CHECK(lz77_error_of(bytes({2, 3 << 5, 'a', 'b', 'c'})) ==
        "damaged compressed data: more bytes than its size");
  CHECK(lz77_error_of(bytes({5, (1 << 5) | 0, 'a', 2})) ==
        "damaged compressed data: a match before its start");
  CHECK(lz77_error_of(bytes({5, (1 << 5) | 0, 'a', 0})) ==
        "damaged compressed data: a repeated distance before any match");
  CHECK(lz77_error_of(bytes({1, (1 << 5) | 3, 'a'})) ==
        "damaged compressed data: a match past its size");
  CHECK(lz77_error_of(bytes({5, (1 << 5) | 1, 'a', 1})) ==
        "damaged compressed data: more bytes than its size");
  const std::string twelve = bytes({12, 7 << 5, 5}) + "twelve bytes";
  CHECK(lz77_error_of(twelve, 11) == "damaged compressed data: larger than allowed");
  CHECK(decompress_lz77(twelve, 12).value() == "twelve bytes");
}

TEST_CASE("util::decompress and decompress_lz77 decode a prefix") {
  for (const Decoder* decoder : {&k_zstd, &k_lz77}) {
    INFO(decoder->name);
    const auto [packed, text] = streams_of(*decoder).front();
    for (std::size_t wanted = 0; wanted <= text.size() + 10; wanted += 97) {
      auto prefix = decoder->decode(packed, text.size(), wanted);
      REQUIRE(prefix);
      CHECK(*prefix == text.substr(0, wanted));
    }
    CHECK_FALSE(decoder->decode(packed, text.size() - 1, 10));  // the bound still holds
  }
  // LZ77 does not read past the prefix: damage after it goes unseen; within it, it does not.
  const std::string half = k_lz77_source_text.substr(0, k_lz77_source_text.size() / 2);
  CHECK(decompress_lz77(half, 3000, 100).value() == source_text(3000, 9).substr(0, 100));
  CHECK_FALSE(decompress_lz77(half, 3000));
}

TEST_CASE("util::decompress and decompress_lz77 reject every truncation of a stream") {
  for (const Decoder* decoder : {&k_zstd, &k_lz77}) {
    for (const auto& [packed, data] : streams_of(*decoder)) {
      for (std::size_t size = 0; size < packed.size(); ++size) {
        INFO(decoder->name << ": truncated to " << size << " of " << packed.size() << " bytes");
        CHECK_FALSE(decoder->decode(packed.substr(0, size), k_no_limit, k_no_limit));
      }
    }
  }
}

TEST_CASE("util::decompress and decompress_lz77 survive every damaged byte") {
  // Each byte of each stream flipped in several ways: an error, or bytes of the size the
  // stream says (run under AddressSanitizer in CI, this is what finds a read out of range).
  for (const Decoder* decoder : {&k_zstd, &k_lz77}) {
    for (const auto& [packed, data] : streams_of(*decoder)) {
      std::size_t rejected = 0;
      for (std::size_t at = 0; at < packed.size(); ++at) {
        for (const int flip : {0x01, 0x10, 0x80, 0xFF}) {
          std::string damaged = packed;
          damaged[at] = static_cast<char>(damaged[at] ^ flip);
          for (const std::size_t wanted : {std::size_t{100}, k_no_limit}) {
            const auto result = decoder->decode(damaged, 1 << 20, wanted);
            if (!result) {
              ++rejected;
              continue;
            }
            const auto size = decoder->size(damaged);
            REQUIRE(size);
            CHECK(result->size() == std::min(*size, wanted));
          }
        }
      }
      INFO(decoder->name);
      CHECK(rejected > 0);
    }
  }
}
