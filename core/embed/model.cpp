// The built-in model: loading `.kmodel` files and encoding texts.
//
// The model is a neural bag of words with subword information (fastText-style). A text's
// distinct words (features.hpp) each get a vector: a word of the vocabulary has its own row,
// trained as the mean of its word vector and its character n-gram vectors and stored already
// combined; a word outside the vocabulary is the mean of its hashed n-gram rows, so unseen
// identifiers and abbreviations still land near related words. The text's vector is the
// weighted sum of its word vectors, L2-normalised, compared by cosine. Each vocabulary word
// has two learned pooling weights, one for queries and one for code, since "return" says
// little in code but something in a question; repeated words count 1 + ln(count), and on
// the code side words of the first line (embedding_input puts the path, parent and symbol
// there) count name_boost times more.
//
// File format (little-endian), version 2:
//   "KASAVAEM" u32 version u32 dims u32 vocabulary u32 buckets u32 min_n u32 max_n
//   f32 unknown_query_weight f32 unknown_code_weight f32 name_boost u32 name_length name
//   u64 content hash   u32 slots   u32 word_bytes   f32 bucket_unit
//   vocabulary × f32 query weight   vocabulary × f32 code weight
//   (vocabulary + 1) × u32 word offsets   word_bytes × u8 words (concatenated, row order)
//   slots × u32 word table   buckets × i16 bucket scale
//   (vocabulary + buckets) × (f32 scale, dims × i8)     u64 FNV-1a of everything before
// Rows are quantised symmetrically: scale = max|x| / 127, x ≈ scale × i8.
//
// Loading must cost nothing per word: `ask` loads the model at every start, and building a
// hash map of 50,000 words took ~4 ms and 10 MB there. So the file carries its lookup
// structures ready-made and the model reads them in place (from the compiled-in bytes or
// the file's copy), allocating nothing that grows with the vocabulary:
//   - the word table is open addressing with linear probing over `slots` (a power of two,
//     at least twice the vocabulary): a word's hash h is FNV-1a 64 of its bytes, its first
//     slot h mod slots; a slot is 0xFFFFFFFF when empty, else (h >> 56) << 24 | row, so a
//     probe compares the word's bytes only when the top 8 hash bits agree. Word r's bytes
//     are words[offset[r], offset[r + 1]).
//   - bucket scales: n-gram rows are summed in integers (see Impl::unknown_word), each row's
//     scale as an i16 multiple of bucket_unit; stored so that loading never touches the
//     5 MB of bucket rows.
// Lookups check every index they read against the sizes, so a damaged file can give wrong
// vectors but never reads out of bounds; a file from disk is also checked whole (checksum,
// every word found at its row). The compiled-in model is trusted.
//
// The content hash names the model (model_id): it is the FNV-1a of the same model written in
// version 1 (the earlier format: header, vocabulary as (u8 length, bytes), weights, rows),
// which is what version 1's id was made of. So converting a version 1 file (upgrade_model)
// keeps its id, and indexes made with it stay valid: encoding is bit-identical. The compiled-in
// model takes the stored hash as it is; for a file from disk it is recomputed from the content
// (~20 ms), so a file changed by hand is always another model.
#include "core/embed/model.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <unordered_map>

#include "core/embed/features.hpp"
#include "core/util/hash.hpp"

