// The embedder interface: turns chunk texts and queries into vectors. The seam where the
// built-in model and remote providers (Voyage, OpenAI-compatible) plug in; the index records
// which model built it (meta "embedding_model") so asking with another one is a clear error.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/util/result.hpp"

namespace kasava::embed {

/// Documents and queries are embedded differently by asymmetric models (Voyage's input_type).
enum class InputKind { document, query };

class Embedder {
public:
  virtual ~Embedder() = default;
  /// Stable identifier recorded in the index, e.g. "builtin:nbow-v1" or "voyage:voyage-code-3".
  virtual std::string model_id() const = 0;
  virtual int dimensions() const = 0;
  /// One vector of dimensions() floats per input, in order.
  virtual util::Result<std::vector<std::vector<float>>> embed(
      const std::vector<std::string_view>& inputs, InputKind kind) = 0;
};

} // namespace kasava::embed
