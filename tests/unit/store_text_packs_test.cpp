// Tests of core/store/text_packs.cpp: how a file's chunk strings are packed and compressed, how
// a chunk's reference is written, and that damaged references and packs are refused.
#include <catch2/catch.hpp>

#include <cstdint>
#include <string>
#include <vector>

#include "core/store/text_packs.hpp"

using kasava::store::bytes_needed;
using kasava::store::decode_reference;
using kasava::store::encode_reference;
using kasava::store::k_pack_target_bytes;
using kasava::store::pack_texts;
using kasava::store::PackCodec;
using kasava::store::PackedTexts;
using kasava::store::strings_at;
using kasava::store::TextReference;
using kasava::store::unpack;
using kasava::types::Chunk;

namespace {

std::span<const std::uint8_t> as_bytes(const std::string& text) {
  return {reinterpret_cast<const std::uint8_t*>(text.data()), text.size()};
}

Chunk chunk_of(std::string text, std::string signature = "", std::string doc = "") {
  Chunk chunk;
  chunk.kind = "function";
  chunk.text = std::move(text);
  chunk.signature = std::move(signature);
  chunk.doc = std::move(doc);
  return chunk;
}

// Every chunk's strings, read back the way the store reads them.
void check_round_trip(const std::vector<Chunk>& chunks, const PackedTexts& packed) {
  REQUIRE(packed.entries.size() == chunks.size());
  for (std::size_t i = 0; i < chunks.size(); ++i) {
    const auto& entry = packed.entries[i];
    INFO("chunk " << i);
    if (!entry.packed) {
      CHECK(chunks[i].text.empty());
      CHECK(chunks[i].signature.empty());
      CHECK(chunks[i].doc.empty());
      continue;
    }
    REQUIRE(entry.pack < packed.packs.size());
    auto decoded = unpack(as_bytes(packed.packs[entry.pack]), PackCodec::zstd);
    REQUIRE(decoded);
    const auto strings = strings_at(*decoded, entry.place);
    REQUIRE(strings);
    CHECK(strings->text == chunks[i].text);
    CHECK(strings->signature == chunks[i].signature);
    CHECK(strings->doc == chunks[i].doc);
    // The prefix a reader decodes for this chunk alone holds it too.
    auto prefix =
        unpack(as_bytes(packed.packs[entry.pack]), PackCodec::zstd, bytes_needed(entry.place));
    REQUIRE(prefix);
    CHECK(strings_at(*prefix, entry.place)->text == chunks[i].text);
  }
}

}  // namespace

TEST_CASE("store::pack_texts puts a small file's chunks in one pack, byte for byte") {
  std::vector<Chunk> chunks = {
      chunk_of("def caf\xe9():\n    return '\xe9t\xe9'\n", "def caf\xe9():", "Latin-1, not UTF-8"),
      chunk_of(std::string("nul\0inside", 10), "", ""),
      chunk_of(""),  // nothing to pack
      chunk_of("def caf\xe9():\n    return '\xe9t\xe9'\n", "def caf\xe9():", "")};
  const PackedTexts packed = pack_texts(chunks);
  CHECK(packed.packs.size() == 1);
  CHECK_FALSE(packed.entries[2].packed);
  CHECK(packed.entries[3].place.offset > packed.entries[0].place.offset);
  check_round_trip(chunks, packed);
}

TEST_CASE("store::pack_texts splits a large file into packs of about the target size") {
  std::vector<Chunk> chunks;
  std::size_t total = 0;
  for (int i = 0; total < 5 * k_pack_target_bytes; ++i) {
    std::string text = "int function_" + std::to_string(i) + "(int x) {\n";
    for (int line = 0; line < 20 + i % 30; ++line) {
      text += "  x = x * " + std::to_string(line * i % 97) + " + " + std::to_string(i) + ";\n";
    }
    text += "  return x;\n}\n";
    chunks.push_back(chunk_of(text, "int function_" + std::to_string(i) + "(int x)",
                              "Doc " + std::to_string(i)));
    total += text.size();
  }
  chunks.push_back(chunk_of(std::string(3 * k_pack_target_bytes, 'q')));  // larger than a pack
  const PackedTexts packed = pack_texts(chunks);
  CHECK(packed.packs.size() >= 5);
  CHECK(packed.packs.size() <= 7);
  std::size_t compressed = 0;
  for (std::size_t p = 0; p < packed.packs.size(); ++p) {
    compressed += packed.packs[p].size();
    auto decoded = unpack(as_bytes(packed.packs[p]), PackCodec::zstd);
    REQUIRE(decoded);
    // A pack closes at the first chunk that takes it to the target.
    if (p + 1 < packed.packs.size()) CHECK(decoded->size() >= k_pack_target_bytes);
  }
  CHECK(compressed * 3 < total);
  // Consecutive chunks, consecutive packs.
  for (std::size_t i = 1; i < packed.entries.size(); ++i) {
    CHECK(packed.entries[i].pack >= packed.entries[i - 1].pack);
  }
  check_round_trip(chunks, packed);
}