namespace kasava::embed {
namespace {

constexpr std::string_view k_magic = "KASAVAEM";
constexpr std::uint32_t k_version = 2;
// The earlier format: still read, by converting it in memory (upgrade_model).
constexpr std::uint32_t k_version_1 = 1;
// Distinct words encoded per text: enough for any chunk embedding_input produces.
constexpr std::size_t k_max_words = 1024;
// Vocabulary words and n-gram buckets, each: a row index fits the 24 bits of a table slot.
constexpr std::uint32_t k_max_rows = (1U << 24) - 1;
// A model file larger than this is refused before it is read (the built-in one is ~20 MB).
constexpr std::uintmax_t k_max_file_bytes = std::uintmax_t{1} << 30;
// A word table slot: the top 8 bits of the word's hash, then its row in 24 bits.
constexpr std::uint32_t k_row_bits = 24;
constexpr std::uint32_t k_row_mask = (1U << k_row_bits) - 1;
constexpr std::uint32_t k_empty_slot = 0xFFFFFFFFU;
constexpr std::uint32_t k_no_row = 0xFFFFFFFFU;

void put_u16(std::string& out, std::uint16_t value) {
  for (int i = 0; i < 2; ++i) out += static_cast<char>((value >> (8 * i)) & 0xFFU);
}
void put_u32(std::string& out, std::uint32_t value) {
  for (int i = 0; i < 4; ++i) out += static_cast<char>((value >> (8 * i)) & 0xFFU);
}
void put_u64(std::string& out, std::uint64_t value) {
  for (int i = 0; i < 8; ++i) out += static_cast<char>((value >> (8 * i)) & 0xFFU);
}
void put_f32(std::string& out, float value) { put_u32(out, std::bit_cast<std::uint32_t>(value)); }

// In-place reads of the image's little-endian fields, at any alignment.
std::uint32_t load_u32(const char* bytes) {
  std::uint32_t value = 0;
  std::memcpy(&value, bytes, 4);
  if constexpr (std::endian::native == std::endian::big) value = __builtin_bswap32(value);
  return value;
}
float load_f32(const char* bytes) { return std::bit_cast<float>(load_u32(bytes)); }
std::int16_t load_i16(const char* bytes) {
  std::uint16_t value = 0;
  std::memcpy(&value, bytes, 2);
  if constexpr (std::endian::native == std::endian::big) value = __builtin_bswap16(value);
  return static_cast<std::int16_t>(value);
}

/// Reads fields from the image, remembering whether it ran past the end.
class Reader {
public:
  explicit Reader(std::string_view bytes) : m_bytes(bytes) {}
  bool ok() const { return m_ok; }
  std::size_t position() const { return m_position; }
  std::string_view take(std::size_t size) {
    if (!m_ok || m_bytes.size() - m_position < size) {
      m_ok = false;
      return {};
    }
    const auto out = m_bytes.substr(m_position, size);
    m_position += size;
    return out;
  }
  std::uint64_t uint(std::size_t size) {
    const auto bytes = take(size);
    std::uint64_t value = 0;
    for (std::size_t i = 0; i < bytes.size(); ++i)
      value |= static_cast<std::uint64_t>(static_cast<unsigned char>(bytes[i])) << (8 * i);
    return value;
  }
  std::uint32_t u32() { return static_cast<std::uint32_t>(uint(4)); }
  float f32() { return std::bit_cast<float>(u32()); }

private:
  std::string_view m_bytes;
  std::size_t m_position = 0;
  bool m_ok = true;
};

std::string hex32(std::uint64_t hash) {
  static constexpr char k_digits[] = "0123456789abcdef";
  std::string out(8, '0');
  for (int i = 7; i >= 0; --i) {
    out[static_cast<std::size_t>(i)] = k_digits[hash & 0xFU];
    hash >>= 4;
  }
  return out;
}

/// The fields both versions start with.
struct Header {
  std::uint32_t version = 0;
  std::uint32_t dims = 0;
  std::uint32_t vocabulary = 0;
  std::uint32_t buckets = 0;
  std::uint32_t min_n = 3;
  std::uint32_t max_n = 5;
  float unknown_query_weight = 1;
  float unknown_code_weight = 1;
  float name_boost = 1;
  std::string name;
};

/// Reads the magic and the header; an empty string, or why the image is not readable.
std::string read_header(std::string_view bytes, Reader& in, Header& header) {
  if (bytes.size() < k_magic.size() || bytes.substr(0, k_magic.size()) != k_magic)
    return "not a kasava model file";
  in.take(k_magic.size());
  header.version = in.u32();
  if (in.ok() && header.version != k_version && header.version != k_version_1)
    return "unsupported model version " + std::to_string(header.version) +
           " (this kasava reads versions " + std::to_string(k_version_1) + " to " +
           std::to_string(k_version) + ")";
  header.dims = in.u32();
  header.vocabulary = in.u32();
  header.buckets = in.u32();
  header.min_n = in.u32();
  header.max_n = in.u32();
  header.unknown_query_weight = in.f32();
  header.unknown_code_weight = in.f32();
  header.name_boost = in.f32();
  const std::uint32_t name_length = in.u32();
  if (!in.ok()) return "truncated file";
  if (header.dims == 0 || header.dims > 4096 || header.min_n == 0 ||
      header.max_n < header.min_n || header.max_n > 16 || name_length > 256 ||
      header.vocabulary > k_max_rows || header.buckets > k_max_rows)
    return "corrupt header";
  header.name = std::string(in.take(name_length));
  return in.ok() ? "" : "truncated file";
}

/// A model as stored, without the lookup structures derived from it: what both versions hold.
struct Content {
  Header header;
  std::vector<std::string_view> vocabulary;  ///< at most 255 bytes each
  std::vector<float> query_weight;           ///< per vocabulary word
  std::vector<float> code_weight;
  std::string_view rows;  ///< (vocabulary + buckets) × (f32 scale, dims × i8), as stored
};

/// The fields both versions open with: magic, version, sizes, weights and the name.
void put_common_header(std::string& out, const Header& h, std::uint32_t version,
                       std::size_t vocabulary) {
  out.append(k_magic);
  put_u32(out, version);
  put_u32(out, h.dims);
  put_u32(out, static_cast<std::uint32_t>(vocabulary));
  put_u32(out, h.buckets);
  put_u32(out, h.min_n);
  put_u32(out, h.max_n);
  put_f32(out, h.unknown_query_weight);
  put_f32(out, h.unknown_code_weight);
  put_f32(out, h.name_boost);
  put_u32(out, static_cast<std::uint32_t>(h.name.size()));
  out += h.name;
}

/// The header and vocabulary of `content` in version 1, without the rows and checksum.
std::string version_1_head(const Content& content) {
  std::string out;
  put_common_header(out, content.header, k_version_1, content.vocabulary.size());
  for (const auto word : content.vocabulary) {
    out += static_cast<char>(word.size());
    out.append(word);
  }
  for (const float weight : content.query_weight) put_f32(out, weight);
  for (const float weight : content.code_weight) put_f32(out, weight);
  return out;
}

/// The content hash (model_id): FNV-1a of the model written in version 1.
std::uint64_t content_hash(const Content& content) {
  return util::fnv1a64(content.rows, util::fnv1a64(version_1_head(content)));
}

/// Slots of the word table: a power of two, at least twice the vocabulary (load ≤ 1/2).
std::uint32_t table_slots(std::size_t vocabulary) {
  return std::bit_ceil(static_cast<std::uint32_t>(std::max<std::size_t>(2, 2 * vocabulary)));
}

/// Writes `content` in the current version, deriving the word table and bucket scales.
std::string write_image(const Content& content, std::uint64_t hash) {
  const Header& h = content.header;
  const std::size_t vocabulary = content.vocabulary.size();
  const std::size_t row_bytes = 4 + std::size_t{h.dims};
  const std::uint32_t slots = table_slots(vocabulary);
  std::size_t word_bytes = 0;
  for (const auto word : content.vocabulary) word_bytes += word.size();

  // Bucket scales as i16 multiples of one unit, exactly as Impl::unknown_word sums them.
  auto row_scale = [&](std::size_t row) { return load_f32(content.rows.data() + row * row_bytes); };
  float largest = 0;
  for (std::uint32_t b = 0; b < h.buckets; ++b)
    largest = std::max(largest, std::fabs(row_scale(vocabulary + b)));
  const bool finite = std::isfinite(largest);
  // A non-finite unit marks the table corrupt; from_bytes refuses it.
  const float unit = !finite ? largest : largest > 0 ? largest / 32767.0F : 1.0F;

  std::vector<std::uint32_t> table(slots, k_empty_slot);
  const std::uint32_t mask = slots - 1;
  for (std::size_t row = 0; row < vocabulary; ++row) {
    const auto word = content.vocabulary[row];
    const std::uint64_t word_hash = util::fnv1a64(word);
    const auto tag = static_cast<std::uint32_t>(word_hash >> 56) << k_row_bits;
    auto slot = static_cast<std::uint32_t>(word_hash) & mask;
    bool duplicate = false;
    for (; table[slot] != k_empty_slot; slot = (slot + 1) & mask)
      duplicate = duplicate || content.vocabulary[table[slot] & k_row_mask] == word;
    // A repeated word keeps its first row; from_bytes then refuses the file, as version 1 did.
    if (!duplicate) table[slot] = tag | static_cast<std::uint32_t>(row);
  }

  std::string out;
  out.reserve(96 + h.name.size() + vocabulary * 16 + word_bytes + slots * std::size_t{4} +
              h.buckets * std::size_t{2} + content.rows.size());
  put_common_header(out, h, k_version, vocabulary);
  put_u64(out, hash);
  put_u32(out, slots);
  put_u32(out, static_cast<std::uint32_t>(word_bytes));
  put_f32(out, unit);
  for (const float weight : content.query_weight) put_f32(out, weight);
  for (const float weight : content.code_weight) put_f32(out, weight);
  std::uint32_t offset = 0;
  put_u32(out, offset);
  for (const auto word : content.vocabulary) {
    offset += static_cast<std::uint32_t>(word.size());
    put_u32(out, offset);
  }
  for (const auto word : content.vocabulary) out.append(word);
  for (const std::uint32_t slot : table) put_u32(out, slot);
  for (std::uint32_t b = 0; b < h.buckets; ++b) {
    const auto scale =
        finite ? static_cast<std::int16_t>(std::lround(row_scale(vocabulary + b) / unit)) : 0;
    put_u16(out, static_cast<std::uint16_t>(scale));
  }
  out.append(content.rows);
  put_u64(out, util::fnv1a64(out));
  return out;
}

// The loops encoding spends its time in, over one row of `dims` values. x86-64's baseline
// has only SSE2; these are compiled twice (target_clones) and the dynamic loader picks the
// AVX2 version on CPUs that have it, which does the same work in half the instructions. The
// vectors stay bit-identical on every CPU: the integer sums are exact in any order, and the
// float loops do the same operations per element, a multiply rounded, then an add. Never add
// "fma" (or an -march level that has it) to these targets: GCC would fuse the two into one
// rounding, and vectors, model ids and every existing index would disagree by a few bits.
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && defined(__linux__)
#define KASAVA_SIMD_CLONES __attribute__((target_clones("avx2", "default")))
#else
#define KASAVA_SIMD_CLONES
#endif

/// acc[i] += values[i] * scale: an n-gram row's int8 values times its 16-bit scale.
KASAVA_SIMD_CLONES
void add_int_row(const signed char* values, std::int16_t scale, int dims, std::int32_t* acc) {
  // 16 × 16 → 32-bit products: a pattern SSE2 and AVX2 vectorise (pmullw/pmulhw).
  for (int i = 0; i < dims; ++i) acc[i] += static_cast<std::int16_t>(values[i]) * scale;
}

/// out[i] += factor * acc[i].
KASAVA_SIMD_CLONES
void add_scaled_sums(const std::int32_t* acc, float factor, int dims, float* out) {
  for (int i = 0; i < dims; ++i) out[i] += factor * static_cast<float>(acc[i]);
}

/// out[i] += factor * values[i]: a vocabulary word's int8 row.
KASAVA_SIMD_CLONES
void add_scaled_row(const signed char* values, float factor, int dims, float* out) {
  for (int i = 0; i < dims; ++i) out[i] += factor * static_cast<float>(values[i]);
}

#undef KASAVA_SIMD_CLONES

/// The n-gram sum of a word outside the vocabulary (see Model::Impl::unknown_word).
struct UnknownWord {
  std::size_t offset = 0;  ///< where its dims sums start in EncodeState::sums
  std::size_t grams = 0;   ///< how many n-gram rows were summed (0: the word is too short)
};

// What encoding needs besides the model. A word outside the vocabulary is the bulk of
// encoding time (a few dozen n-gram rows), and the chunks of one file share most of their
// identifiers, so Model::encode_all keeps each such word's n-gram sum for all of its texts:
// that spares about half of the rows in CPython's Lib and in the synthetic benchmark
// repository. The sums are exact integers, so a vector is bit-identical whether its words
// were met before or not.
struct EncodeState {
  std::vector<std::uint32_t> grams;
  std::unordered_map<std::string, UnknownWord> unknown;
  std::vector<std::int32_t> sums;
};

// Words an EncodeState keeps the sums of (1 KiB each at 256 dimensions); past this it starts
// over, so memory stays bounded whatever one file holds.
constexpr std::size_t k_max_unknown_words = 2048;

} // namespace

struct Model::Impl {
  std::string storage;  // the image when the model owns it
  std::string_view bytes;
  std::string id;
  std::string name;
  int dims = 0;
  std::uint32_t vocabulary = 0;
  std::uint32_t buckets = 0;
  int min_n = 3;
  int max_n = 5;
  float unknown_query_weight = 1;
  float unknown_code_weight = 1;
  float name_boost = 1;
  // Sections of the image, read in place (see the format above).
  const char* query_weights = nullptr;  // vocabulary × f32
  const char* code_weights = nullptr;   // vocabulary × f32
  const char* offsets = nullptr;        // (vocabulary + 1) × u32
  std::string_view words;               // the vocabulary's bytes
  const char* slots = nullptr;          // slot_mask + 1 × u32
  std::uint32_t slot_mask = 0;
  const char* bucket_scales = nullptr;  // buckets × i16
  float bucket_unit = 0;
  const char* table = nullptr;  // rows of (f32 scale, dims × i8)
  std::size_t row_bytes = 0;

