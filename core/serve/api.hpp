// `kasava serve`'s HTTP API as pure code: a table of routes (the API's own, and any a caller
// adds: /mcp, the search page), and in front of every route the checks of who gets in — the
// Host and Origin headers, the bearer token (limited to repositories), a per-client rate limit,
// a bound on requests answered at once — each refusal a JSON error with a meaningful status.
// The searches, file reads and status are a Backend's (commands/serve.cpp). Never prints.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "core/httpd/server.hpp"
#include "core/serve/auth.hpp"
#include "core/serve/rate_limit.hpp"
#include "core/util/result.hpp"

namespace kasava::serve {

/// {"error": message} with that status (application/json).
httpd::Response json_error(int status, std::string_view message);
/// A JSON body with that status.
httpd::Response json_response(int status, std::string body);

/// Who made a request, once let in.
struct Caller {
  const Token* token = nullptr;  ///< the token presented; null when none was needed
  /// Whether this caller may see the repository named `name`.
  bool may_see(std::string_view name) const { return token == nullptr || token->allows(name); }
};

/// Whether a route needs the token (when the server has tokens).
enum class Access {
  open,   ///< never: /healthz, the search page and its assets (they hold no data)
  token,  ///< the API, /mcp
};

using RouteHandler = std::function<httpd::Response(const httpd::Request&, const Caller&)>;

struct Route {
  std::string path;                  ///< "/api/search"; with `prefix`, every path under it
  bool prefix = false;               ///< matches `path` and anything starting with it
  std::vector<std::string> methods;  ///< accepted methods; others are answered 405
  Access access = Access::token;
  bool rate_limited = true;          ///< counts against the client's rate limit
  RouteHandler handle;
};

/// GET /api/search's parameters, checked.
struct SearchRequest {
  std::string query;
  int limit = 10;
  std::string mode = "hybrid";
  std::string language;
  std::string path_glob;
  /// The repositories to search: those the caller may see that repo= matches (never empty).
  std::vector<std::string> repositories;
  std::string ref;  ///< ref=: this ref of each repository ("" = its latest)
};

/// GET /api/file's parameters, checked.
struct FileRequest {
  std::string path;
  std::int64_t start = 1;
  std::int64_t end = 0;  ///< 0: the default range from start
  std::string repository;  ///< the one repository the caller may see that repo= matches
  std::string ref;         ///< ref= ("" = the repository's latest)
};

/// A backend's answer: a JSON body and its status (an error's body is json_error's).
struct Reply {
  int status = 200;
  std::string body;
};

/// What the API serves from: one repository's index, or a shared store's repositories.
class Backend {
public:
  virtual ~Backend() = default;
  /// The repositories' names (owner/name of an origin remote, else a folder's name); a
  /// failure to read them is a util::Failure (503).
  virtual std::vector<std::string> repositories() = 0;
  /// The `ask --json` document for the search.
  virtual Reply search(const SearchRequest& request) = 0;
  /// Lines of a file, under read_file_range's confinement.
  virtual Reply file(const FileRequest& request) = 0;
  /// The `status --json` document, of the repositories `visible` (those the caller may see).
  virtual Reply status(const std::vector<std::string>& visible) = 0;
};

struct ApiOptions {
  HostRule hosts;                      ///< what Host may say
  std::vector<Token> tokens;           ///< empty: no token needed
  double rate_limit = 0.0;             ///< requests per second per client address; 0 = none
  unsigned max_active = 256;           ///< requests answered at once; more get 503
  std::size_t max_query_bytes = 1024;  ///< of the q parameter
  std::size_t max_parameter_bytes = 4096;  ///< of all query parameters together
  int max_limit = 100;                 ///< the largest limit= accepted
};

class Api {
public:
  /// Serves /healthz, /api/search, /api/file and /api/status from `backend` (which must
  /// outlive the Api).
  Api(ApiOptions options, Backend& backend);

  /// Adds a route (before serving starts; not thread-safe). An exact path wins over a
  /// prefix; the longest prefix wins among prefixes.
  void add_route(Route route);

  /// Answers a request (thread-safe once serving).
  httpd::Response handle(const httpd::Request& request);
  /// The same at a given time (the rate limit's clock), for tests.
  httpd::Response handle(const httpd::Request& request, RateLimiter::Clock::time_point now);

  bool needs_token() const { return !m_options.tokens.empty(); }

private:
  const Route* find_route(const std::string& path) const;
  httpd::Response search(const httpd::Request& request, const Caller& caller);
  httpd::Response file(const httpd::Request& request, const Caller& caller);
  httpd::Response status(const Caller& caller);
  /// The backend's repositories that `caller` may see and the request's repo= (a glob or a
  /// name) matches; an error when the backend cannot say.
  util::Result<std::vector<std::string>> visible_repositories(const httpd::Request& request, const Caller& caller);

  ApiOptions m_options;
  Backend& m_backend;
  RateLimiter m_limiter;
  std::vector<Route> m_routes;
  std::atomic<unsigned> m_active{0};
};

} // namespace kasava::serve
