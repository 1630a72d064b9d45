// A Server-Sent Events parser (the WHATWG "text/event-stream" format) as pure code: bytes in,
// whole events out, however the bytes are split across network reads. Used by streamed chat
// answers (OpenAI's `data: [DONE]`, Anthropic's `event:` types).
#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "core/util/result.hpp"

namespace kasava::net {

struct SseEvent {
  std::string type = "message";  ///< the `event:` field, "message" when absent
  std::string data;              ///< `data:` lines joined with '\n'
  std::string id;                ///< the last `id:` seen so far in the stream
  /// OpenAI's end-of-stream marker: data is exactly "[DONE]".
  bool is_done() const { return data == "[DONE]"; }
};

/// Feeds bytes, calls back once per complete event. Lines end with "\r\n", "\n" or "\r";
/// a blank line ends an event; lines starting with ':' are comments; an event without data
/// is not dispatched; one leading space after the colon is dropped; unknown fields ignored.
class SseParser {
public:
  /// Return false from the callback to stop: feed() then returns early, ignoring the rest.
  using Callback = std::function<bool(const SseEvent&)>;

  explicit SseParser(std::size_t max_event_bytes = 16u << 20) : m_max_bytes(max_event_bytes) {}

  /// Parses `bytes`. An error when one event grows past max_event_bytes (then the parser
  /// stays failed); stopped() tells whether the callback asked to stop.
  util::Status feed(std::string_view bytes, const Callback& callback);

  /// Whether the stream so far ended on an event boundary. False means it was truncated
  /// mid-event: a partial line or lines of an event not yet closed by a blank line (which,
  /// per the standard, are discarded, never dispatched).
  bool at_boundary() const;

  bool stopped() const { return m_stopped; }
  /// Milliseconds from the last valid `retry:` field.
  std::optional<long long> retry_ms() const { return m_retry; }

private:
  void process_line(std::string_view line, const Callback& callback);

  std::size_t m_max_bytes;
  std::string m_line;
  bool m_after_cr = false;
  bool m_at_start = true;  ///< a UTF-8 byte-order mark may open the stream
  bool m_failed = false;
  bool m_stopped = false;
  bool m_has_fields = false;  ///< a field line of the current event was seen
  std::string m_type;
  std::string m_data;
  bool m_has_data = false;
  std::string m_id;
  std::optional<long long> m_retry;
};

}  // namespace kasava::net
