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
// File format (little-endian), version 1:
//   "KASAVAEM" u32 version u32 dims u32 vocabulary u32 buckets u32 min_n u32 max_n
//   f32 unknown_query_weight f32 unknown_code_weight f32 name_boost u32 name_length name
//   vocabulary × (u8 length, bytes)   vocabulary × f32 query weight   vocabulary × f32 code weight
//   (vocabulary + buckets) × (f32 scale, dims × i8)     u64 FNV-1a of everything before
// Rows are quantised symmetrically: scale = max|x| / 127, x ≈ scale × i8.
#include "core/embed/model.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <fstream>
#include <sstream>
#include <unordered_map>

#include "core/embed/features.hpp"

namespace kasava::embed {
namespace {

constexpr std::string_view k_magic = "KASAVAEM";
constexpr std::uint32_t k_version = 1;
// Distinct words encoded per text: enough for any chunk embedding_input produces.
constexpr std::size_t k_max_words = 1024;

void put_u32(std::string& out, std::uint32_t value) {
  for (int i = 0; i < 4; ++i) out += static_cast<char>((value >> (8 * i)) & 0xFFU);
}
void put_u64(std::string& out, std::uint64_t value) {
  for (int i = 0; i < 8; ++i) out += static_cast<char>((value >> (8 * i)) & 0xFFU);
}
void put_f32(std::string& out, float value) {
  std::uint32_t bits = 0;
  std::memcpy(&bits, &value, 4);
  put_u32(out, bits);
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
  float f32() {
    const std::uint32_t bits = u32();
    float value = 0;
    std::memcpy(&value, &bits, 4);
    return value;
  }

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
  std::unordered_map<std::string_view, std::uint32_t> words;
  std::vector<float> query_weight;
  std::vector<float> code_weight;
  const char* table = nullptr;  // rows of (f32 scale, dims × i8)
  std::size_t row_bytes = 0;

  // N-gram rows are summed in integers (an unknown word has a few dozen of them, the bulk of
  // encoding time): each row's scale as a 16-bit multiple of bucket_unit.
  std::vector<std::int16_t> bucket_scale;
  float bucket_unit = 0;

  void add_buckets(const std::vector<std::uint32_t>& grams, float weight, float* out,
                   std::vector<std::int32_t>& sum) const {
    const int n = dims;  // a local: stores through acc could alias the member
    sum.assign(static_cast<std::size_t>(n), 0);
    std::int32_t* acc = sum.data();
    for (const std::uint32_t bucket : grams) {
      const char* data = table + (static_cast<std::size_t>(vocabulary) + bucket) * row_bytes;
      const auto* values = reinterpret_cast<const signed char*>(data + 4);
      const std::int16_t scale = bucket_scale[bucket];
      // 16 × 16 → 32-bit products: a pattern SSE2 vectorises (pmullw/pmulhw).
      for (int i = 0; i < n; ++i) acc[i] += static_cast<std::int16_t>(values[i]) * scale;
    }
    const float factor = weight * bucket_unit;
    for (int i = 0; i < n; ++i) out[i] += factor * static_cast<float>(acc[i]);
  }

  void add_row(std::uint32_t row, float weight, float* out) const {
    const char* data = table + static_cast<std::size_t>(row) * row_bytes;
    float scale = 0;
    std::memcpy(&scale, data, 4);
    const auto* values = reinterpret_cast<const signed char*>(data + 4);
    const float factor = scale * weight;
    for (int i = 0; i < dims; ++i) out[i] += factor * static_cast<float>(values[i]);
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
  auto fail = [&](const std::string& why) -> util::Result<std::shared_ptr<const Model>> {
    return util::Error{origin + ": " + why};
  };
  if (bytes.size() < k_magic.size() || bytes.substr(0, k_magic.size()) != k_magic)
    return fail("not a kasava model file");
  auto impl = std::make_unique<Impl>();
  if (keep) {
    impl->storage.assign(bytes);
    impl->bytes = impl->storage;
  } else {
    impl->bytes = bytes;
  }
  Reader in(impl->bytes);
  in.take(k_magic.size());
  const std::uint32_t version = in.u32();
  if (in.ok() && version != k_version)
    return fail("unsupported model version " + std::to_string(version) + " (this kasava reads " +
                std::to_string(k_version) + ")");
  const std::uint32_t dims = in.u32();
  impl->vocabulary = in.u32();
  impl->buckets = in.u32();
  const std::uint32_t min_n = in.u32();
  const std::uint32_t max_n = in.u32();
  impl->unknown_query_weight = in.f32();
  impl->unknown_code_weight = in.f32();
  impl->name_boost = in.f32();
  const std::uint32_t name_length = in.u32();
  if (!in.ok()) return fail("truncated file");
  if (dims == 0 || dims > 4096 || min_n == 0 || max_n < min_n || max_n > 16 ||
      name_length > 256 || impl->vocabulary > (1U << 24) || impl->buckets > (1U << 24))
    return fail("corrupt header");
  impl->dims = static_cast<int>(dims);
  impl->min_n = static_cast<int>(min_n);
  impl->max_n = static_cast<int>(max_n);
  impl->name = std::string(in.take(name_length));
  impl->words.reserve(impl->vocabulary);
  for (std::uint32_t i = 0; i < impl->vocabulary && in.ok(); ++i) {
    const auto length = static_cast<std::size_t>(in.uint(1));
    const std::string_view word = in.take(length);
    if (in.ok()) impl->words.emplace(word, i);
  }
  impl->query_weight.resize(impl->vocabulary);
  impl->code_weight.resize(impl->vocabulary);
  for (auto& weight : impl->query_weight) weight = in.f32();
  for (auto& weight : impl->code_weight) weight = in.f32();
  impl->row_bytes = 4 + dims;
  const std::size_t rows = static_cast<std::size_t>(impl->vocabulary) + impl->buckets;
  const std::string_view table = in.take(rows * impl->row_bytes);
  const std::size_t checked = in.position();
  const std::uint64_t checksum = in.uint(8);
  if (!in.ok()) return fail("truncated file");
  if (in.position() != impl->bytes.size()) return fail("unexpected bytes after the model");
  if (impl->words.size() != impl->vocabulary) return fail("corrupt vocabulary");
  // The compiled-in image is trusted (and checking it would cost every start some
  // milliseconds); a file from disk is checked.
  if (keep && fnv1a64(impl->bytes.substr(0, checked)) != checksum)
    return fail("checksum mismatch (corrupt file)");
  impl->table = table.data();
  float largest = 0;
  auto row_scale = [&](std::size_t row) {
    float scale = 0;
    std::memcpy(&scale, impl->table + row * impl->row_bytes, 4);
    return scale;
  };
  for (std::uint32_t b = 0; b < impl->buckets; ++b)
    largest = std::max(largest, std::fabs(row_scale(impl->vocabulary + std::size_t{b})));
  if (!std::isfinite(largest)) return fail("corrupt table");
  impl->bucket_unit = largest > 0 ? largest / 32767.0F : 1.0F;
  impl->bucket_scale.resize(impl->buckets);
  for (std::uint32_t b = 0; b < impl->buckets; ++b)
    impl->bucket_scale[b] = static_cast<std::int16_t>(
        std::lround(row_scale(impl->vocabulary + std::size_t{b}) / impl->bucket_unit));
  // The id depends on the content only: the same model from a file or compiled in is the same.
  impl->id = "builtin:" + impl->name + "-" + hex32(checksum);
  return std::shared_ptr<const Model>(new Model(std::move(impl)));
}

void Model::encode(std::string_view text, InputKind kind, std::span<float> out) const {
  const Impl& m = *m_impl;
  std::fill(out.begin(), out.end(), 0.0F);
  if (out.size() != static_cast<std::size_t>(m.dims)) return;
  const bool query = kind == InputKind::query;
  std::vector<std::uint32_t> grams;
  std::vector<std::int32_t> sum;
  for (const auto& [word, count, in_first_line] : text_words(text, k_max_words)) {
    const float repeat = (1.0F + std::log(static_cast<float>(count))) *
                         (!query && in_first_line ? m.name_boost : 1.0F);
    const auto found = m.words.find(word);
    if (found != m.words.end()) {
      const float weight = query ? m.query_weight[found->second] : m.code_weight[found->second];
      m.add_row(found->second, weight * repeat, out.data());
      continue;
    }
    grams.clear();
    ngram_buckets(word, m.min_n, m.max_n, m.buckets, grams);
    if (grams.empty()) continue;
    const float weight = (query ? m.unknown_query_weight : m.unknown_code_weight) * repeat /
                         static_cast<float>(grams.size());
    m.add_buckets(grams, weight, out.data(), sum);
  }
  double norm = 0;
  for (const float x : out) norm += static_cast<double>(x) * x;
  if (norm <= 0) return;
  const auto inverse = static_cast<float>(1.0 / std::sqrt(norm));
  for (float& x : out) x *= inverse;
}

std::vector<float> Model::encode(std::string_view text, InputKind kind) const {
  std::vector<float> out(static_cast<std::size_t>(m_impl->dims));
  encode(text, kind, out);
  return out;
}

std::string serialize_model(const ModelData& data) {
  std::string out;
  const auto dims = static_cast<std::size_t>(data.dims);
  const std::size_t rows = data.vocabulary.size() + data.buckets;
  out.reserve(64 + data.name.size() + data.vocabulary.size() * 16 + rows * (4 + dims));
  out.append(k_magic);
  put_u32(out, k_version);
  put_u32(out, static_cast<std::uint32_t>(data.dims));
  put_u32(out, static_cast<std::uint32_t>(data.vocabulary.size()));
  put_u32(out, data.buckets);
  put_u32(out, static_cast<std::uint32_t>(data.min_n));
  put_u32(out, static_cast<std::uint32_t>(data.max_n));
  put_f32(out, data.unknown_query_weight);
  put_f32(out, data.unknown_code_weight);
  put_f32(out, data.name_boost);
  put_u32(out, static_cast<std::uint32_t>(data.name.size()));
  out += data.name;
  for (const auto& word : data.vocabulary) {
    const std::size_t length = std::min<std::size_t>(word.size(), 255);
    out += static_cast<char>(length);
    out.append(word, 0, length);
  }
  for (std::size_t i = 0; i < data.vocabulary.size(); ++i)
    put_f32(out, i < data.query_weight.size() ? data.query_weight[i] : 1.0F);
  for (std::size_t i = 0; i < data.vocabulary.size(); ++i)
    put_f32(out, i < data.code_weight.size() ? data.code_weight[i] : 1.0F);
  for (std::size_t row = 0; row < rows; ++row) {
    const float* values = data.table.data() + row * dims;
    float largest = 0;
    for (std::size_t i = 0; i < dims; ++i) largest = std::max(largest, std::fabs(values[i]));
    const float scale = largest > 0 ? largest / 127.0F : 1.0F;
    put_f32(out, scale);
    for (std::size_t i = 0; i < dims; ++i) {
      const float q = std::round(values[i] / scale);
      out += static_cast<char>(static_cast<signed char>(std::clamp(q, -127.0F, 127.0F)));
    }
  }
  put_u64(out, fnv1a64(out));
  return out;
}

util::Result<std::shared_ptr<const Model>> load_model_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return util::Error{"loading model '" + path + "': cannot open file"};
  std::ostringstream bytes;
  bytes << in.rdbuf();
  if (in.bad()) return util::Error{"loading model '" + path + "': read error"};
  return Model::from_bytes(bytes.str(), "loading model '" + path + "'", true);
}

namespace {

class ModelEmbedder final : public Embedder {
public:
  explicit ModelEmbedder(std::shared_ptr<const Model> model) : m_model(std::move(model)) {}
  std::string model_id() const override { return m_model->model_id(); }
  int dimensions() const override { return m_model->dimensions(); }
  util::Result<std::vector<std::vector<float>>> embed(const std::vector<std::string_view>& inputs,
                                                      InputKind kind) override {
    std::vector<std::vector<float>> out;
    out.reserve(inputs.size());
    for (const auto input : inputs) out.push_back(m_model->encode(input, kind));
    return out;
  }

private:
  std::shared_ptr<const Model> m_model;
};

} // namespace

std::unique_ptr<Embedder> make_model_embedder(std::shared_ptr<const Model> model) {
  return std::make_unique<ModelEmbedder>(std::move(model));
}

} // namespace kasava::embed
