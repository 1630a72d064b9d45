// The embedder interface: turns chunk texts and queries into vectors. The seam where the
// built-in model and remote providers (Voyage, OpenAI-compatible) plug in; the index records
// which model built it (meta "embedding_model") so asking with another one is a clear error.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "core/util/result.hpp"

namespace kasava::embed {

/// Documents and queries are embedded differently by asymmetric models (Voyage's input_type).
enum class InputKind { document, query };

/// Which inputs of an embed_partial() call could not be embedded, and why.
struct EmbedFailure {
  std::size_t begin = 0;  ///< inputs [begin, end) of the call
  std::size_t end = 0;
  std::string message;
  /// Trying again later cannot help (a rejected API key, an unknown model, a request the
  /// service refuses whatever its inputs): the caller should stop and say so, not keep the
  /// inputs for a later run.
  bool permanent = false;
};

/// The outcome of embed_partial(): a vector per input (empty for failed ones) and the
/// failures, in input order.
struct EmbedReport {
  std::vector<std::vector<float>> vectors;
  std::vector<EmbedFailure> failures;
  bool ok() const { return failures.empty(); }
};

/// Where an embedder computes, which decides how the indexer uses it.
enum class Locality {
  /// In this process (the built-in model): cheap, never fails for a good input; the indexer
  /// embeds each file's chunks on its worker threads.
  local,
  /// A service over the network: the indexer sends whole windows of chunks at once (full
  /// batches, requests in parallel), looks in the vector cache first, never sends files that
  /// look like secrets, and records chunks that still fail as pending for the next run.
  remote,
};

class Embedder {
public:
  virtual ~Embedder() = default;
  /// Stable identifier recorded in the index, e.g. "builtin:nbow-v1" or "voyage:voyage-code-3".
  virtual std::string model_id() const = 0;
  virtual int dimensions() const = 0;
  virtual Locality locality() const { return Locality::local; }
  /// One vector of dimensions() floats per input, in order; all or nothing.
  virtual util::Result<std::vector<std::vector<float>>> embed(
      const std::vector<std::string_view>& inputs, InputKind kind) = 0;
  /// Best effort: every input is tried, and those that fail are reported instead of failing
  /// the others. The default calls embed() once: all or nothing.
  virtual EmbedReport embed_partial(const std::vector<std::string_view>& inputs, InputKind kind) {
    EmbedReport report;
    auto vectors = embed(inputs, kind);
    if (vectors) {
      report.vectors = std::move(vectors).value();
    } else {
      report.vectors.resize(inputs.size());
      report.failures.push_back({0, inputs.size(), vectors.error().message});
    }
    return report;
  }
};

} // namespace kasava::embed
