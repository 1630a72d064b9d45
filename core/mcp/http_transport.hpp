// MCP's Streamable HTTP transport (revisions 2025-03-26 to 2025-11-25) as pure code: one HTTP
// request to the MCP endpoint in (method, headers, body, who sent it), one response out. It
// keeps the sessions (an `Mcp-Session-Id` issued by initialize, then required; DELETE ends
// it; bounded in number and expiring when idle) and checks the transport's headers
// (Content-Type, Accept, MCP-Protocol-Version); each JSON-RPC message is answered by a
// server.hpp Server resumed in the session's negotiated version. Every reply is one complete
// body, JSON or a one-event SSE stream, and the endpoint offers no GET stream (405): the
// server never sends anything unasked. No sockets here: serve's HTTP adapter calls handle().
#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/mcp/server.hpp"

namespace kasava::mcp {

/// One request to the MCP endpoint, as the HTTP adapter received it.
struct HttpRequest {
  std::string method;                                        ///< "POST", "GET", "DELETE", …
  std::vector<std::pair<std::string, std::string>> headers;  ///< names in any case
  std::string body;
  /// Who sent it, as authentication established (a token's identity; "" without
  /// authentication). A session answers only the principal that opened it.
  std::string principal;

  /// The first header of this name (case-insensitive), or nullptr.
  const std::string* header(std::string_view name) const;
};

/// The response to send: status, headers (Content-Type among them when there is a body), body.
struct HttpResponse {
  int status = 200;
  std::vector<std::pair<std::string, std::string>> headers;
  std::string body;

  /// The first header of this name (case-insensitive), or nullptr.
  const std::string* header(std::string_view name) const;
};

/// Limits of the session table.
struct HttpTransportOptions {
  std::size_t max_sessions = 1024;  ///< beyond it, the least recently used session ends
  /// Beyond it, the principal's least recently used session ends (without tokens, everyone
  /// is one principal).
  std::size_t max_sessions_per_principal = 64;
  std::chrono::seconds idle_expiry{30 * 60};
  /// Makes a new session id (visible ASCII, unguessable). Default: 128 random bits from
  /// getrandom(2) in hex.
  std::function<std::string()> new_session_id;
};

/// The MCP endpoint. Thread-safe: requests of several connections may be handled at once
/// (tool calls run outside the session table's lock).
class HttpTransport {
public:
  using Clock = std::chrono::steady_clock;

  HttpTransport(ServerInfo info, HttpTransportOptions options = {});

  /// Answers one request; `tools` are the caller's (limited to what its principal may see),
  /// `now` the time sessions expire by.
  HttpResponse handle(const HttpRequest& request, ToolHandler& tools, Clock::time_point now);

  /// Sessions open now (expired ones count until the next request removes them).
  std::size_t session_count() const;

private:
  struct Session {
    std::string principal;
    std::string protocol_version;
    Clock::time_point last_used;
  };

  HttpResponse post(const HttpRequest& request, ToolHandler& tools, Clock::time_point now);
  HttpResponse end_session(const HttpRequest& request);
  /// Opens a session for a successful initialize; ends the least recently used beyond the limit.
  std::string open_session(const std::string& principal, const std::string& protocol_version,
                           Clock::time_point now);
  void remove_expired(Clock::time_point now);  ///< with m_mutex held

  ServerInfo m_info;
  HttpTransportOptions m_options;
  mutable std::mutex m_mutex;
  std::map<std::string, Session> m_sessions;
};

/// The default session id: 32 hex digits from getrandom(2).
std::string random_session_id();

}  // namespace kasava::mcp
