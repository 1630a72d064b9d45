// Remote embedding providers behind embed::Embedder: Voyage (`voyage:<model>`) and any
// OpenAI-compatible `/v1/embeddings` server (`openai:<model>`: OpenAI, Ollama, vLLM,
// llama.cpp, LM Studio, TEI). Batches inputs, sends requests in parallel through the retrying
// HTTP client, puts results back in input order, L2-normalises them, and explains failures
// without ever quoting the API key.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/embed/embedder.hpp"
#include "core/net/http.hpp"
#include "core/net/retry.hpp"
#include "core/remote/spec.hpp"

namespace kasava::remote {

/// Everything a remote embedder needs besides the model spec. Defaults suit the real services.
struct RemoteSettings {
  /// Up to and including the version, without "/embeddings"; empty: the provider's default
  /// (https://api.voyageai.com/v1, https://api.openai.com/v1).
  std::string base_url;
  std::string api_key;  ///< empty: no Authorization header
  /// Voyage's output_dimension (256/512/1024/2048) or OpenAI's `dimensions`.
  std::optional<int> output_dimension;
  /// Voyage's output_dtype: "float" or "int8" (smaller responses; other types are packed
  /// bits or offset values this client does not decode).
  std::string output_dtype = "float";
  /// The vector length when known in advance; 0: from a table of known models, else learnt
  /// from the first response.
  int dimensions = 0;

  std::size_t max_batch_inputs = 128;
  std::size_t max_batch_tokens = 120'000;  ///< estimated (bytes / 4)
  int max_parallel_requests = 4;

  net::Timeouts timeouts;
  net::RetryPolicy retry;
  double requests_per_second = 0;  ///< 0: no client-side limit
  int rate_burst = 4;
  int breaker_threshold = 8;  ///< consecutive failed attempts that open the circuit
  std::chrono::milliseconds breaker_cool_down{30'000};

  net::Clock* clock = nullptr;      ///< null: the system clock (tests inject one)
  std::function<double()> uniform;  ///< jitter source (tests make it deterministic)
  std::function<void(const net::RetryEvent&)> on_retry;
  const std::atomic<bool>* cancel = nullptr;
};

/// The environment variable holding the provider's key: "VOYAGE_API_KEY", "OPENAI_API_KEY".
const char* key_variable(Provider provider);
/// The provider's default base URL.
const char* default_base_url(Provider provider);
/// Vector length of well-known models, 0 when unknown.
int known_dimensions(Provider provider, std::string_view model);

/// Reports of embed_partial(): see embed::EmbedReport.
using EmbedFailure = embed::EmbedFailure;
using EmbedReport = embed::EmbedReport;

class RemoteEmbedder final : public embed::Embedder {
public:
  /// `http` is the transport (libcurl in production, shared by embedders); it is wrapped in
  /// this embedder's own retry policy, rate limiter and circuit breaker.
  RemoteEmbedder(ModelSpec spec, RemoteSettings settings, std::shared_ptr<net::HttpClient> http);

  /// "voyage:voyage-code-3", with "@<n>" when an output dimension is set.
  std::string model_id() const override;
  /// 0 until known (see RemoteSettings::dimensions).
  int dimensions() const override { return m_dimensions.load(); }
  embed::Locality locality() const override { return embed::Locality::remote; }
  /// All or nothing: the vectors, or the first failure (with a count of the others).
  util::Result<std::vector<std::vector<float>>> embed(const std::vector<std::string_view>& inputs,
                                                      embed::InputKind kind) override;
  /// Best effort: every batch is tried; a batch rejected with 400 is split until the
  /// rejected inputs are found, so the rest still get vectors.
  EmbedReport embed_partial(const std::vector<std::string_view>& inputs,
                            embed::InputKind kind) override;

  /// Makes dimensions() known: when 0, embeds one short query to learn the vector length
  /// (one request). For callers that must size storage before the first real batch.
  util::Result<int> probe_dimensions();

  /// HTTP attempts sent so far (retries included).
  long requests_sent() const { return m_retrying->attempts_sent(); }
  /// Tokens the provider reported (usage.total_tokens), summed.
  long long tokens_used() const { return m_tokens.load(); }

private:
  enum class OnError { stop, continue_ };
  EmbedReport run(const std::vector<std::string_view>& inputs, embed::InputKind kind,
                  OnError on_error);
  /// Embeds inputs [begin, end) into report.vectors, splitting on 400; failures appended to
  /// `failures`.
  void embed_range(const std::vector<std::string_view>& inputs, std::size_t begin, std::size_t end,
                   embed::InputKind kind, EmbedReport& report, std::vector<EmbedFailure>& failures);
  std::string describe_status(const net::HttpOutcome& outcome, std::size_t begin,
                              std::size_t end) const;
  std::string clean(std::string message) const;

  ModelSpec m_spec;
  RemoteSettings m_settings;
  std::string m_url;
  std::string m_label;  ///< "voyage" or "openai-compatible server at <url>"
  std::shared_ptr<net::HttpClient> m_http;
  std::unique_ptr<net::RetryingClient> m_retrying;
  std::atomic<int> m_dimensions{0};
  std::atomic<long long> m_tokens{0};
};

/// A remote embedder for `spec` over libcurl (or `http` when given). Errors: a builtin spec,
/// a Voyage spec without a key ("voyage:voyage-code-3 needs an API key: set VOYAGE_API_KEY"),
/// an invalid output dimension or output type, a base URL that is not http(s).
util::Result<std::unique_ptr<RemoteEmbedder>> make_remote_embedder(
    const ModelSpec& spec, RemoteSettings settings,
    std::shared_ptr<net::HttpClient> http = nullptr);

}  // namespace kasava::remote
