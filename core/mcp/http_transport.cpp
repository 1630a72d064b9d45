// The Streamable HTTP transport of http_transport.hpp: the checks each request passes, in the
// order the specification implies (method, session, protocol version header, content type,
// the JSON-RPC message itself), and the session table.
#include "core/mcp/http_transport.hpp"

#include <sys/random.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <stdexcept>

#include "core/util/result.hpp"
#include "core/util/strings.hpp"

namespace kasava::mcp {

using util::JsonValue;

namespace {

constexpr const char* k_allowed_methods = "POST, DELETE";

const std::string* find_header(const std::vector<std::pair<std::string, std::string>>& headers,
                               std::string_view name) {
  for (const auto& [key, value] : headers) {
    if (key.size() == name.size() && util::to_lower(key) == util::to_lower(name)) return &value;
  }
  return nullptr;
}

// A response whose body is a JSON-RPC error without an id, as the specification allows for
// requests the transport refuses.
HttpResponse refusal(int status, ErrorCode code, std::string_view message) {
  HttpResponse response;
  response.status = status;
  response.headers.push_back({"Content-Type", "application/json"});
  response.body = error_response(nullptr, code, message);
  return response;
}

// The media types of an Accept or Content-Type value, lower-case, without parameters; those
// an Accept value gives q=0 (not acceptable) are left out.
std::vector<std::string> media_types(std::string_view value) {
  std::vector<std::string> types;
  for (const std::string& part : util::split(value, ',')) {
    const std::vector<std::string> fields = util::split(part, ';');
    std::string type = util::to_lower(util::trim(fields.front()));
    bool refused = false;
    for (std::size_t i = 1; i < fields.size(); ++i) {
      std::string parameter = util::to_lower(util::trim(fields[i]));
      parameter.erase(std::remove(parameter.begin(), parameter.end(), ' '), parameter.end());
      refused = refused || parameter == "q=0" || parameter == "q=0.0" || parameter == "q=0.00" ||
                parameter == "q=0.000";
    }
    if (!type.empty() && !refused) types.push_back(std::move(type));
  }
  return types;
}

bool accepts(const std::vector<std::string>& accepted, std::string_view type) {
  const std::string_view family = type.substr(0, type.find('/'));
  return std::any_of(accepted.begin(), accepted.end(), [&](const std::string& range) {
    return range == type || range == "*/*" || range == std::string(family) + "/*";
  });
}

// Whether a reply is an error without an id: the message was no JSON-RPC message at all.
bool unreadable_request_error(const std::string& reply) {
  auto parsed = util::parse_json(reply);
  return parsed && (*parsed)["error"].is_object() && (*parsed)["id"].is_null();
}

}  // namespace

const std::string* HttpRequest::header(std::string_view name) const {
  return find_header(headers, name);
}

const std::string* HttpResponse::header(std::string_view name) const {
  return find_header(headers, name);
}

std::string random_session_id() {
  unsigned char bytes[16];
  std::size_t filled = 0;
  while (filled < sizeof bytes) {
    const ssize_t count = ::getrandom(bytes + filled, sizeof bytes - filled, 0);
    if (count < 0 && errno == EINTR) continue;
    if (count < 0) throw util::Failure(std::string("random session id: ") + std::strerror(errno));
    filled += static_cast<std::size_t>(count);
  }
  static const char* const digits = "0123456789abcdef";
  std::string id;
  for (const unsigned char byte : bytes) {
    id += digits[byte >> 4];
    id += digits[byte & 15];
  }
  return id;
}

HttpTransport::HttpTransport(ServerInfo info, HttpTransportOptions options)
    : m_info(std::move(info)), m_options(std::move(options)) {
  if (!m_options.new_session_id) m_options.new_session_id = random_session_id;
  if (m_options.max_sessions == 0 || m_options.max_sessions_per_principal == 0) {
    throw std::invalid_argument("session limits must be at least 1");
  }
}

std::size_t HttpTransport::session_count() const {
  std::lock_guard lock(m_mutex);
  return m_sessions.size();
}

HttpResponse HttpTransport::handle(const HttpRequest& request, ToolHandler& tools,
                                   Clock::time_point now) {
  {
    std::lock_guard lock(m_mutex);
    remove_expired(now);
  }
  if (request.method == "POST") return post(request, tools, now);
  if (request.method == "DELETE") return end_session(request);
  // GET would open a stream for messages the server sends unasked; kasava sends none.
  HttpResponse response =
      refusal(405, ErrorCode::invalid_request,
              "method not allowed: '" + request.method + "' (use POST, DELETE ends a session)");
  response.headers.push_back({"Allow", k_allowed_methods});
  return response;
}

HttpResponse HttpTransport::post(const HttpRequest& request, ToolHandler& tools,
                                 Clock::time_point now) {
  const std::string* content_type = request.header("Content-Type");
  const std::vector<std::string> content_types = media_types(content_type ? *content_type : "");
  if (content_types.size() != 1 || content_types.front() != "application/json") {
    return refusal(415, ErrorCode::invalid_request,
                   "unsupported media type: the body must be application/json");
  }
  // Clients list both JSON and SSE; a reply is one message, so JSON when they take it.
  const std::string* accept = request.header("Accept");
  const std::vector<std::string> accepted = media_types(accept ? *accept : "*/*");
  const bool json_reply = accepts(accepted, "application/json");
  if (!json_reply && !accepts(accepted, "text/event-stream")) {
    return refusal(406, ErrorCode::invalid_request,
                   "not acceptable: replies are application/json or text/event-stream");
  }

  auto parsed = util::parse_json(request.body);
  if (!parsed)
    return refusal(400, ErrorCode::parse_error, "parse error: " + parsed.error().message);
  if (parsed->is_array()) {  // batches were removed from MCP in 2025-06-18
    return refusal(400, ErrorCode::invalid_request, "invalid request: batches are not supported");
  }
  if (!parsed->is_object())
    return refusal(400, ErrorCode::invalid_request, "invalid request: expected an object");
  const JsonValue* method = parsed->find("method");
  const bool is_request = method != nullptr && parsed->contains("id");
  const bool is_initialize =
      is_request && method->is_string() && method->as_string() == "initialize";

  Server server(tools, m_info);
  std::string session_id;
  if (!is_initialize) {
    // Every message after initialize belongs to a session of the same principal.
    const std::string* id = request.header("Mcp-Session-Id");
    if (id == nullptr) {
      return refusal(400, ErrorCode::invalid_request,
                     "bad request: no Mcp-Session-Id header (initialize first)");
    }
    std::string negotiated;
    {
      std::lock_guard lock(m_mutex);
      auto session = m_sessions.find(*id);
      if (session == m_sessions.end() || session->second.principal != request.principal) {
        return refusal(404, ErrorCode::invalid_request, "session not found: initialize again");
      }
      session->second.last_used = now;
      negotiated = session->second.protocol_version;
    }
    if (const std::string* version = request.header("MCP-Protocol-Version")) {
      const auto& supported = supported_protocol_versions();
      if (std::find(supported.begin(), supported.end(), *version) == supported.end()) {
        return refusal(400, ErrorCode::invalid_request,
                       "bad request: unsupported MCP-Protocol-Version '" + *version + "'");
      }
      if (*version != negotiated) {
        return refusal(400, ErrorCode::invalid_request,
                       "bad request: MCP-Protocol-Version '" + *version +
                           "' is not the version negotiated in initialize ('" + negotiated + "')");
      }
    }
    server.resume(negotiated);
    session_id = *id;
  }

  const std::optional<std::string> reply = server.handle(request.body);
  if (!reply) {
    HttpResponse accepted_response;  // a notification or a reply from the client
    accepted_response.status = 202;
    return accepted_response;
  }
  HttpResponse response;
  // Not a JSON-RPC message at all: refused with the server's error, as the transport refuses.
  if (unreadable_request_error(*reply)) {
    response.status = 400;
    response.headers.push_back({"Content-Type", "application/json"});
    response.body = *reply;
    return response;
  }
  if (is_initialize && server.initialized()) {
    session_id = open_session(request.principal, server.protocol_version(), now);
  }
  if (json_reply) {
    response.headers.push_back({"Content-Type", "application/json"});
    response.body = *reply;
  } else {
    response.headers.push_back({"Content-Type", "text/event-stream"});
    response.headers.push_back({"Cache-Control", "no-cache"});
    response.body = "event: message\ndata: " + *reply + "\n\n";
  }
  if (is_initialize && !session_id.empty())
    response.headers.push_back({"Mcp-Session-Id", session_id});
  return response;
}

HttpResponse HttpTransport::end_session(const HttpRequest& request) {
  const std::string* id = request.header("Mcp-Session-Id");
  if (id == nullptr)
    return refusal(400, ErrorCode::invalid_request, "bad request: no Mcp-Session-Id header");
  std::lock_guard lock(m_mutex);
  auto session = m_sessions.find(*id);
  if (session == m_sessions.end() || session->second.principal != request.principal) {
    return refusal(404, ErrorCode::invalid_request, "session not found");
  }
  m_sessions.erase(session);
  HttpResponse response;
  response.status = 204;
  return response;
}

std::string HttpTransport::open_session(const std::string& principal,
                                        const std::string& protocol_version,
                                        Clock::time_point now) {
  std::string id = m_options.new_session_id();
  std::lock_guard lock(m_mutex);
  // The principal's own sessions first, so that one token cannot end everyone else's.
  auto least_recent = [this](auto keep) {
    auto oldest = m_sessions.end();
    for (auto it = m_sessions.begin(); it != m_sessions.end(); ++it) {
      if (keep(it->second) &&
          (oldest == m_sessions.end() || it->second.last_used < oldest->second.last_used)) {
        oldest = it;
      }
    }
    return oldest;
  };
  std::size_t own = 0;
  for (const auto& entry : m_sessions) own += entry.second.principal == principal ? 1 : 0;
  for (; own >= m_options.max_sessions_per_principal; --own) {
    m_sessions.erase(
        least_recent([&](const Session& session) { return session.principal == principal; }));
  }
  while (m_sessions.size() >= m_options.max_sessions) {
    m_sessions.erase(least_recent([](const Session&) { return true; }));
  }
  m_sessions[id] = Session{principal, protocol_version, now};
  return id;
}

void HttpTransport::remove_expired(Clock::time_point now) {
  for (auto it = m_sessions.begin(); it != m_sessions.end();) {
    if (now - it->second.last_used >= m_options.idle_expiry) {
      it = m_sessions.erase(it);
    } else {
      ++it;
    }
  }
}

}  // namespace kasava::mcp
