// Tests core/embed/model.cpp: encoding, the file format (its word table, the conversion from
// version 1) and its errors, the compiled-in model.
#include <catch2/catch.hpp>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <fstream>
#include <map>
#include <set>

#include "core/embed/features.hpp"
#include "core/util/hash.hpp"
#include "core/embed/model.hpp"
#include "tests/unit/support.hpp"

using namespace kasava;

namespace {

float cosine(const std::vector<float>& a, const std::vector<float>& b) {
  float sum = 0;
  for (std::size_t i = 0; i < a.size(); ++i) sum += a[i] * b[i];
  return sum;
}

float norm(const std::vector<float>& v) { return std::sqrt(cosine(v, v)); }

/// A small model with made-up numbers, for format tests.
embed::ModelData tiny_model() {
  embed::ModelData data;
  data.name = "tiny";
  data.dims = 8;
  data.buckets = 16;
  data.vocabulary = {"read", "file"};
  data.query_weight = {1.0F, 2.0F};
  data.code_weight = {1.5F, 0.5F};
  data.table.resize((2 + 16) * 8);
  for (std::size_t i = 0; i < data.table.size(); ++i)
    data.table[i] = std::sin(static_cast<float>(i) * 0.7F);
  return data;
}

std::string write_file(const test::TempDir& dir, const std::string& name, const std::string& bytes) {
  const std::string path = dir.file(name);
  test::write(path, bytes);
  return path;
}

void put_u32(std::string& out, std::uint32_t value) {
  for (int i = 0; i < 4; ++i) out += static_cast<char>((value >> (8 * i)) & 0xFFU);
}
void put_u64(std::string& out, std::uint64_t value) {
  for (int i = 0; i < 8; ++i) out += static_cast<char>((value >> (8 * i)) & 0xFFU);
}
void put_f32(std::string& out, float value) { put_u32(out, std::bit_cast<std::uint32_t>(value)); }
std::uint32_t get_u32(const std::string& bytes, std::size_t at) {
  std::uint32_t value = 0;
  for (int i = 0; i < 4; ++i)
    value |= static_cast<std::uint32_t>(static_cast<unsigned char>(bytes[at + i])) << (8 * i);
  return value;
}
void set_u32(std::string& bytes, std::size_t at, std::uint32_t value) {
  for (int i = 0; i < 4; ++i) bytes[at + i] = static_cast<char>((value >> (8 * i)) & 0xFFU);
}

/// serialize_model as it was before the word table (format version 1), kept verbatim as the
/// reference the conversion and the current writer are checked against.
std::string serialize_version_1(const embed::ModelData& data) {
  std::string out;
  const auto dims = static_cast<std::size_t>(data.dims);
  const std::size_t rows = data.vocabulary.size() + data.buckets;
  out.append("KASAVAEM");
  put_u32(out, 1);
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
  put_u64(out, util::fnv1a64(out));
  return out;
}

/// Replaces the trailing checksum so that a deliberately damaged image passes it.
std::string with_checksum(std::string bytes) {
  bytes.resize(bytes.size() - 8);
  put_u64(bytes, util::fnv1a64(bytes));
  return bytes;
}

/// A deterministic stream of numbers for made-up models and texts.
class Numbers {
public:
  std::uint32_t next() {
    m_state = m_state * 6364136223846793005ULL + 1442695040888963407ULL;
    return static_cast<std::uint32_t>(m_state >> 33);
  }
  float unit() { return static_cast<float>(next() % 20001) / 10000.0F - 1.0F; }

private:
  std::uint64_t m_state = 1;
};

/// A model of `words` distinct words that text_words keeps as they are (so encoding the word
/// alone looks it up), random rows, and `buckets` n-gram rows.
embed::ModelData wide_model(std::size_t words, std::uint32_t buckets) {
  embed::ModelData data;
  data.name = "wide";
  data.dims = 16;
  data.buckets = buckets;
  Numbers numbers;
  std::set<std::string> seen;
  const std::string letters = "abcdefghijklmnopqrstuvwxyz";
  while (data.vocabulary.size() < words) {
    std::string word;
    const std::size_t length = 1 + numbers.next() % 12;
    for (std::size_t i = 0; i < length; ++i) word += letters[numbers.next() % 26];
    const auto parsed = embed::text_words(word);
    if (parsed.size() != 1 || parsed[0].word != word || !seen.insert(word).second) continue;
    data.vocabulary.push_back(word);
    data.query_weight.push_back(0.5F + numbers.unit() * 0.25F);
    data.code_weight.push_back(0.5F + numbers.unit() * 0.25F);
  }
  data.table.resize((words + buckets) * 16);
  for (float& x : data.table) x = numbers.unit();
  return data;
}

/// The byte offsets of a version 2 image's sections (see core/embed/model.cpp).
struct Layout {
  std::size_t slots_field;
  std::size_t offsets;
  std::size_t slots;
  std::uint32_t slot_count;
};
Layout layout_of(const std::string& bytes, std::size_t vocabulary) {
  const std::size_t name_length = get_u32(bytes, 8 + 4 * 9);
  const std::size_t hash = 8 + 4 * 10 + name_length;
  Layout layout{};
  layout.slots_field = hash + 8;
  layout.slot_count = get_u32(bytes, layout.slots_field);
  const std::uint32_t word_bytes = get_u32(bytes, layout.slots_field + 4);
  layout.offsets = layout.slots_field + 12 + 8 * vocabulary;
  layout.slots = layout.offsets + 4 * (vocabulary + 1) + word_bytes;
  return layout;
}

} // namespace

