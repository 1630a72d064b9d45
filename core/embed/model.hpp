// kasava's built-in code-search model: a table of word and character n-gram vectors pooled
// into one L2-normalised vector per text (see model.cpp for the model, features.hpp for how a
// text becomes features). Loaded from a `.kmodel` file or the copy compiled into the binary.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/embed/embedder.hpp"
#include "core/types/chunk.hpp"
#include "core/util/result.hpp"

namespace kasava::embed {

/// Everything a model file holds, in float: what the trainer produces and serialize_model()
/// writes. Row r of `table` (dims floats from r * dims) is vocabulary word r for
/// r < vocabulary.size(), else n-gram bucket r - vocabulary.size().
struct ModelData {
  std::string name;                      ///< e.g. "kasava-code-v1"
  int dims = 0;                          ///< vector dimensions
  std::uint32_t buckets = 0;             ///< hashed character n-gram buckets
  int min_n = 3;                         ///< shortest character n-gram
  int max_n = 5;                         ///< longest character n-gram
  std::vector<std::string> vocabulary;   ///< known words (stemmed, lower-case), row order
  std::vector<float> query_weight;       ///< per vocabulary word, pooling weight on the query side
  std::vector<float> code_weight;        ///< per vocabulary word, pooling weight on the code side
  float unknown_query_weight = 1.0F;     ///< pooling weight of a word not in the vocabulary
  float unknown_code_weight = 1.0F;
  float name_boost = 1.0F;               ///< code side: factor for words of the first line
  std::vector<float> table;              ///< (vocabulary.size() + buckets) * dims
};

/// Serializes a model into the `.kmodel` format (rows quantised to int8 with a per-row scale,
/// the word table ready-made; see model.cpp).
std::string serialize_model(const ModelData& data);

/// Converts a `.kmodel` image of an earlier format version into the current one without
/// touching the model: the same int8 rows, scales and weights, so encode() gives bit-identical
/// vectors and model_id() stays the same. An image already current is returned as it is.
/// Errors name `origin` ("model 'x.kmodel': checksum mismatch (corrupt file)").
util::Result<std::string> upgrade_model(std::string_view bytes, const std::string& origin);

/// A loaded model. Immutable once loaded; encode() is thread-safe.
class Model {
public:
  ~Model();
  Model(const Model&) = delete;
  Model& operator=(const Model&) = delete;

  /// Parses a `.kmodel` image. `origin` names it in errors ("model 'x.kmodel'"); when `keep`
  /// is true the bytes are copied and checked whole, otherwise they must outlive the model
  /// (the compiled-in one) and are read in place with no per-word work. An image of an
  /// earlier version is converted in memory (upgrade_model) and kept.
  static util::Result<std::shared_ptr<const Model>> from_bytes(std::string_view bytes,
                                                               const std::string& origin,
                                                               bool keep = true);
  /// As from_bytes with `keep`, taking the image instead of copying it (a file read whole).
  static util::Result<std::shared_ptr<const Model>> from_owned_bytes(std::string bytes,
                                                                     const std::string& origin);

  /// "builtin:kasava-code-v1-1a2b3c4d" style: the file's name plus a short content hash.
  const std::string& model_id() const;
  /// The name stored in the file ("kasava-code-v1").
  const std::string& name() const;
  int dimensions() const;

  /// Encodes a text into `out` (dimensions() floats), L2-normalised; all zeros when the text
  /// has no words. Queries and code are weighted differently (InputKind).
  void encode(std::string_view text, InputKind kind, std::span<float> out) const;
  std::vector<float> encode(std::string_view text, InputKind kind) const;
  /// Encodes each text, bit-identical to encode(), sharing work between them: the n-gram
  /// sums of words outside the vocabulary are computed once for all texts, so texts with
  /// common identifiers (the chunks of one file) cost less.
  std::vector<std::vector<float>> encode_all(const std::vector<std::string_view>& texts,
                                             InputKind kind) const;

  struct Impl;

private:
  explicit Model(std::unique_ptr<Impl> impl);
  /// from_bytes and from_owned_bytes: the image is `owned` when `check`, else `bytes`.
  static util::Result<std::shared_ptr<const Model>> parse(std::string owned,
                                                          std::string_view bytes,
                                                          const std::string& origin, bool check);
  std::unique_ptr<Impl> m_impl;
};

/// Loads a `.kmodel` file; errors name the path ("loading model 'x': truncated file").
util::Result<std::shared_ptr<const Model>> load_model_file(const std::string& path);

/// The model compiled into the binary (models/kasava-code.kmodel at build time).
std::shared_ptr<const Model> builtin_model();

/// An Embedder over a model: model_id() and dimensions() are the model's; embed() is thread-safe.
std::unique_ptr<Embedder> make_model_embedder(std::shared_ptr<const Model> model);

/// The text the indexer embeds for a chunk of the file at `path`: the words the model sees
/// best. Its first line holds the names (path, parent, symbol), which the model weighs more
/// on the code side; then the doc comment and the code. The trainer builds the code side of
/// its pairs with this same function, so index and training agree.
std::string embedding_input(std::string_view path, const types::Chunk& chunk);

} // namespace kasava::embed
