// The HTTP client interface of remote providers: a request (method, URL, headers, body,
// timeouts, optional streaming callback and cancel flag) in, a response or a typed transport
// failure out. Implemented with libcurl (curl_client.hpp); tests talk to a real local server.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kasava::net {

struct Header {
  std::string name;
  std::string value;
};

/// Limits of one attempt. A zero duration means "no limit".
struct Timeouts {
  std::chrono::milliseconds connect{10'000};
  /// Whole exchange, connect to last byte. Streaming requests usually set 0 and rely on
  /// the low-speed limit instead.
  std::chrono::milliseconds total{120'000};
  /// Abort when fewer than low_speed_bytes per second arrive for low_speed_time.
  long low_speed_bytes = 1;
  std::chrono::seconds low_speed_time{60};
};

struct HttpRequest {
  std::string method = "POST";
  std::string url;
  /// Header values may be secrets (Authorization, x-api-key): the module never puts any
  /// header value into an error message.
  std::vector<Header> headers;
  std::string body;
  Timeouts timeouts;
  /// When set, body bytes are handed over as they arrive (Server-Sent Events) and the
  /// response's body stays empty; returning false stops the transfer (a cancelled failure).
  std::function<bool(std::string_view)> on_data;
  /// Polled during the transfer and between retries; true stops with a cancelled failure.
  const std::atomic<bool>* cancel = nullptr;
  /// Responses larger than this fail (protects memory from a misbehaving server).
  std::size_t max_body_bytes = 512u << 20;
};

struct HttpResponse {
  int status = 0;
  std::vector<Header> headers;  ///< in order, names as sent by the server
  std::string body;             ///< empty when the request streamed through on_data

  /// The last header named `name` (case-insensitive), or nullopt.
  std::optional<std::string> header(std::string_view name) const;
};

/// Why an exchange produced no HTTP response.
enum class FailureKind {
  none,          ///< a response arrived (any status)
  connect,       ///< could not resolve or connect
  timeout,       ///< connect, total or low-speed limit hit
  reset,         ///< the connection broke: reset, closed without a reply, truncated body
  cancelled,     ///< the cancel flag or on_data stopped it
  too_large,     ///< the body exceeded max_body_bytes
  circuit_open,  ///< the circuit breaker refused to send (see circuit_breaker.hpp)
  other,         ///< TLS, protocol and other local errors
};

/// Short name for messages and tests: "timeout", "reset", …
const char* failure_kind_name(FailureKind kind);

/// What one exchange (possibly several attempts, see retry.hpp) produced.
struct HttpOutcome {
  FailureKind failure = FailureKind::none;
  /// Set when failure != none: lower-case, context first, never containing header values,
  /// e.g. "POST http://127.0.0.1:8080/v1/embeddings: timed out after 2000 ms".
  std::string error;
  HttpResponse response;  ///< meaningful when failure == none
  int attempts = 1;       ///< attempts made (retry.hpp)
  /// Bytes already handed to on_data: a streaming exchange that delivered data is not retried.
  std::size_t streamed_bytes = 0;

  bool has_response() const { return failure == FailureKind::none; }
};

/// Sends one request. Implementations are safe to call from several threads at once.
class HttpClient {
public:
  virtual ~HttpClient() = default;
  virtual HttpOutcome send(const HttpRequest& request) = 0;
};

/// The URL for messages: user:password@ removed.
std::string display_url(std::string_view url);

/// `text` with every occurrence of each secret (of at least 4 bytes) replaced by "[redacted]".
std::string redact(std::string text, const std::vector<std::string>& secrets);

/// Values of headers that commonly carry credentials (Authorization, Proxy-Authorization,
/// x-api-key, api-key, and any name containing "token", "secret" or "key").
std::vector<std::string> secret_header_values(const std::vector<Header>& headers);

}  // namespace kasava::net