TEST_CASE("embed::builtin_model loads and has an id with a content hash") {
  const auto model = embed::builtin_model();
  REQUIRE(model != nullptr);
  CHECK(model->dimensions() > 0);
  CHECK(model->model_id().rfind("builtin:", 0) == 0);
  CHECK(model->model_id().size() > std::string("builtin:").size() + 9);
  CHECK(embed::builtin_model() == model);
}

TEST_CASE("embed::Model::encode is deterministic and L2-normalised") {
  const auto model = embed::builtin_model();
  const auto a = model->encode("read a csv file into a dict", embed::InputKind::query);
  const auto b = model->encode("read a csv file into a dict", embed::InputKind::query);
  REQUIRE(a.size() == static_cast<std::size_t>(model->dimensions()));
  CHECK(a == b);
  CHECK(norm(a) == Approx(1.0F).margin(1e-4));
  const auto code = model->encode("def parseConfigFile(path):\n    return yaml.load(open(path))",
                                   embed::InputKind::document);
  CHECK(norm(code) == Approx(1.0F).margin(1e-4));
}

TEST_CASE("embed::Model::encode gives zeros for a text without words") {
  const auto model = embed::builtin_model();
  const auto v = model->encode("  ()[]{} 12 ", embed::InputKind::query);
  CHECK(norm(v) == 0.0F);
  CHECK(model->encode("", embed::InputKind::document) == v);
}

TEST_CASE("embed::Model places abbreviations near their words") {
  const auto model = embed::builtin_model();
  const auto auth = model->encode("auth", embed::InputKind::query);
  const auto authenticate = model->encode("authenticate", embed::InputKind::document);
  const auto render = model->encode("render", embed::InputKind::document);
  CHECK(cosine(auth, authenticate) > cosine(auth, render));
  // An identifier never seen whole still gets a vector from its parts and n-grams.
  const auto unseen = model->encode("frobnicateUserAuthToken", embed::InputKind::document);
  CHECK(norm(unseen) == Approx(1.0F).margin(1e-4));
}

TEST_CASE("embed::Model ranks the matching function first") {
  const auto model = embed::builtin_model();
  const auto query = model->encode("read csv file", embed::InputKind::query);
  const auto csv = model->encode(
      "def load_rows(path):\n    with open(path) as f:\n        return list(csv.reader(f))",
      embed::InputKind::document);
  const auto socket = model->encode(
      "def serve(port):\n    s = socket.socket()\n    s.bind(('', port))\n    s.listen()",
      embed::InputKind::document);
  CHECK(cosine(query, csv) > cosine(query, socket));
}

