// See api.hpp.
#include "core/serve/api.hpp"

#include <algorithm>
#include <charconv>

#include "core/util/glob.hpp"
#include "core/util/json.hpp"
#include "core/util/strings.hpp"

namespace kasava::serve {

namespace {

/// Counts a request as active for as long as it is answered.
class ActiveRequest {
public:
  explicit ActiveRequest(std::atomic<unsigned>& active) : m_active(active) { m_count = ++m_active; }
  ~ActiveRequest() { --m_active; }
  ActiveRequest(const ActiveRequest&) = delete;
  ActiveRequest& operator=(const ActiveRequest&) = delete;
  unsigned count() const { return m_count; }

private:
  std::atomic<unsigned>& m_active;
  unsigned m_count;
};

/// A whole number parameter within [low, high]; an error message otherwise.
util::Result<std::int64_t> integer_parameter(const httpd::Request& request, std::string_view name,
                                             std::int64_t fallback, std::int64_t low, std::int64_t high) {
  const auto text = request.param(name);
  if (!text) return fallback;
  std::int64_t value = 0;
  const auto [end, error] = std::from_chars(text->data(), text->data() + text->size(), value);
  if (error != std::errc() || end != text->data() + text->size() || value < low || value > high) {
    return util::Error{"parameter '" + std::string(name) + "' must be a whole number from " +
                       std::to_string(low) + " to " + std::to_string(high)};
  }
  return value;
}

} // namespace

httpd::Response json_error(int status, std::string_view message) {
  util::JsonWriter json;
  json.begin_object();
  json.key("error").value(message);
  json.end_object();
  return httpd::Response::text(status, json.str() + "\n", "application/json");
}

httpd::Response json_response(int status, std::string body) {
  return httpd::Response::text(status, std::move(body), "application/json");
}

Api::Api(ApiOptions options, Backend& backend)
    : m_options(std::move(options)), m_backend(backend), m_limiter(m_options.rate_limit) {
  add_route({"/healthz", false, {"GET", "HEAD"}, Access::open, false,
             [](const httpd::Request&, const Caller&) { return json_response(200, "{\"status\":\"ok\"}\n"); }});
  add_route({"/api/search", false, {"GET"}, Access::token, true,
             [this](const httpd::Request& request, const Caller& caller) { return search(request, caller); }});
  add_route({"/api/file", false, {"GET"}, Access::token, true,
             [this](const httpd::Request& request, const Caller& caller) { return file(request, caller); }});
  add_route({"/api/status", false, {"GET"}, Access::token, true,
             [this](const httpd::Request&, const Caller& caller) { return status(caller); }});
}

void Api::add_route(Route route) { m_routes.push_back(std::move(route)); }

const Route* Api::find_route(const std::string& path) const {
  const Route* best = nullptr;
  for (const auto& route : m_routes) {
    if (!route.prefix && route.path == path) return &route;
    if (route.prefix && path.compare(0, route.path.size(), route.path) == 0 &&
        (best == nullptr || route.path.size() > best->path.size())) {
      best = &route;
    }
  }
  return best;
}

httpd::Response Api::handle(const httpd::Request& request) {
  return handle(request, RateLimiter::Clock::now());
}

httpd::Response Api::handle(const httpd::Request& request, RateLimiter::Clock::time_point now) {
  // A page elsewhere may make a browser send requests here, and a DNS name rebound to this
  // address makes them same-origin to the browser: both show in Host or Origin.
  const auto host = request.header("Host");
  if (!host_allowed(m_options.hosts, host)) {
    return json_error(403, "host '" + util::escape_controls(host.value_or("")) +
                               "' is not this server's name (use localhost or the address it listens on)");
  }
  if (!origin_allowed(request.header("Origin"), host)) {
    return json_error(403, "cross-origin requests are refused");
  }
  std::size_t parameter_bytes = 0;
  for (const auto& [name, value] : request.query) parameter_bytes += name.size() + value.size() + 2;
  if (parameter_bytes > m_options.max_parameter_bytes) {
    return json_error(414, "the query parameters are longer than " +
                               std::to_string(m_options.max_parameter_bytes) + " bytes");
  }
  const Route* route = find_route(request.path);
  if (route == nullptr) return json_error(404, "no such endpoint: '" + util::escape_controls(request.path) + "'");
  if (std::find(route->methods.begin(), route->methods.end(), request.method) == route->methods.end()) {
    auto response = json_error(405, "method " + util::escape_controls(request.method) + " is not allowed here");
    std::string allow;
    for (const auto& method : route->methods) allow += (allow.empty() ? "" : ", ") + method;
    response.headers.emplace_back("Allow", allow);
    return response;
  }
  Caller caller;
  if (route->access == Access::token && needs_token()) {
    const auto authorization = request.header("Authorization");
    caller.token = authorization ? find_token(m_options.tokens, *authorization) : nullptr;
    if (caller.token == nullptr) {
      auto response = json_error(401, authorization ? "the token is not valid"
                                                    : "a token is needed: send 'Authorization: Bearer <token>'");
      response.headers.emplace_back("WWW-Authenticate", "Bearer");
      return response;
    }
  }
  if (route->rate_limited) {
    if (const long wait = m_limiter.acquire(request.peer, now); wait > 0) {
      auto response = json_error(429, "too many requests: try again in " + std::to_string(wait) + " s");
      response.headers.emplace_back("Retry-After", std::to_string(wait));
      return response;
    }
  }
  const ActiveRequest active(m_active);
  if (active.count() > m_options.max_active) {
    auto response = json_error(503, "the server is busy: " + std::to_string(m_options.max_active) +
                                        " requests are being answered; try again");
    response.headers.emplace_back("Retry-After", "1");
    return response;
  }
  return route->handle(request, caller);
}

httpd::Response Api::search(const httpd::Request& request, const Caller& caller) {
  SearchRequest search;
  const auto query = request.param("q");
  if (!query || util::trim(*query).empty()) {
    return json_error(400, "parameter 'q' is missing: ask in words or identifiers");
  }
  if (query->size() > m_options.max_query_bytes) {
    return json_error(400, "parameter 'q' is longer than " + std::to_string(m_options.max_query_bytes) + " bytes");
  }
  search.query = *query;
  auto limit = integer_parameter(request, "limit", 10, 1, m_options.max_limit);
  if (!limit) return json_error(400, limit.error().message);
  search.limit = static_cast<int>(*limit);
  search.mode = request.param("mode").value_or("hybrid");
  if (search.mode != "hybrid" && search.mode != "semantic" && search.mode != "lexical") {
    return json_error(400, "parameter 'mode' must be hybrid, semantic or lexical");
  }
  search.language = request.param("lang").value_or("");
  search.path_glob = request.param("path").value_or("");
  search.ref = request.param("ref").value_or("");
  auto visible = visible_repositories(request, caller);
  if (!visible) return json_error(503, visible.error().message);
  search.repositories = std::move(visible).value();
  if (search.repositories.empty()) {
    // No repository this caller may see matches: the document of a search without results.
    util::JsonWriter json;
    json.begin_object();
    json.key("query").value(search.query);
    json.key("results").begin_array().end_array();
    json.end_object();
    return json_response(200, json.str() + "\n");
  }
  const Reply reply = m_backend.search(search);
  return json_response(reply.status, reply.body);
}

httpd::Response Api::file(const httpd::Request& request, const Caller& caller) {
  FileRequest file;
  const auto path = request.param("path");
  if (!path || path->empty()) return json_error(400, "parameter 'path' is missing");
  file.path = *path;
  auto start = integer_parameter(request, "start", 1, 1, INT32_MAX);
  if (!start) return json_error(400, start.error().message);
  file.start = *start;
  auto end = integer_parameter(request, "end", 0, 1, INT32_MAX);
  if (!end) return json_error(400, end.error().message);
  file.end = *end;
  file.ref = request.param("ref").value_or("");
  auto visible = visible_repositories(request, caller);
  if (!visible) return json_error(503, visible.error().message);
  if (visible->empty()) return json_error(404, "no repository this token may read matches");
  if (visible->size() > 1) {
    return json_error(400, "parameter 'repo' must name one repository: " + std::to_string(visible->size()) +
                               " match (e.g. '" + visible->front() + "')");
  }
  file.repository = visible->front();
  const Reply reply = m_backend.file(file);
  return json_response(reply.status, reply.body);
}

httpd::Response Api::status(const Caller& caller) {
  std::vector<std::string> all;
  try {
    all = m_backend.repositories();
  } catch (const util::Failure& e) {
    return json_error(503, e.what());
  }
  std::vector<std::string> visible;
  for (auto& name : all) {
    if (caller.may_see(name)) visible.push_back(std::move(name));
  }
  if (!all.empty() && visible.empty()) {
    return json_error(403, "this token may not see the repositories served here");
  }
  const Reply reply = m_backend.status(visible);
  return json_response(reply.status, reply.body);
}

util::Result<std::vector<std::string>> Api::visible_repositories(const httpd::Request& request,
                                                                 const Caller& caller) {
  const std::string repo = request.param("repo").value_or("");
  std::vector<std::string> visible;
  try {
    for (auto& name : m_backend.repositories()) {
      if (caller.may_see(name) && (repo.empty() || repo == name || util::glob_match(repo, name))) {
        visible.push_back(std::move(name));
      }
    }
  } catch (const util::Failure& e) {
    return util::Error{e.what()};
  }
  return visible;
}

} // namespace kasava::serve
