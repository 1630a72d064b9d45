// Tests core/embed/model.cpp: encoding, the file format's errors, the compiled-in model.
#include <catch2/catch.hpp>

#include <cmath>
#include <fstream>

#include "core/embed/features.hpp"
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