TEST_CASE("embed::serialize_model round-trips through load_model_file") {
  test::TempDir dir;
  const auto data = tiny_model();
  const std::string path = write_file(dir, "tiny.kmodel", embed::serialize_model(data));
  const auto loaded = embed::load_model_file(path);
  REQUIRE(loaded.ok());
  const auto& model = *loaded.value();
  CHECK(model.name() == "tiny");
  CHECK(model.dimensions() == 8);
  CHECK(model.model_id().rfind("builtin:tiny-", 0) == 0);
  // "read" is row 0: its query vector is row 0 normalised (quantisation error aside).
  const auto v = model.encode("read", embed::InputKind::query);
  std::vector<float> row(data.table.begin(), data.table.begin() + 8);
  const float n = norm(row);
  for (float& x : row) x /= n;
  CHECK(cosine(v, row) == Approx(1.0F).margin(1e-3));
  // Unknown words use n-gram rows.
  CHECK(norm(model.encode("zzyzx", embed::InputKind::document)) == Approx(1.0F).margin(1e-4));
  // The id depends on the content.
  auto other = data;
  other.table[3] += 1.0F;
  const auto changed = embed::Model::from_bytes(embed::serialize_model(other), "other");
  REQUIRE(changed.ok());
  CHECK(changed.value()->model_id() != model.model_id());
}

TEST_CASE("embed::load_model_file rejects missing, foreign, truncated and corrupt files") {
  test::TempDir dir;
  const std::string bytes = embed::serialize_model(tiny_model());

  const auto missing = embed::load_model_file(dir.file("nope.kmodel"));
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.error().message == "loading model '" + dir.file("nope.kmodel") + "': cannot open file");

  // A directory opens as a stream too (its end says 2^63 - 1): an error, not an allocation.
  const auto directory = embed::load_model_file(dir.path());
  REQUIRE_FALSE(directory.ok());
  CHECK(directory.error().message.starts_with("loading model '" + dir.path() + "': "));

  const auto foreign = embed::load_model_file(write_file(dir, "foreign", "SQLite format 3\0..."));
  REQUIRE_FALSE(foreign.ok());
  CHECK(foreign.error().message.find("not a kasava model file") != std::string::npos);

  const auto empty = embed::load_model_file(write_file(dir, "empty", ""));
  REQUIRE_FALSE(empty.ok());
  CHECK(empty.error().message.find("not a kasava model file") != std::string::npos);

  for (const std::size_t keep : {std::size_t{12}, std::size_t{40}, bytes.size() / 2, bytes.size() - 1}) {
    const auto truncated = embed::load_model_file(write_file(dir, "cut", bytes.substr(0, keep)));
    INFO(keep);
    REQUIRE_FALSE(truncated.ok());
    CHECK(truncated.error().message.find("truncated file") != std::string::npos);
  }

  auto flipped = bytes;
  flipped[bytes.size() / 2] = static_cast<char>(flipped[bytes.size() / 2] ^ 0x40);
  const auto corrupt = embed::load_model_file(write_file(dir, "corrupt", flipped));
  REQUIRE_FALSE(corrupt.ok());
  CHECK(corrupt.error().message.find("checksum mismatch") != std::string::npos);

  auto future = bytes;
  future[8] = 9;
  const auto version = embed::load_model_file(write_file(dir, "future", future));
  REQUIRE_FALSE(version.ok());
  CHECK(version.error().message.find("unsupported model version 9") != std::string::npos);

  const auto longer = embed::load_model_file(write_file(dir, "longer", bytes + "x"));
  REQUIRE_FALSE(longer.ok());
}