  /// The row of a vocabulary word, or k_no_row.
  std::uint32_t find(std::string_view word) const {
    const std::uint64_t hash = util::fnv1a64(word);
    const auto tag = static_cast<std::uint32_t>(hash >> 56);
    auto slot = static_cast<std::uint32_t>(hash) & slot_mask;
    // At most one pass over the table, even if a damaged one has no empty slot.
    for (std::uint32_t probe = 0; probe <= slot_mask; ++probe, slot = (slot + 1) & slot_mask) {
      const std::uint32_t entry = load_u32(slots + std::size_t{4} * slot);
      if (entry == k_empty_slot) return k_no_row;
      const std::uint32_t row = entry & k_row_mask;
      if (entry >> k_row_bits != tag || row >= vocabulary) continue;
      if (this->word(row) == word) return row;
    }
    return k_no_row;
  }

  /// Vocabulary word `row` (empty when its offsets are damaged).
  std::string_view word(std::uint32_t row) const {
    const std::uint32_t begin = load_u32(offsets + std::size_t{4} * row);
    const std::uint32_t end = load_u32(offsets + std::size_t{4} * row + 4);
    if (begin > end || end > words.size()) return {};
    return words.substr(begin, end - begin);
  }

  float weight(std::uint32_t row, bool query) const {
    return load_f32((query ? query_weights : code_weights) + std::size_t{4} * row);
  }

