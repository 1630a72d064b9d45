// Decoding a streamed answer: the response body of a chat request (Server-Sent Events, read
// with net::SseParser) → pieces of text as they arrive, the stop reason, and whether the
// provider's end marker came. Anthropic: message_start, content_block_start,
// content_block_delta (text_delta), content_block_stop, message_delta (stop_reason),
// message_stop, ping, error. OpenAI-compatible: `data:` chunks with choices[0].delta.content
// and finish_reason, an `error` object, and `data: [DONE]`.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>

#include "core/answer/spec.hpp"
#include "core/net/sse.hpp"
#include "core/util/result.hpp"

namespace kasava::answer {

/// Receives each piece of the answer's text, in order, as soon as it is decoded; returns
/// false to stop reading (e.g. stdout was closed).
using OnText = std::function<bool(std::string_view)>;

/// Pure code: bytes in (split anywhere), text out. Once it fails it stays failed.
class StreamDecoder {
public:
  explicit StreamDecoder(Provider provider, std::size_t max_event_bytes = 1u << 20);

  /// Decodes `bytes`, calling `on_text` for each non-empty piece. Errors (then every later
  /// call returns the same one): an event that is not valid JSON or not an object, a text
  /// delta without text, an `error` event (its type and message, capped), an event larger
  /// than max_event_bytes. Bytes after the end marker are ignored.
  util::Status feed(std::string_view bytes, const OnText& on_text);

  /// The end marker arrived (Anthropic: message_stop; OpenAI: [DONE]).
  bool finished() const { return m_finished; }
  /// OpenAI-compatible servers that close the stream after a finish_reason without sending
  /// [DONE]: the answer is complete when the transfer itself ended cleanly.
  bool saw_finish_reason() const { return !m_stop_reason.empty(); }
  /// Why the model stopped ("end_turn", "max_tokens", "stop", "length", …), "" until known.
  const std::string& stop_reason() const { return m_stop_reason; }
  /// The model stopped at its output limit (max_tokens, length): the answer is cut short.
  bool hit_token_limit() const;
  /// on_text returned false: decoding stopped, later bytes are ignored.
  bool stopped() const { return m_stopped; }
  /// Bytes of text delivered so far.
  std::size_t text_bytes() const { return m_text_bytes; }

private:
  bool on_event(const net::SseEvent& event, const OnText& on_text);
  bool on_anthropic(const net::SseEvent& event, const OnText& on_text);
  bool on_openai(const net::SseEvent& event, const OnText& on_text);
  bool fail(std::string message);
  /// Hands text to on_text; false when the receiver asked to stop.
  bool deliver(std::string_view text, const OnText& on_text);

  Provider m_provider;
  net::SseParser m_parser;
  bool m_finished = false;
  bool m_stopped = false;
  std::string m_error;  ///< set once failed
  std::string m_stop_reason;
  std::size_t m_text_bytes = 0;
};

/// The readable part of an error object as providers send it ({"error": {"type", "message"}}
/// or {"error": "text"}, {"message": …}, {"detail": …}): "overloaded_error: Overloaded".
/// One line, control characters removed, at most 300 bytes; the raw text (cut the same way)
/// when it is not JSON; "" when there is nothing to say.
std::string error_detail(std::string_view body);

}  // namespace kasava::answer