TEST_CASE("embed::Model word table finds every vocabulary word and misses the rest") {
  const auto data = wide_model(5000, 64);
  const auto loaded = embed::Model::from_bytes(embed::serialize_model(data), "wide");
  REQUIRE(loaded.ok());
  const auto& model = *loaded.value();
  // The same n-gram rows without a vocabulary: what any word that is not found encodes to.
  auto bare = data;
  bare.vocabulary.clear();
  bare.query_weight.clear();
  bare.code_weight.clear();
  bare.table.erase(bare.table.begin(), bare.table.begin() + 5000 * 16);
  const auto unknown = embed::Model::from_bytes(embed::serialize_model(bare), "bare");
  REQUIRE(unknown.ok());

  std::size_t wrong = 0;
  for (std::size_t row = 0; row < data.vocabulary.size(); ++row) {
    const auto v = model.encode(data.vocabulary[row], embed::InputKind::query);
    std::vector<float> expected(data.table.begin() + static_cast<std::ptrdiff_t>(row * 16),
                                data.table.begin() + static_cast<std::ptrdiff_t>(row * 16 + 16));
    const float n = norm(expected);
    for (float& x : expected) x /= n;
    if (cosine(v, expected) < 0.999F) ++wrong;
  }
  CHECK(wrong == 0);

  // Words not in the vocabulary, some a prefix or an extension of one, take the n-gram path.
  std::size_t misses = 0;
  for (std::size_t row = 0; row < 500; ++row) {
    for (const std::string& word : {data.vocabulary[row] + "q", "zq" + data.vocabulary[row]}) {
      if (std::find(data.vocabulary.begin(), data.vocabulary.end(), word) != data.vocabulary.end())
        continue;
      if (embed::text_words(word).size() != 1 || embed::text_words(word)[0].word != word) continue;
      ++misses;
      CHECK(model.encode(word, embed::InputKind::document) ==
            unknown.value()->encode(word, embed::InputKind::document));
    }
  }
  CHECK(misses > 500);
}

TEST_CASE("embed::serialize_model writes what upgrade_model makes of a version 1 file") {
  const auto data = wide_model(3000, 256);
  const std::string old_bytes = serialize_version_1(data);
  const auto upgraded = embed::upgrade_model(old_bytes, "old");
  REQUIRE(upgraded.ok());
  // The same rows and weights, the same id, the same bytes as the current writer.
  CHECK(upgraded.value() == embed::serialize_model(data));
  CHECK(embed::upgrade_model(upgraded.value(), "new").value() == upgraded.value());

  const auto from_old = embed::Model::from_bytes(old_bytes, "old");
  const auto from_new = embed::Model::from_bytes(upgraded.value(), "new");
  REQUIRE(from_old.ok());
  REQUIRE(from_new.ok());
  // Version 1's id was its checksum: kept, so indexes made with the old file stay valid.
  const std::uint64_t old_checksum = util::fnv1a64(old_bytes.substr(0, old_bytes.size() - 8));
  char hex[9];
  std::snprintf(hex, sizeof hex, "%08llx",
                static_cast<unsigned long long>(old_checksum & 0xFFFFFFFFULL));
  CHECK(from_new.value()->model_id() == std::string("builtin:wide-") + hex);
  CHECK(from_old.value()->model_id() == from_new.value()->model_id());

  // Texts of known and unknown words, repeated words, names lines: identical vectors.
  Numbers numbers;
  for (int text = 0; text < 2000; ++text) {
    std::string input;
    const std::size_t words = 1 + numbers.next() % 20;
    for (std::size_t w = 0; w < words; ++w) {
      input += numbers.next() % 3 == 0 ? "unknownWord" + std::to_string(numbers.next() % 50)
                                       : data.vocabulary[numbers.next() % 3000];
      input += w == 2 ? '\n' : ' ';
    }
    for (const auto kind : {embed::InputKind::query, embed::InputKind::document})
      REQUIRE(from_old.value()->encode(input, kind) == from_new.value()->encode(input, kind));
  }
}