  // The n-gram sum of a word outside the vocabulary, computed once per EncodeState. Rows are
  // summed in integers, each row's scale as a 16-bit multiple of bucket_unit.
  const UnknownWord& unknown_word(const std::string& word, EncodeState& state) const {
    if (const auto found = state.unknown.find(word); found != state.unknown.end()) {
      return found->second;
    }
    if (state.unknown.size() >= k_max_unknown_words) {
      state.unknown.clear();
      state.sums.clear();
    }
    state.grams.clear();
    ngram_buckets(word, min_n, max_n, buckets, state.grams);
    const UnknownWord unknown{state.sums.size(), state.grams.size()};
    state.sums.resize(unknown.offset + static_cast<std::size_t>(dims), 0);
    std::int32_t* sum = state.sums.data() + unknown.offset;
    for (const std::uint32_t bucket : state.grams) {
      const char* data = table + (static_cast<std::size_t>(vocabulary) + bucket) * row_bytes;
      const std::int16_t scale = load_i16(bucket_scales + std::size_t{2} * bucket);
      add_int_row(reinterpret_cast<const signed char*>(data + 4), scale, dims, sum);
    }
    return state.unknown.emplace(word, unknown).first->second;
  }

  void add_row(std::uint32_t row, float weight, float* out) const {
    const char* data = table + static_cast<std::size_t>(row) * row_bytes;
    const float scale = load_f32(data);
    add_scaled_row(reinterpret_cast<const signed char*>(data + 4), scale * weight, dims, out);
  }

