// Retry decisions, Retry-After parsing and the retrying HttpClient decorator.
#include "core/net/retry.hpp"

#include <algorithm>
#include <cmath>
#include <ctime>
#include <random>
#include <string>

#include "core/util/strings.hpp"

namespace kasava::net {
namespace {

double default_uniform() {
  thread_local std::mt19937_64 engine{std::random_device{}()};
  return std::uniform_real_distribution<double>(0.0, 1.0)(engine);
}

/// Days since 1970-01-01 of a civil date (Howard Hinnant's algorithm): timegm() without
/// touching the process's time zone.
long long days_from_civil(long long y, unsigned m, unsigned d) {
  y -= m <= 2;
  const long long era = (y >= 0 ? y : y - 399) / 400;
  const unsigned yoe = static_cast<unsigned>(y - era * 400);
  const unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + static_cast<long long>(doe) - 719468;
}

/// "Sun, 06 Nov 1994 08:49:37 GMT" (IMF-fixdate, the form servers send) → Unix seconds.
std::optional<double> parse_http_date(std::string_view text) {
  static const char* const months[] = {"jan", "feb", "mar", "apr", "may", "jun",
                                       "jul", "aug", "sep", "oct", "nov", "dec"};
  const std::size_t comma = text.find(',');
  if (comma == std::string_view::npos) return std::nullopt;
  const std::vector<std::string> parts = util::split(util::trim(text.substr(comma + 1)), ' ');
  if (parts.size() < 4) return std::nullopt;
  auto number = [](const std::string& s) -> std::optional<long long> {
    if (s.empty() || s.size() > 4) return std::nullopt;
    long long n = 0;
    for (char c : s) {
      if (c < '0' || c > '9') return std::nullopt;
      n = n * 10 + (c - '0');
    }
    return n;
  };
  const auto day = number(parts[0]);
  const auto year = number(parts[2]);
  int month = -1;
  for (int i = 0; i < 12; ++i)
    if (util::to_lower(parts[1]) == months[i]) month = i + 1;
  const std::vector<std::string> hms = util::split(parts[3], ':');
  if (!day || !year || month < 0 || hms.size() != 3) return std::nullopt;
  const auto h = number(hms[0]), mi = number(hms[1]), s = number(hms[2]);
  if (!h || !mi || !s || *day < 1 || *day > 31 || *h > 23 || *mi > 59 || *s > 60)
    return std::nullopt;
  const long long days =
      days_from_civil(*year, static_cast<unsigned>(month), static_cast<unsigned>(*day));
  return static_cast<double>(days * 86400 + *h * 3600 + *mi * 60 + *s);
}

std::string attempts_text(int attempts) {
  return attempts == 1 ? "1 attempt" : std::to_string(attempts) + " attempts";
}

}  // namespace

bool is_retryable_status(int status) {
  if (status == 408 || status == 409 || status == 425 || status == 429) return true;
  return status >= 500 && status <= 599 && status != 501 && status != 505;
}

bool is_retryable_failure(FailureKind kind) {
  return kind == FailureKind::connect || kind == FailureKind::timeout || kind == FailureKind::reset;
}

std::optional<std::chrono::milliseconds> parse_retry_after(std::string_view value,
                                                           double now_unix) {
  value = util::trim(value);
  if (value.empty()) return std::nullopt;
  if ((value[0] >= '0' && value[0] <= '9') || value[0] == '.') {
    double seconds = 0;
    double scale = 0;  // 0 while in the integer part
    for (char c : value) {
      if (c == '.' && scale == 0) {
        scale = 0.1;
      } else if (c >= '0' && c <= '9') {
        if (scale == 0) {
          seconds = seconds * 10 + (c - '0');
        } else {
          seconds += (c - '0') * scale;
          scale /= 10;
        }
      } else {
        return std::nullopt;
      }
      if (seconds > 1e9) return std::nullopt;
    }
    return std::chrono::milliseconds(static_cast<long long>(std::llround(seconds * 1000)));
  }
  const auto date = parse_http_date(value);
  if (!date) return std::nullopt;
  const double delta = std::max(0.0, *date - now_unix);
  if (delta > 1e9) return std::nullopt;
  return std::chrono::milliseconds(static_cast<long long>(std::llround(delta * 1000)));
}

std::chrono::milliseconds backoff_delay(const RetryPolicy& policy, int attempt, double uniform) {
  const double base = static_cast<double>(policy.base_delay.count());
  const double cap = static_cast<double>(policy.max_delay.count());
  const double grown = base * std::pow(policy.multiplier, std::max(0, attempt - 1));
  const double delay = std::min(cap, grown);
  const double jittered = delay / 2 + delay / 2 * std::clamp(uniform, 0.0, 1.0);
  return std::chrono::milliseconds(static_cast<long long>(jittered));
}

RetryingClient::RetryingClient(HttpClient& inner, RetryOptions options)
    : m_inner(inner), m_options(std::move(options)) {
  if (!m_options.uniform) m_options.uniform = default_uniform;
  if (m_options.clock == nullptr) m_options.clock = &system_clock();
}

HttpOutcome RetryingClient::send(const HttpRequest& request) {
  const std::string where = request.method + " " + display_url(request.url);
  const int max_attempts = std::max(1, m_options.policy.max_attempts);
  Clock& clock = *m_options.clock;
  HttpOutcome outcome;
  for (int attempt = 1;; ++attempt) {
    if (m_options.breaker && !m_options.breaker->allow()) {
      // Opened by our own failures: the last one is the better explanation.
      if (attempt > 1) {
        if (!outcome.has_response())
          outcome.error += " (after " + attempts_text(attempt - 1) + ", circuit now open)";
        return outcome;
      }
      const auto remaining = std::chrono::duration_cast<std::chrono::milliseconds>(
          m_options.breaker->remaining_cool_down());
      outcome = HttpOutcome{};
      outcome.failure = FailureKind::circuit_open;
      outcome.error = where + ": not sent, the endpoint failed " +
                      std::to_string(m_options.breaker->consecutive_failures()) +
                      " times in a row (circuit open, next try in " +
                      std::to_string(remaining.count()) + " ms)";
      outcome.attempts = attempt - 1;
      return outcome;
    }
    if (m_options.rate_limiter && !m_options.rate_limiter->acquire(request.cancel)) {
      outcome = HttpOutcome{};
      outcome.failure = FailureKind::cancelled;
      outcome.error = where + ": cancelled";
      outcome.attempts = attempt - 1;
      return outcome;
    }
    ++m_attempts;
    outcome = m_inner.send(request);
    outcome.attempts = attempt;

    const bool transport_retryable =
        !outcome.has_response() && is_retryable_failure(outcome.failure);
    const bool status_retryable =
        outcome.has_response() && is_retryable_status(outcome.response.status);
    if (m_options.breaker) {
      if (transport_retryable || status_retryable) {
        m_options.breaker->record_failure();
      } else if (outcome.has_response()) {
        m_options.breaker->record_success();
      }
    }
    const bool retryable = (transport_retryable || status_retryable) && outcome.streamed_bytes == 0;
    if (!retryable) break;
    if (attempt >= max_attempts) {
      if (!outcome.has_response()) outcome.error += " (after " + attempts_text(attempt) + ")";
      break;
    }

    std::chrono::milliseconds delay = backoff_delay(m_options.policy, attempt, m_options.uniform());
    if (outcome.has_response()) {
      if (const auto header = outcome.response.header("retry-after")) {
        if (const auto asked = parse_retry_after(*header, clock.unix_time())) {
          if (*asked > m_options.policy.max_retry_after) break;  // the caller explains the status
          delay = std::max(delay, *asked);
        }
      }
    }
    if (m_options.on_retry)
      m_options.on_retry(RetryEvent{
          attempt, delay, outcome.has_response() ? outcome.response.status : 0, outcome.failure});
    if (!clock.sleep_for(delay, request.cancel)) {
      outcome = HttpOutcome{};
      outcome.failure = FailureKind::cancelled;
      outcome.error = where + ": cancelled";
      outcome.attempts = attempt;
      return outcome;
    }
  }
  return outcome;
}

}  // namespace kasava::net