TEST_CASE("embed::builtin_model encodes the pinned vectors of the committed model") {
  // FNV-1a of the vectors of the texts below, per committed model. 33b05ef7's was made by
  // kasava before the word table (format version 1, unordered_map lookup); 72b20ebc's and
  // 56003c20's by the code that still matched it, when each model was adopted. A model built in with
  // -DKASAVA_BUILTIN_MODEL has no pinned figure and skips this check.
  const auto model = embed::builtin_model();
  const std::map<std::string, std::uint64_t> pinned = {
      {"builtin:kasava-code-v1-33b05ef7", 0x80b6024f89682155ULL},
      {"builtin:kasava-code-v1-72b20ebc", 0x0b68f57165feed03ULL},
      {"builtin:kasava-code-v1-56003c20", 0x62818fed8dd48346ULL}};
  const auto expected = pinned.find(model->model_id());
  if (expected == pinned.end()) {
    WARN("a built-in model without pinned vectors: " << model->model_id());
    return;
  }
  const std::vector<std::string> words = {
      "read", "csv", "file", "parseConfig", "http", "request", "header", "socket", "json",
      "encode", "Store::open", "zzyzx", "frobnicateUserAuthToken", "auth", "retry", "backoff",
      "def", "return", "self", "async", "await", "std::vector<int>", "tmp_dir", "HTTPServer",
      "getUserById", "sha256", "utf8", "décodé", "parsing", "files", "stopped", "x"};
  Numbers numbers;
  std::uint64_t hash = 14695981039346656037ULL;
  for (int text = 0; text < 3000; ++text) {
    std::string input;
    const std::size_t count = 1 + numbers.next() % 24;
    for (std::size_t w = 0; w < count; ++w) {
      input += words[numbers.next() % words.size()];
      input += numbers.next() % 5 == 0 ? '\n' : ' ';
    }
    for (const auto kind : {embed::InputKind::query, embed::InputKind::document}) {
      const auto v = model->encode(input, kind);
      std::string bytes(v.size() * 4, '\0');
      std::memcpy(bytes.data(), v.data(), bytes.size());
      for (const char c : bytes) {
        hash ^= static_cast<unsigned char>(c);
        hash *= 1099511628211ULL;
      }
    }
  }
  CHECK(hash == expected->second);
}

TEST_CASE("embed::Model::encode_all equals encode for each text, bit for bit") {
  // Texts that share words outside the vocabulary (whose n-gram sums encode_all keeps), with
  // more distinct ones than it keeps, so it also starts over.
  const auto model = embed::builtin_model();
  Numbers numbers;
  std::vector<std::string> unknown;
  for (int i = 0; i < 3000; ++i) unknown.push_back("zq" + std::to_string(i) + "xw");
  const std::vector<std::string> known = {"read", "file", "parseConfig", "HTTPServer", "x", "2"};
  std::vector<std::string> texts;
  for (int text = 0; text < 400; ++text) {
    std::string input = "path/to/file.py Parent symbolName\n";
    for (int w = 0; w < 25; ++w) {
      input += numbers.next() % 3 == 0 ? known[numbers.next() % known.size()]
                                       : unknown[numbers.next() % unknown.size()];
      input += ' ';
    }
    texts.push_back(input);
  }
  texts.emplace_back("");
  const std::vector<std::string_view> views(texts.begin(), texts.end());
  for (const auto kind : {embed::InputKind::query, embed::InputKind::document}) {
    const auto all = model->encode_all(views, kind);
    REQUIRE(all.size() == texts.size());
    for (std::size_t i = 0; i < texts.size(); ++i) REQUIRE(all[i] == model->encode(texts[i], kind));
  }
}