  void encode(std::string_view text, InputKind kind, std::span<float> out,
              EncodeState& state) const {
    std::fill(out.begin(), out.end(), 0.0F);
    if (out.size() != static_cast<std::size_t>(dims)) return;
    const bool query = kind == InputKind::query;
    for (const auto& [word, count, in_first_line] : text_words(text, k_max_words)) {
      const float repeat = (1.0F + std::log(static_cast<float>(count))) *
                           (!query && in_first_line ? name_boost : 1.0F);
      const std::uint32_t row = find(word);
      if (row != k_no_row) {
        add_row(row, weight(row, query) * repeat, out.data());
        continue;
      }
      const UnknownWord& unknown = unknown_word(word, state);
      if (unknown.grams == 0) continue;
      const float word_weight = (query ? unknown_query_weight : unknown_code_weight) * repeat /
                                static_cast<float>(unknown.grams);
      add_scaled_sums(state.sums.data() + unknown.offset, word_weight * bucket_unit, dims,
                      out.data());
    }
    double norm = 0;
    for (const float x : out) norm += static_cast<double>(x) * x;
    if (norm <= 0) return;
    const auto inverse = static_cast<float>(1.0 / std::sqrt(norm));
    for (float& x : out) x *= inverse;
  }
};

Model::Model(std::unique_ptr<Impl> impl) : m_impl(std::move(impl)) {}
Model::~Model() = default;

const std::string& Model::model_id() const { return m_impl->id; }
const std::string& Model::name() const { return m_impl->name; }
int Model::dimensions() const { return m_impl->dims; }

util::Result<std::shared_ptr<const Model>> Model::from_bytes(std::string_view bytes,
                                                             const std::string& origin,
                                                             bool keep) {
  if (keep) return parse(std::string(bytes), {}, origin, true);
  return parse({}, bytes, origin, false);
}

util::Result<std::shared_ptr<const Model>> Model::from_owned_bytes(std::string bytes,
                                                                   const std::string& origin) {
  return parse(std::move(bytes), {}, origin, true);
}

util::Result<std::shared_ptr<const Model>> Model::parse(std::string owned, std::string_view bytes,
                                                        const std::string& origin, bool check) {
  auto fail = [&](const std::string& why) -> util::Result<std::shared_ptr<const Model>> {
    return util::Error{origin + ": " + why};
  };
  if (check) bytes = owned;
  Header header;
  {
    Reader in(bytes);
    if (const auto why = read_header(bytes, in, header); !why.empty()) return fail(why);
  }
  if (header.version == k_version_1) {
    // The earlier format has no ready-made tables: convert it (same rows, same id) and own it.
    auto upgraded = upgrade_model(bytes, origin);
    if (!upgraded) return util::Error{upgraded.error()};
    return parse(std::move(upgraded.value()), {}, origin, true);
  }
  auto impl = std::make_unique<Impl>();
  if (check) {
    impl->storage = std::move(owned);
    impl->bytes = impl->storage;
  } else {
    impl->bytes = bytes;
  }
  Reader in(impl->bytes);
  read_header(impl->bytes, in, header);
  impl->name = header.name;
  impl->dims = static_cast<int>(header.dims);
  impl->vocabulary = header.vocabulary;
  impl->buckets = header.buckets;
  impl->min_n = static_cast<int>(header.min_n);
  impl->max_n = static_cast<int>(header.max_n);
  impl->unknown_query_weight = header.unknown_query_weight;
  impl->unknown_code_weight = header.unknown_code_weight;
  impl->name_boost = header.name_boost;
  std::uint64_t hash = in.uint(8);
  const std::uint32_t slots = in.u32();
  const std::uint32_t word_bytes = in.u32();
  impl->bucket_unit = in.f32();
  if (!in.ok()) return fail("truncated file");
  if (!std::has_single_bit(slots) || slots <= header.vocabulary || slots > 2 * (k_max_rows + 1))
    return fail("corrupt header");
  const std::size_t vocabulary = header.vocabulary;
  impl->query_weights = in.take(4 * vocabulary).data();
  impl->code_weights = in.take(4 * vocabulary).data();
  impl->offsets = in.take(4 * (vocabulary + 1)).data();
  impl->words = in.take(word_bytes);
  impl->slots = in.take(std::size_t{4} * slots).data();
  impl->slot_mask = slots - 1;
  impl->bucket_scales = in.take(std::size_t{2} * header.buckets).data();
  impl->row_bytes = 4 + std::size_t{header.dims};
  const std::size_t rows = vocabulary + header.buckets;
  impl->table = in.take(rows * impl->row_bytes).data();
  const std::size_t checked = in.position();
  const std::uint64_t checksum = in.uint(8);
  if (!in.ok()) return fail("truncated file");
  if (in.position() != impl->bytes.size()) return fail("unexpected bytes after the model");
  // The compiled-in image is trusted (checking it would cost every start some milliseconds);
  // a file from disk is checked whole.
  if (check) {
    if (util::fnv1a64(impl->bytes.substr(0, checked)) != checksum)
      return fail("checksum mismatch (corrupt file)");
    Content content;
    content.header = header;
    content.vocabulary.reserve(vocabulary);
    for (std::uint32_t row = 0; row < header.vocabulary; ++row) {
      const auto word = impl->word(row);
      if (word.size() > 255 || impl->find(word) != row) return fail("corrupt vocabulary");
      content.vocabulary.push_back(word);
      content.query_weight.push_back(impl->weight(row, true));
      content.code_weight.push_back(impl->weight(row, false));
    }
    content.rows = std::string_view(impl->table, rows * impl->row_bytes);
    // The id of a file is what its content hashes to, whatever the header says (a file edited
    // by hand is another model); the stored hash spares the compiled-in model this work.
    hash = content_hash(content);
  }
  if (!std::isfinite(impl->bucket_unit) || impl->bucket_unit <= 0) return fail("corrupt table");
  // The id depends on the content only: the same model from a file or compiled in is the same.
  impl->id = "builtin:" + impl->name + "-" + hex32(hash);
  return std::shared_ptr<const Model>(new Model(std::move(impl)));
}

void Model::encode(std::string_view text, InputKind kind, std::span<float> out) const {
  EncodeState state;
  m_impl->encode(text, kind, out, state);
}

std::vector<std::vector<float>> Model::encode_all(const std::vector<std::string_view>& texts,
                                                  InputKind kind) const {
  EncodeState state;
  std::vector<std::vector<float>> out;
  out.reserve(texts.size());
  for (const auto text : texts) {
    out.emplace_back(static_cast<std::size_t>(m_impl->dims));
    m_impl->encode(text, kind, out.back(), state);
  }
  return out;
}

std::vector<float> Model::encode(std::string_view text, InputKind kind) const {
  std::vector<float> out(static_cast<std::size_t>(m_impl->dims));
  encode(text, kind, out);
  return out;
}

std::string serialize_model(const ModelData& data) {
  Content content;
  Header& h = content.header;
  h.name = data.name;
  h.dims = static_cast<std::uint32_t>(data.dims);
  h.buckets = data.buckets;
  h.min_n = static_cast<std::uint32_t>(data.min_n);
  h.max_n = static_cast<std::uint32_t>(data.max_n);
  h.unknown_query_weight = data.unknown_query_weight;
  h.unknown_code_weight = data.unknown_code_weight;
  h.name_boost = data.name_boost;
  const std::size_t vocabulary = data.vocabulary.size();
  for (const auto& word : data.vocabulary)
    content.vocabulary.push_back(std::string_view(word).substr(0, 255));
  for (std::size_t i = 0; i < vocabulary; ++i) {
    content.query_weight.push_back(i < data.query_weight.size() ? data.query_weight[i] : 1.0F);
    content.code_weight.push_back(i < data.code_weight.size() ? data.code_weight[i] : 1.0F);
  }
  const auto dims = static_cast<std::size_t>(data.dims);
  const std::size_t rows = vocabulary + data.buckets;
  std::string quantised;
  quantised.reserve(rows * (4 + dims));
  for (std::size_t row = 0; row < rows; ++row) {
    const float* values = data.table.data() + row * dims;
    float largest = 0;
    for (std::size_t i = 0; i < dims; ++i) largest = std::max(largest, std::fabs(values[i]));
    const float scale = largest > 0 ? largest / 127.0F : 1.0F;
    put_f32(quantised, scale);
    for (std::size_t i = 0; i < dims; ++i) {
      const float q = std::round(values[i] / scale);
      quantised += static_cast<char>(static_cast<signed char>(std::clamp(q, -127.0F, 127.0F)));
    }
  }
  content.rows = quantised;
  return write_image(content, content_hash(content));
}

util::Result<std::string> upgrade_model(std::string_view bytes, const std::string& origin) {
  auto fail = [&](const std::string& why) -> util::Result<std::string> {
    return util::Error{origin + ": " + why};
  };
  Reader in(bytes);
  Content content;
  if (const auto why = read_header(bytes, in, content.header); !why.empty()) return fail(why);
  if (content.header.version == k_version) return std::string(bytes);
  const Header& h = content.header;
  content.vocabulary.reserve(h.vocabulary);
  for (std::uint32_t i = 0; i < h.vocabulary && in.ok(); ++i) {
    const auto length = static_cast<std::size_t>(in.uint(1));
    content.vocabulary.push_back(in.take(length));
  }
  content.query_weight.resize(h.vocabulary);
  content.code_weight.resize(h.vocabulary);
  for (float& weight : content.query_weight) weight = in.f32();
  for (float& weight : content.code_weight) weight = in.f32();
  const std::size_t rows = std::size_t{h.vocabulary} + h.buckets;
  content.rows = in.take(rows * (4 + std::size_t{h.dims}));
  const std::size_t checked = in.position();
  const std::uint64_t checksum = in.uint(8);
  if (!in.ok()) return fail("truncated file");
  if (in.position() != bytes.size()) return fail("unexpected bytes after the model");
  if (util::fnv1a64(bytes.substr(0, checked)) != checksum)
    return fail("checksum mismatch (corrupt file)");
  // Version 1's checksum is its content hash: the id stays the same.
  return write_image(content, checksum);
}

util::Result<std::shared_ptr<const Model>> load_model_file(const std::string& path) {
  const std::string origin = "loading model '" + path + "'";
  std::ifstream in(path, std::ios::binary);
  if (!in) return util::Error{origin + ": cannot open file"};
  // Not the stream's end position: a directory opens too, and says it ends at 2^63 - 1.
  std::error_code error;
  const std::uintmax_t size = std::filesystem::file_size(path, error);
  if (error) return util::Error{origin + ": " + error.message()};
  if (size > k_max_file_bytes) return util::Error{origin + ": larger than 1 GiB, not a model"};
  // Read once into a string of the file's size and hand it over: a 20 MB model copied through
  // a growing stream buffer cost ~0.5 s of copying and page faults per ask.
  std::string bytes(static_cast<std::size_t>(size), '\0');
  const auto length = static_cast<std::streamsize>(size);
  if (!in.read(bytes.data(), length) || in.gcount() != length)
    return util::Error{origin + ": read error"};
  return Model::from_owned_bytes(std::move(bytes), origin);
}

namespace {

class ModelEmbedder final : public Embedder {
public:
  explicit ModelEmbedder(std::shared_ptr<const Model> model) : m_model(std::move(model)) {}
  std::string model_id() const override { return m_model->model_id(); }
  int dimensions() const override { return m_model->dimensions(); }
  util::Result<std::vector<std::vector<float>>> embed(const std::vector<std::string_view>& inputs,
                                                      InputKind kind) override {
    return m_model->encode_all(inputs, kind);
  }

private:
  std::shared_ptr<const Model> m_model;
};

} // namespace

std::unique_ptr<Embedder> make_model_embedder(std::shared_ptr<const Model> model) {
  return std::make_unique<ModelEmbedder>(std::move(model));
}

} // namespace kasava::embed