TEST_CASE("store::encode_reference round trips and decode_reference refuses anything else") {
  const TextReference reference{1234567890123, {70'000, 300, 12, 4'000'000'000u}};
  const std::string bytes = encode_reference(reference);
  const auto decoded = decode_reference(as_bytes(bytes));
  REQUIRE(decoded);
  CHECK(decoded->pack_id == reference.pack_id);
  CHECK(decoded->place.offset == 70'000);
  CHECK(decoded->place.text_bytes == 300);
  CHECK(decoded->place.signature_bytes == 12);
  CHECK(decoded->place.doc_bytes == 4'000'000'000u);

  for (std::size_t size = 0; size < bytes.size(); ++size) {
    CHECK_FALSE(decode_reference(as_bytes(bytes.substr(0, size))));
  }
  CHECK_FALSE(decode_reference(as_bytes(bytes + "x")));  // bytes left over
  CHECK(decoded->codec == PackCodec::zstd);
  std::string other_format = bytes;
  other_format[0] = 3;
  CHECK_FALSE(decode_reference(as_bytes(other_format)));
  other_format[0] = 0;
  CHECK_FALSE(decode_reference(as_bytes(other_format)));
  // Format 1: a reference into an LZ77 pack of a schema 4 or 5 index.
  other_format[0] = 1;
  const auto older = decode_reference(as_bytes(other_format));
  REQUIRE(older);
  CHECK(older->codec == PackCodec::lz77);
  CHECK(older->pack_id == reference.pack_id);
  CHECK(encode_reference(*older) == other_format);
  CHECK_FALSE(decode_reference(as_bytes(encode_reference(TextReference{0, {}}))));  // no row 0
  // A number past 32 bits (5 * 2^32) where a size belongs.
  const std::string too_large = std::string("\x01\x01\x80\x80\x80\x80\x50\x00\x00\x00", 10);
  CHECK_FALSE(decode_reference(as_bytes(too_large)));
  CHECK(decode_reference(as_bytes(std::string("\x01\x01\x00\x00\x00\x00", 6))));
}

TEST_CASE("store::strings_at refuses a place past the end of its pack") {
  const std::string decoded = "textsigdoc";
  CHECK(strings_at(decoded, {0, 4, 3, 3})->doc == "doc");
  CHECK(strings_at(decoded, {4, 0, 3, 3})->signature == "sig");
  CHECK_FALSE(strings_at(decoded, {0, 4, 3, 4}));
  CHECK_FALSE(strings_at(decoded, {11, 0, 0, 0}));
  CHECK_FALSE(strings_at(decoded, {4'000'000'000u, 4'000'000'000u, 0, 0}));  // no overflow
}

TEST_CASE("store::unpack refuses a damaged pack") {
  const std::vector<Chunk> chunks = {chunk_of("int main() { return 0; }\n", "int main()", "")};
  const std::string pack = pack_texts(chunks).packs.at(0);
  CHECK(unpack(as_bytes(pack), PackCodec::zstd));
  CHECK_FALSE(unpack(as_bytes(pack), PackCodec::lz77));  // the reference's codec decides
  CHECK_FALSE(unpack(as_bytes(pack.substr(0, pack.size() - 1)), PackCodec::zstd));
  CHECK_FALSE(unpack(as_bytes(""), PackCodec::zstd));
  CHECK_FALSE(unpack(as_bytes(""), PackCodec::lz77));
  // A size past the largest pack a writer makes is refused before anything is allocated.
  CHECK_FALSE(unpack(as_bytes(std::string("\xff\xff\xff\xff\x0f", 5)), PackCodec::lz77));
  // An LZ77 pack as schema 5 wrote it ("abcabcabcabc").
  CHECK(unpack(as_bytes(std::string("\x0c\x65"
                                    "abc\x03",
                                    6)),
               PackCodec::lz77)
            .value() == "abcabcabcabc");
}