TEST_CASE("embed::Model::from_bytes rejects a damaged word table, even with a valid checksum") {
  const auto data = wide_model(200, 16);
  const std::string bytes = embed::serialize_model(data);
  const Layout layout = layout_of(bytes, data.vocabulary.size());
  REQUIRE(layout.slot_count == 512);

  auto check_error = [](const std::string& image, const std::string& expected) {
    const auto loaded = embed::Model::from_bytes(image, "model 'x'");
    REQUIRE_FALSE(loaded.ok());
    CHECK(loaded.error().message == "model 'x': " + expected);
  };
  // Slots that are not a power of two, or fewer than the words.
  for (const std::uint32_t slots : {0U, 511U, 128U}) {
    auto damaged = bytes;
    set_u32(damaged, layout.slots_field, slots);
    check_error(with_checksum(damaged), "corrupt header");
  }
  // A word's offsets out of order.
  auto offsets = bytes;
  set_u32(offsets, layout.offsets + 4 * 10, 0xFFFFFFU);
  check_error(with_checksum(offsets), "corrupt vocabulary");
  // A slot pointing at the wrong row, and every slot full (no probe may run forever).
  auto slots = bytes;
  for (std::uint32_t slot = 0; slot < layout.slot_count; ++slot)
    set_u32(slots, layout.slots + 4 * slot, 7);
  check_error(with_checksum(slots), "corrupt vocabulary");
  // The compiled-in path does not check the table: a damaged one gives wrong vectors, safely.
  const std::string kept = with_checksum(slots);
  const auto unchecked = embed::Model::from_bytes(kept, "unchecked", false);
  REQUIRE(unchecked.ok());
  CHECK(norm(unchecked.value()->encode(data.vocabulary[3] + " nothere", embed::InputKind::query)) ==
        Approx(1.0F).margin(1e-4));

  // A repeated word: refused, as version 1 refused it.
  auto repeated = data;
  repeated.vocabulary[5] = repeated.vocabulary[4];
  check_error(embed::serialize_model(repeated), "corrupt vocabulary");
  check_error(serialize_version_1(repeated), "corrupt vocabulary");
}

TEST_CASE("embed::Model::from_bytes takes a file's id from its content, not its header") {
  const auto data = tiny_model();
  const std::string bytes = embed::serialize_model(data);
  const std::string id = embed::Model::from_bytes(bytes, "x").value()->model_id();
  // A row value changed by hand, checksum redone: another model, another id.
  auto edited = bytes;
  edited[edited.size() - 8 - 3] = static_cast<char>(edited[edited.size() - 8 - 3] ^ 0x01);
  const auto from_file = embed::Model::from_bytes(with_checksum(edited), "x");
  REQUIRE(from_file.ok());
  CHECK(from_file.value()->model_id() != id);
  // The stored hash is the file's own: the compiled-in path trusts it without hashing.
  const std::string kept = with_checksum(edited);
  CHECK(embed::Model::from_bytes(kept, "x", false).value()->model_id() == id);
  CHECK(embed::Model::from_bytes(bytes, "x", false).value()->model_id() == id);
}

TEST_CASE("embed::upgrade_model rejects damaged version 1 files") {
  const std::string old_bytes = serialize_version_1(tiny_model());
  for (const std::size_t keep : {std::size_t{30}, std::size_t{70}, old_bytes.size() - 1}) {
    const auto truncated = embed::upgrade_model(old_bytes.substr(0, keep), "model 'x'");
    INFO(keep);
    REQUIRE_FALSE(truncated.ok());
    CHECK(truncated.error().message == "model 'x': truncated file");
  }
  auto flipped = old_bytes;
  flipped[old_bytes.size() / 2] = static_cast<char>(flipped[old_bytes.size() / 2] ^ 0x40);
  const auto corrupt = embed::upgrade_model(flipped, "model 'x'");
  REQUIRE_FALSE(corrupt.ok());
  CHECK(corrupt.error().message == "model 'x': checksum mismatch (corrupt file)");
  const auto foreign = embed::upgrade_model("SQLite format 3", "model 'x'");
  REQUIRE_FALSE(foreign.ok());
  CHECK(foreign.error().message == "model 'x': not a kasava model file");
  // The compiled-in path reads a version 1 image too, checked, by converting it.
  const auto loaded = embed::Model::from_bytes(flipped, "model 'x'", false);
  REQUIRE_FALSE(loaded.ok());
  CHECK(loaded.error().message == "model 'x': checksum mismatch (corrupt file)");
}

TEST_CASE("embed::make_model_embedder wraps a model") {
  auto embedder = embed::make_model_embedder(embed::builtin_model());
  CHECK(embedder->model_id() == embed::builtin_model()->model_id());
  CHECK(embedder->dimensions() == embed::builtin_model()->dimensions());
  const auto vectors = embedder->embed({"open a socket", "parse json"}, embed::InputKind::query);
  REQUIRE(vectors.ok());
  REQUIRE(vectors.value().size() == 2);
  CHECK(vectors.value()[1] ==
        embed::builtin_model()->encode("parse json", embed::InputKind::query));
}
