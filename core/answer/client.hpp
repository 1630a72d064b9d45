// Asking a chat model for a written answer: the HTTP request per provider (Anthropic's
// /v1/messages, OpenAI-compatible /chat/completions, both with stream: true), sent through
// the retrying client, the streamed events decoded into text for a callback as they arrive,
// and every way it can end — complete, failed (with a message that names the key variable
// and never the key) or cancelled.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <string>

#include "core/answer/prompt.hpp"
#include "core/answer/spec.hpp"
#include "core/answer/stream.hpp"
#include "core/net/http.hpp"
#include "core/net/retry.hpp"

namespace kasava::answer {

/// Everything an answer request needs besides the model spec and the prompt.
struct ChatSettings {
  /// "" = the provider's default (default_base_url()). Anthropic: without /v1; OpenAI: up
  /// to and including the version (/v1), as for embeddings.
  std::string base_url;
  std::string api_key;    ///< "" = no key header (local OpenAI-compatible servers)
  int max_tokens = 2048;  ///< the answer's length limit (sent to Anthropic, which requires it)

  /// No total limit: an answer streams as long as it takes; a stalled one (no byte for
  /// low_speed_time, pings included) fails as a timeout.
  net::Timeouts timeouts{std::chrono::milliseconds(10'000), std::chrono::milliseconds(0), 1,
                         std::chrono::seconds(120)};
  net::RetryPolicy retry{4, std::chrono::milliseconds(1000), std::chrono::milliseconds(20'000), 2.0,
                         std::chrono::milliseconds(60'000)};
  net::Clock* clock = nullptr;      ///< null: the system clock (tests inject one)
  std::function<double()> uniform;  ///< jitter source
  std::function<void(const net::RetryEvent&)> on_retry;
  const std::atomic<bool>* cancel = nullptr;  ///< true stops the exchange (Ctrl-C)
};

/// The request (URL, headers, JSON body with stream: true) for `prompt`; no callback set.
net::HttpRequest build_chat_request(const ChatModelSpec& spec, const ChatSettings& settings,
                                    const Prompt& prompt);

enum class AnswerStatus {
  complete,   ///< the end marker arrived (the text may be cut by max_tokens: see stop_reason)
  failed,     ///< see AnswerOutcome::error; text already delivered stays delivered
  cancelled,  ///< settings.cancel was set, or on_text asked to stop
};

struct AnswerOutcome {
  AnswerStatus status = AnswerStatus::failed;
  /// When failed: one lower-case line, context first, never containing the API key, e.g.
  /// "anthropic:claude-x rejected the API key (HTTP 401); set ANTHROPIC_API_KEY to a valid key".
  std::string error;
  std::string stop_reason;  ///< as the provider said it, "" when unknown
  bool hit_token_limit = false;
  std::size_t text_bytes = 0;  ///< text delivered to on_text
  int attempts = 0;            ///< HTTP attempts (retries included)
};

/// Sends the prompt to the model and calls `on_text` with each piece of the answer as it
/// arrives. 429, 5xx, timeouts and broken connections are retried (with backoff, honouring
/// Retry-After) while nothing has streamed yet; a stream cut before its end marker fails with
/// "the answer stream ended before the model finished". Errors: a spec or base URL that
/// cannot work (no key for Anthropic, a base URL that is not http(s)) fail before sending.
AnswerOutcome stream_answer(const ChatModelSpec& spec, const ChatSettings& settings,
                            const Prompt& prompt, const OnText& on_text, net::HttpClient& http);

}  // namespace kasava::answer
