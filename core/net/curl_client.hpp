// The libcurl implementation of HttpClient: keep-alive connections reused across requests
// (a pool of easy handles), timeouts, streaming, cancellation, typed failures.
#pragma once

#include <memory>

#include "core/net/http.hpp"

namespace kasava::net {

struct CurlOptions {
  std::string user_agent = "kasava/0.1";
  /// Idle easy handles (each keeps its connections alive) kept for reuse.
  std::size_t max_idle_handles = 16;
};

/// A libcurl client. Thread-safe: each send() uses its own easy handle from a pool.
std::unique_ptr<HttpClient> make_curl_client(const CurlOptions& options = {});

}  // namespace kasava::net
