// Remote embedders (see embedder.hpp). One embed call: plan batches (batching.hpp), let up to
// max_parallel_requests worker threads (util::parallel_for) take batches in order, write each
// batch's vectors into its slots of the result (so order never depends on timing), and collect
// failures per batch.
// A batch rejected with 400/413/422 is split in two to find the input at fault: when both
// halves are rejected too, the error concerns the whole request (bad model, bad parameter)
// and splitting stops, so a request-wide error costs 3 requests, a single bad input about
// 2·log2(batch) more.
#include "core/remote/embedder.hpp"

#include <algorithm>
#include <functional>
#include <mutex>

#include "core/net/curl_client.hpp"
#include "core/remote/batching.hpp"
#include "core/remote/response.hpp"
#include "core/util/parallel.hpp"
#include "core/util/strings.hpp"

namespace kasava::remote {
namespace {

std::string trim_slashes(std::string url) {
  while (!url.empty() && url.back() == '/') url.pop_back();
  return url;
}

bool is_rejection(int status) {
  return status == 400 || status == 413 || status == 422;
}

std::string inputs_text(std::size_t begin, std::size_t end) {
  if (end - begin == 1) return "input " + std::to_string(begin);
  return "inputs " + std::to_string(begin) + "-" + std::to_string(end - 1);
}

}  // namespace

const char* key_variable(Provider provider) {
  return provider == Provider::voyage ? "VOYAGE_API_KEY" : "OPENAI_API_KEY";
}

const char* default_base_url(Provider provider) {
  return provider == Provider::voyage ? "https://api.voyageai.com/v1" : "https://api.openai.com/v1";
}

int known_dimensions(Provider provider, std::string_view model) {
  struct Known {
    Provider provider;
    std::string_view model;
    int dimensions;
  };
  static constexpr Known table[] = {
      {Provider::voyage, "voyage-code-3", 1024},
      {Provider::voyage, "voyage-3", 1024},
      {Provider::voyage, "voyage-3.5", 1024},
      {Provider::voyage, "voyage-3-large", 1024},
      {Provider::voyage, "voyage-3.5-lite", 1024},
      {Provider::voyage, "voyage-3-lite", 512},
      {Provider::voyage, "voyage-code-2", 1536},
      {Provider::voyage, "voyage-2", 1024},
      {Provider::openai, "text-embedding-3-small", 1536},
      {Provider::openai, "text-embedding-3-large", 3072},
      {Provider::openai, "text-embedding-ada-002", 1536},
  };
  for (const Known& k : table)
    if (k.provider == provider && k.model == model) return k.dimensions;
  return 0;
}

RemoteEmbedder::RemoteEmbedder(ModelSpec spec, RemoteSettings settings,
                               std::shared_ptr<net::HttpClient> http)
    : m_spec(std::move(spec)), m_settings(std::move(settings)), m_http(std::move(http)) {
  const std::string base = trim_slashes(
      m_settings.base_url.empty() ? default_base_url(m_spec.provider) : m_settings.base_url);
  m_url = base + "/embeddings";
  m_label = m_spec.provider == Provider::voyage ? std::string("voyage")
                                                : "openai (" + net::display_url(base) + ")";
  int dims = m_settings.dimensions;
  if (dims <= 0 && m_settings.output_dimension) dims = *m_settings.output_dimension;
  if (dims <= 0) dims = known_dimensions(m_spec.provider, m_spec.model);
  m_dimensions = dims;

  net::Clock* clock = m_settings.clock != nullptr ? m_settings.clock : &net::system_clock();
  net::RetryOptions options;
  options.policy = m_settings.retry;
  options.clock = clock;
  options.uniform = m_settings.uniform;
  options.on_retry = m_settings.on_retry;
  if (m_settings.requests_per_second > 0)
    options.rate_limiter = std::make_shared<net::RateLimiter>(m_settings.requests_per_second,
                                                              m_settings.rate_burst, *clock);
  if (m_settings.breaker_threshold > 0)
    options.breaker = std::make_shared<net::CircuitBreaker>(m_settings.breaker_threshold,
                                                            m_settings.breaker_cool_down, *clock);
  m_retrying = std::make_unique<net::RetryingClient>(*m_http, std::move(options));
}

std::string RemoteEmbedder::model_id() const {
  std::string id = m_spec.str();
  if (m_settings.output_dimension) {
    id += '@';
    id += std::to_string(*m_settings.output_dimension);
  }
  return id;
}

std::string RemoteEmbedder::clean(std::string message) const {
  return util::to_valid_utf8(net::redact(std::move(message), {m_settings.api_key}));
}

std::string RemoteEmbedder::describe_status(const net::HttpOutcome& outcome, std::size_t begin,
                                            std::size_t end) const {
  const int status = outcome.response.status;
  const std::string code = "HTTP " + std::to_string(status);
  const std::string detail = error_detail(outcome.response.body);
  const std::string suffix = detail.empty() ? "" : ": " + detail;
  const char* variable = key_variable(m_spec.provider);
  if (status == 401 || status == 403) {
    if (m_settings.api_key.empty())
      return m_label + " requires an API key (" + code + "): set " + variable;
    return m_label + " rejected the API key (" + code + "); set " + variable + " to a valid key";
  }
  if (is_rejection(status))
    return m_label + " rejected " + inputs_text(begin, end) + " (" + code + ")" + suffix;
  if (status == 404)
    return m_label + ": " + net::display_url(m_url) + " not found (" + code +
           "): check the model name '" + m_spec.model + "' and the base URL" + suffix;
  const std::string attempts =
      outcome.attempts > 1 ? " after " + std::to_string(outcome.attempts) + " attempts" : "";
  if (status == 429) return m_label + ": rate limited (" + code + ")" + attempts + suffix;
  return m_label + ": " + code + attempts + suffix;
}

void RemoteEmbedder::embed_range(const std::vector<std::string_view>& inputs, std::size_t begin,
                                 std::size_t end, embed::InputKind kind, EmbedReport& report,
                                 std::vector<EmbedFailure>& failures) {
  struct Attempt {
    bool ok = false;
    bool rejected = false;
    bool permanent = false;  // the key, the model or the URL is wrong: no input would pass
    std::string message;
  };
  auto attempt = [&](std::size_t b, std::size_t e) {
    EmbeddingsRequest body;
    body.model = m_spec.model;
    body.inputs.assign(inputs.begin() + static_cast<std::ptrdiff_t>(b),
                       inputs.begin() + static_cast<std::ptrdiff_t>(e));
    body.voyage = m_spec.provider == Provider::voyage;
    body.output_dtype = m_settings.output_dtype;
    if (body.voyage) body.input_type = kind == embed::InputKind::query ? "query" : "document";
    body.output_dimension = m_settings.output_dimension;

    net::HttpRequest request;
    request.url = m_url;
    request.headers = {{"Content-Type", "application/json"}, {"Accept", "application/json"}};
    if (!m_settings.api_key.empty())
      request.headers.push_back({"Authorization", "Bearer " + m_settings.api_key});
    request.body = embeddings_request_body(body);
    request.timeouts = m_settings.timeouts;
    request.cancel = m_settings.cancel;

    const net::HttpOutcome outcome = m_retrying->send(request);
    Attempt result;
    if (!outcome.has_response()) {
      result.message = clean(m_label + ": " + outcome.error);
      return result;
    }
    const int status = outcome.response.status;
    if (status < 200 || status > 299) {
      result.rejected = is_rejection(status);
      result.permanent = status == 401 || status == 403 || status == 404;
      result.message = clean(describe_status(outcome, b, e));
      return result;
    }
    auto parsed = parse_embeddings_response(outcome.response.body, e - b, m_dimensions.load());
    if (!parsed) {
      result.message =
          clean(m_label + ": response to " + inputs_text(b, e) + ": " + parsed.error().message);
      return result;
    }
    const int got = static_cast<int>(parsed->vectors.front().size());
    int expected = 0;
    if (!m_dimensions.compare_exchange_strong(expected, got) && expected != got) {
      result.message =
          clean(m_label + ": response to " + inputs_text(b, e) + ": vectors have " +
                std::to_string(got) + " dimensions, expected " + std::to_string(expected));
      result.permanent = true;
      return result;
    }
    if (parsed->total_tokens) m_tokens += *parsed->total_tokens;
    for (std::size_t i = 0; i < parsed->vectors.size(); ++i) {
      l2_normalize(parsed->vectors[i]);
      report.vectors[b + i] = std::move(parsed->vectors[i]);
    }
    result.ok = true;
    return result;
  };

  // Splits a rejected range until the inputs at fault are found (see the top of the file).
  std::function<void(std::size_t, std::size_t, const Attempt&)> settle =
      [&](std::size_t b, std::size_t e, const Attempt& a) {
        if (a.ok) return;
        if (!a.rejected || e - b == 1) {
          failures.push_back({b, e, a.message, a.permanent});
          return;
        }
        const std::size_t mid = b + (e - b) / 2;
        const Attempt left = attempt(b, mid);
        const Attempt right = attempt(mid, e);
        if (left.rejected && right.rejected) {
          failures.push_back({b, e, a.message, true});  // the request, not an input, is wrong
          return;
        }
        settle(b, mid, left);
        settle(mid, e, right);
      };
  settle(begin, end, attempt(begin, end));
}

EmbedReport RemoteEmbedder::run(const std::vector<std::string_view>& inputs, embed::InputKind kind,
                                OnError on_error) {
  EmbedReport report;
  report.vectors.resize(inputs.size());
  const std::vector<Batch> batches =
      plan_batches(inputs, m_settings.max_batch_inputs, m_settings.max_batch_tokens);
  std::vector<std::vector<EmbedFailure>> failures(batches.size());
  std::vector<char> sent(batches.size(), 0);
  // Set after a failure that ends the run, on cancellation, or by util::parallel_for when a
  // thread throws: the batches not taken yet are not sent.
  std::atomic<bool> stop{false};
  const auto each = [&](unsigned, std::size_t i) {
    if (m_settings.cancel != nullptr && m_settings.cancel->load()) {
      stop = true;
      return;
    }
    sent[i] = 1;
    embed_range(inputs, batches[i].begin, batches[i].end, kind, report, failures[i]);
    const bool permanent = std::any_of(failures[i].begin(), failures[i].end(),
                                       [](const EmbedFailure& f) { return f.permanent; });
    if (!failures[i].empty() && (on_error == OnError::stop || permanent)) stop = true;
  };
  util::parallel_for(batches.size(),
                     static_cast<unsigned>(std::max(1, m_settings.max_parallel_requests)), each,
                     &stop);
  for (std::size_t i = 0; i < batches.size(); ++i) {
    if (sent[i]) continue;
    failures[i].push_back({batches[i].begin, batches[i].end,
                           m_label + ": not sent, an earlier request failed or was cancelled"});
  }
  for (auto& batch_failures : failures)
    for (auto& failure : batch_failures) report.failures.push_back(std::move(failure));
  return report;
}

util::Result<std::vector<std::vector<float>>> RemoteEmbedder::embed(
    const std::vector<std::string_view>& inputs, embed::InputKind kind) {
  EmbedReport report = run(inputs, kind, OnError::stop);
  if (report.ok()) return std::move(report.vectors);
  // Prefer a real cause over the "not sent" placeholders of stopped batches.
  const auto cause =
      std::find_if(report.failures.begin(), report.failures.end(), [](const EmbedFailure& f) {
        return f.message.find(": not sent, an earlier") == std::string::npos;
      });
  const EmbedFailure& first = cause != report.failures.end() ? *cause : report.failures.front();
  std::size_t failed_inputs = 0;
  for (const EmbedFailure& f : report.failures) failed_inputs += f.end - f.begin;
  std::string message = first.message;
  const std::size_t others = failed_inputs - (first.end - first.begin);
  if (others > 0) message += " (" + std::to_string(others) + " more inputs not embedded)";
  return util::Error{message};
}

EmbedReport RemoteEmbedder::embed_partial(const std::vector<std::string_view>& inputs,
                                          embed::InputKind kind) {
  return run(inputs, kind, OnError::continue_);
}

util::Result<int> RemoteEmbedder::probe_dimensions() {
  if (const int known = m_dimensions.load(); known > 0) return known;
  auto probe = embed({"dimension probe"}, embed::InputKind::query);
  if (!probe) return probe.error();
  return m_dimensions.load();
}

util::Result<std::unique_ptr<RemoteEmbedder>> make_remote_embedder(
    const ModelSpec& spec, RemoteSettings settings, std::shared_ptr<net::HttpClient> http) {
  if (!spec.is_remote()) return util::Error{"model '" + spec.str() + "' is not a remote provider"};
  if (spec.provider == Provider::voyage && settings.api_key.empty())
    return util::Error{spec.str() + " needs an API key: set " + key_variable(spec.provider)};
  if (settings.output_dimension && *settings.output_dimension <= 0)
    return util::Error{spec.str() + ": output dimension must be positive, got " +
                       std::to_string(*settings.output_dimension)};
  if (settings.output_dtype != "float" &&
      (settings.output_dtype != "int8" || spec.provider != Provider::voyage))
    return util::Error{spec.str() + ": output type '" + settings.output_dtype +
                       "' is not supported: expected float" +
                       (spec.provider == Provider::voyage ? " or int8" : "")};
  if (!settings.base_url.empty() && !settings.base_url.starts_with("http://") &&
      !settings.base_url.starts_with("https://"))
    return util::Error{"base URL '" + net::display_url(settings.base_url) + "' for " + spec.str() +
                       ": expected http:// or https://"};
  if (!http) http = net::make_curl_client();
  return std::make_unique<RemoteEmbedder>(spec, std::move(settings), std::move(http));
}

}  // namespace kasava::remote
