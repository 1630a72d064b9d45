// Decoding streamed answers (see stream.hpp). Unknown event types and fields are ignored, as
// both providers ask of clients (they add new ones); what the answer depends on — text deltas,
// the end marker, errors — is checked strictly.
#include "core/answer/stream.hpp"

#include "core/util/json_value.hpp"
#include "core/util/strings.hpp"

namespace kasava::answer {

namespace {

constexpr std::size_t k_detail_bytes = 300;

// One line of at most k_detail_bytes, cut on a UTF-8 boundary.
std::string one_line(std::string_view text) {
  std::string line = util::to_valid_utf8(text);
  for (char& c : line)
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = ' ';
  line = std::string(util::trim(line));
  if (line.size() > k_detail_bytes) {
    std::size_t cut = k_detail_bytes;
    while (cut > 0 && (static_cast<unsigned char>(line[cut]) & 0xC0) == 0x80) --cut;
    line.resize(cut);
    line += "…";
  }
  return line;
}

std::string detail_of(const util::JsonValue& root) {
  const util::JsonValue& error = root["error"];
  if (const std::string* text = error.get_string()) return *text;
  std::string detail;
  const std::string* type = error["type"].get_string();
  if (type == nullptr) type = error["code"].get_string();
  const std::string* message = error["message"].get_string();
  if (message == nullptr) message = root["message"].get_string();
  if (message == nullptr) message = root["detail"].get_string();
  if (type != nullptr && !type->empty()) detail = *type;
  if (message != nullptr && !message->empty()) detail += (detail.empty() ? "" : ": ") + *message;
  if (detail.empty() && root.size() > 0) detail = root.dump();
  return detail;
}

}  // namespace

std::string error_detail(std::string_view body) {
  auto parsed = util::parse_json(body, util::JsonParseOptions{16});
  return one_line(parsed ? detail_of(*parsed) : std::string(body));
}

StreamDecoder::StreamDecoder(Provider provider, std::size_t max_event_bytes)
    : m_provider(provider), m_parser(max_event_bytes) {}

bool StreamDecoder::hit_token_limit() const {
  return m_stop_reason == "max_tokens" || m_stop_reason == "length";
}

util::Status StreamDecoder::feed(std::string_view bytes, const OnText& on_text) {
  if (!m_error.empty()) return util::Error{m_error};
  if (m_finished || m_stopped) return util::ok_status();
  const util::Status status =
      m_parser.feed(bytes, [&](const net::SseEvent& event) { return on_event(event, on_text); });
  if (!status && m_error.empty()) m_error = "the answer stream: " + status.error().message;
  if (!m_error.empty()) return util::Error{m_error};
  return util::ok_status();
}

bool StreamDecoder::fail(std::string message) {
  m_error = std::move(message);
  return false;
}

bool StreamDecoder::deliver(std::string_view text, const OnText& on_text) {
  if (text.empty()) return true;
  m_text_bytes += text.size();
  if (on_text && !on_text(text)) m_stopped = true;
  return !m_stopped;
}

bool StreamDecoder::on_event(const net::SseEvent& event, const OnText& on_text) {
  if (m_finished || m_stopped) return false;
  return m_provider == Provider::anthropic ? on_anthropic(event, on_text)
                                           : on_openai(event, on_text);
}

bool StreamDecoder::on_anthropic(const net::SseEvent& event, const OnText& on_text) {
  auto parsed = util::parse_json(event.data, util::JsonParseOptions{32});
  std::string name = "'";  // appended: GCC 12 warns falsely on "'" + string
  name += one_line(event.type);
  name += "' event";
  if (!parsed) return fail("malformed " + name + " from the model: " + parsed.error().message);
  const util::JsonValue& root = *parsed;
  if (!root.is_object()) return fail("malformed " + name + " from the model: not a JSON object");
  // The data's own type is authoritative; the SSE event name repeats it.
  const std::string* data_type = root["type"].get_string();
  const std::string type = data_type != nullptr ? *data_type : event.type;

  if (type == "content_block_delta") {
    const util::JsonValue& delta = root["delta"];
    const std::string* delta_type = delta["type"].get_string();
    if (delta_type != nullptr && *delta_type == "text_delta") {
      const std::string* text = delta["text"].get_string();
      if (text == nullptr)
        return fail("malformed " + name + " from the model: a text_delta without text");
      return deliver(*text, on_text);
    }
    // thinking_delta, input_json_delta, signature_delta, citations_delta: not answer text.
  } else if (type == "content_block_start") {
    const util::JsonValue& block = root["content_block"];
    if (const std::string* block_type = block["type"].get_string();
        block_type && *block_type == "text")
      if (const std::string* text = block["text"].get_string()) return deliver(*text, on_text);
  } else if (type == "message_delta") {
    if (const std::string* reason = root["delta"]["stop_reason"].get_string())
      m_stop_reason = *reason;
  } else if (type == "message_stop") {
    m_finished = true;
    return false;
  } else if (type == "error" || event.type == "error") {
    const std::string detail = one_line(detail_of(root));
    return fail("the model reported an error" + (detail.empty() ? "" : ": " + detail));
  }
  // message_start, content_block_stop, ping and event types added later: nothing to do.
  return true;
}

bool StreamDecoder::on_openai(const net::SseEvent& event, const OnText& on_text) {
  if (event.is_done()) {
    m_finished = true;
    return false;
  }
  auto parsed = util::parse_json(event.data, util::JsonParseOptions{32});
  if (!parsed) return fail("malformed event from the model: " + parsed.error().message);
  const util::JsonValue& root = *parsed;
  if (!root.is_object()) return fail("malformed event from the model: not a JSON object");
  if (root.contains("error") || event.type == "error") {
    const std::string detail = one_line(detail_of(root));
    return fail("the model reported an error" + (detail.empty() ? "" : ": " + detail));
  }
  // One choice was asked for; a chunk with no choices carries usage only.
  const util::JsonValue& choice = root["choices"][std::size_t{0}];
  if (choice.is_null()) return true;
  const util::JsonValue& content = choice["delta"]["content"];
  if (const std::string* text = content.get_string()) {
    if (!deliver(*text, on_text)) return false;
  } else if (!content.is_null()) {
    return fail("malformed event from the model: delta.content is a " +
                std::string(util::json_type_name(content.type())) + ", expected a string");
  }
  if (const std::string* reason = choice["finish_reason"].get_string()) m_stop_reason = *reason;
  return true;
}

}  // namespace kasava::answer
