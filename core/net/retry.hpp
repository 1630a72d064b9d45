// Retries for HTTP exchanges: exponential backoff with jitter on 429, 5xx, timeouts and broken
// connections, honouring Retry-After; combined with an optional rate limiter and circuit
// breaker in RetryingClient, an HttpClient decorator.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string_view>

#include "core/net/circuit_breaker.hpp"
#include "core/net/clock.hpp"
#include "core/net/http.hpp"
#include "core/net/rate_limiter.hpp"

namespace kasava::net {

struct RetryPolicy {
  int max_attempts = 6;  ///< attempts in all, the first one included
  std::chrono::milliseconds base_delay{500};
  std::chrono::milliseconds max_delay{20'000};
  double multiplier = 2.0;
  /// A Retry-After longer than this is not waited for: the exchange fails at once.
  std::chrono::milliseconds max_retry_after{120'000};
};

/// True for statuses worth retrying: 408, 409 (OpenAI's "lock timeout"), 425, 429 and 5xx
/// except 501 and 505.
bool is_retryable_status(int status);
/// True for transport failures worth retrying: connect, timeout, reset.
bool is_retryable_failure(FailureKind kind);

/// The delay a Retry-After value asks for: delta-seconds ("120", fractions accepted) or an
/// HTTP date ("Wed, 21 Oct 2015 07:28:00 GMT", relative to `now_unix`). nullopt when
/// unparseable; a date in the past gives zero.
std::optional<std::chrono::milliseconds> parse_retry_after(std::string_view value, double now_unix);

/// Backoff before attempt `attempt` + 1 (attempt counts from 1): "equal jitter" —
/// half of min(max_delay, base * multiplier^(attempt-1)) fixed, the other half random
/// (`uniform` in [0, 1)), so parallel clients do not retry in lockstep.
std::chrono::milliseconds backoff_delay(const RetryPolicy& policy, int attempt, double uniform);

/// What happened before a retry, for progress reporting (core/ never prints).
struct RetryEvent {
  int attempt = 0;                    ///< the attempt that failed (from 1)
  std::chrono::milliseconds delay{};  ///< wait before the next one
  int status = 0;                     ///< HTTP status, 0 for a transport failure
  FailureKind failure = FailureKind::none;
};

struct RetryOptions {
  RetryPolicy policy;
  Clock* clock = &system_clock();
  /// Uniform random numbers in [0, 1) for jitter; default: a thread-local engine.
  std::function<double()> uniform;
  /// Shared by every client of one endpoint; either may be null.
  std::shared_ptr<RateLimiter> rate_limiter;
  std::shared_ptr<CircuitBreaker> breaker;
  std::function<void(const RetryEvent&)> on_retry;
};

/// Sends through `inner`, retrying as RetryPolicy says. The outcome is the last attempt's:
/// a response (maybe a retryable status after the last attempt; the caller explains it) or a
/// transport failure whose message says how many attempts were made. A streaming request
/// that already delivered data is never retried.
class RetryingClient final : public HttpClient {
public:
  RetryingClient(HttpClient& inner, RetryOptions options);
  HttpOutcome send(const HttpRequest& request) override;

  /// Attempts sent to `inner` so far (all threads).
  long attempts_sent() const { return m_attempts.load(); }

private:
  HttpClient& m_inner;
  RetryOptions m_options;
  std::atomic<long> m_attempts{0};
};

}  // namespace kasava::net
