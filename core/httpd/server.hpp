// An HTTP/1.1 server behind plain structs: a request in (method, path, query parameters,
// headers, body, peer address), a response out (status, headers, and a body given whole or
// streamed by a producer, e.g. Server-Sent Events). The one module that includes
// <microhttpd.h> (server.cpp): libmicrohttpd parses HTTP and enforces the limits (connections,
// connections per address, header memory, idle timeouts); one thread per connection, so a slow
// client holds only its own thread. Stopping refuses new connections at once and lets the
// requests in flight finish for a while. Never prints.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/util/result.hpp"

namespace kasava::httpd {

/// One request, read whole (the body is bounded by Limits::max_body_bytes).
struct Request {
  std::string method;  ///< "GET", "POST", …
  std::string path;    ///< decoded path, without the query string
  /// Decoded query parameters in the order given (a name may repeat).
  std::vector<std::pair<std::string, std::string>> query;
  /// Header fields as sent (names as sent; compare them case-insensitively with header()).
  std::vector<std::pair<std::string, std::string>> headers;
  std::string body;
  std::string peer;          ///< the client's address, without the port ("127.0.0.1", "::1")
  bool peer_is_loopback = false;

  /// The first query parameter of that name, if given.
  std::optional<std::string> param(std::string_view name) const;
  /// The first header of that name (case-insensitive), if given.
  std::optional<std::string> header(std::string_view name) const;
};

/// What the server tells a streamed body's producer.
struct StreamControl {
  /// True once the server is stopping: the producer should end the stream promptly (finish
  /// what it is sending, then return std::nullopt).
  const std::atomic<bool>& stopping;
};

/// Produces a streamed body, chunk by chunk, on the connection's thread: returns the next
/// bytes to send (it may block until it has some; it should return within a second or so
/// once control.stopping is set), or std::nullopt when the body is complete. Sent with
/// chunked transfer encoding; each chunk is flushed to the client before the next call.
using ChunkProducer = std::function<std::optional<std::string>(const StreamControl& control)>;

struct Response {
  int status = 200;
  std::vector<std::pair<std::string, std::string>> headers;  ///< Content-Type among them
  std::string body;
  /// When set, the body is streamed from this producer instead of `body`.
  ChunkProducer stream;

  /// A response with a body and its content type.
  static Response text(int status, std::string body, std::string content_type);
};

/// Answers requests; called on many threads at once.
using Handler = std::function<Response(const Request&)>;

/// Called once per finished request (for the request log), on the connection's thread.
struct Completion {
  std::string method;
  std::string path;
  std::vector<std::pair<std::string, std::string>> query;  ///< the request's query parameters
  int status = 0;
  double milliseconds = 0.0;  ///< from the handler's call to the end of the response
};
using CompletionHook = std::function<void(const Completion&)>;

struct Limits {
  /// At once, over all clients: a request on a connection beyond it is answered 503 (and
  /// beyond a few more, connections are closed unanswered).
  unsigned max_connections = 512;
  unsigned max_connections_per_peer = 256;  ///< at once, from one address
  /// Memory for one connection's request line and headers (and read buffer); a request whose
  /// head does not fit is answered 431 (headers) or 414 (request line) by the library.
  std::size_t max_head_bytes = 16 * 1024;
  std::size_t max_body_bytes = 1024 * 1024;  ///< a longer body is answered 413
  unsigned idle_timeout_seconds = 30;        ///< a connection silent that long is closed
};

/// A listening server. Handlers run on the connection threads.
class HttpServer {
public:
  /// Listens on host:port (an IPv4 or IPv6 literal; port 0 picks a free one) and serves
  /// with `handler`. Errors (address in use, bad address) name the address.
  static util::Result<std::unique_ptr<HttpServer>> start(const std::string& host, std::uint16_t port,
                                                         Handler handler, Limits limits,
                                                         CompletionHook on_complete = nullptr);
  virtual ~HttpServer() = default;

  /// The port listened on (the one picked, for port 0).
  virtual std::uint16_t port() const = 0;
  /// Stops accepting connections at once, waits up to `grace` for the requests in flight
  /// (whose head has been read: their body may still be coming; streams are told to stop),
  /// then closes everything. Idempotent.
  virtual void stop(std::chrono::milliseconds grace) = 0;
  /// Requests whose head has been read and whose response has not been sent yet.
  virtual int in_flight() const = 0;
};

/// Whether a textual address is a loopback one (127.0.0.0/8, ::1, ::ffff:127.x).
bool is_loopback_address(const std::string& address);

} // namespace kasava::httpd
