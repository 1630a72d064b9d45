// The Server-Sent Events parser (see sse.hpp; follows the WHATWG HTML standard, section
// "Parsing an event stream").
#include "core/net/sse.hpp"

namespace kasava::net {

util::Status SseParser::feed(std::string_view bytes, const Callback& callback) {
  if (m_failed) return util::Error{"event stream: parser already failed"};
  if (m_stopped) return util::ok_status();
  if (m_at_start) {
    // The BOM may arrive split across reads: wait until 3 bytes (or a mismatch) are known.
    std::string_view pending = m_line;
    std::string joined;
    if (!pending.empty()) {
      joined = m_line + std::string(bytes);
      pending = joined;
    } else {
      pending = bytes;
    }
    static constexpr std::string_view bom = "\xEF\xBB\xBF";
    if (pending.size() < bom.size() && bom.substr(0, pending.size()) == pending) {
      m_line = std::string(pending);
      return util::ok_status();
    }
    m_at_start = false;
    std::string rest(pending.substr(pending.substr(0, 3) == bom ? 3 : 0));
    m_line.clear();
    return feed(rest, callback);
  }
  for (std::size_t i = 0; i < bytes.size(); ++i) {
    const char c = bytes[i];
    if (m_after_cr) {
      m_after_cr = false;
      if (c == '\n') continue;  // the LF of a CRLF
    }
    if (c == '\r' || c == '\n') {
      m_after_cr = c == '\r';
      process_line(m_line, callback);
      m_line.clear();
      if (m_stopped) return util::ok_status();
      continue;
    }
    // Copy the run of ordinary bytes at once.
    std::size_t end = i;
    while (end < bytes.size() && bytes[end] != '\r' && bytes[end] != '\n') ++end;
    m_line.append(bytes.substr(i, end - i));
    i = end - 1;
    if (m_line.size() + m_data.size() > m_max_bytes) {
      m_failed = true;
      return util::Error{"event stream: an event exceeds " + std::to_string(m_max_bytes) +
                         " bytes"};
    }
  }
  return util::ok_status();
}

void SseParser::process_line(std::string_view line, const Callback& callback) {
  if (line.empty()) {
    // Dispatch.
    if (m_has_data) {
      SseEvent event;
      event.type = m_type.empty() ? "message" : m_type;
      event.data = std::move(m_data);
      event.id = m_id;
      if (!callback(event)) m_stopped = true;
    }
    m_type.clear();
    m_data.clear();
    m_has_data = false;
    m_has_fields = false;
    return;
  }
  if (line[0] == ':') return;  // comment (keep-alive pings)
  m_has_fields = true;
  std::string_view field = line;
  std::string_view value;
  if (const std::size_t colon = line.find(':'); colon != std::string_view::npos) {
    field = line.substr(0, colon);
    value = line.substr(colon + 1);
    if (!value.empty() && value[0] == ' ') value.remove_prefix(1);
  }
  if (field == "data") {
    if (m_has_data) m_data += '\n';
    m_data.append(value);
    m_has_data = true;
  } else if (field == "event") {
    m_type = std::string(value);
  } else if (field == "id") {
    if (value.find('\0') == std::string_view::npos) m_id = std::string(value);
  } else if (field == "retry") {
    if (value.empty() || value.size() > 15) return;
    long long ms = 0;
    for (char c : value) {
      if (c < '0' || c > '9') return;
      ms = ms * 10 + (c - '0');
    }
    m_retry = ms;
  }
}

bool SseParser::at_boundary() const {
  return m_line.empty() && !m_has_fields && !m_has_data;
}

}  // namespace kasava::net
