// Minimal JSON writer: see json.hpp.
#include "core/util/json.hpp"

#include <cmath>
#include <cstdio>

#include "core/util/strings.hpp"

namespace kasava::util {

std::string json_quote(std::string_view raw) {
  const std::string text = is_valid_utf8(raw) ? std::string(raw) : to_valid_utf8(raw);
  std::string out;
  out.reserve(text.size() + 2);
  out += '"';
  for (char c : text) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      case '\b': out += "\\b"; break;
      case '\f': out += "\\f"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          char buffer[8];
          std::snprintf(buffer, sizeof buffer, "\\u%04x", static_cast<unsigned>(c));
          out += buffer;
        } else {
          out += c;
        }
    }
  }
  out += '"';
  return out;
}

void JsonWriter::before_value() {
  if (m_after_key) {
    m_after_key = false;
    return;
  }
  if (!m_has_element.empty()) {
    if (m_has_element.back()) m_out += ',';
    m_has_element.back() = true;
  }
}

JsonWriter& JsonWriter::begin_object() {
  before_value();
  m_out += '{';
  m_has_element.push_back(false);
  return *this;
}

JsonWriter& JsonWriter::end_object() {
  m_out += '}';
  m_has_element.pop_back();
  return *this;
}

JsonWriter& JsonWriter::begin_array() {
  before_value();
  m_out += '[';
  m_has_element.push_back(false);
  return *this;
}

JsonWriter& JsonWriter::end_array() {
  m_out += ']';
  m_has_element.pop_back();
  return *this;
}

JsonWriter& JsonWriter::key(std::string_view name) {
  before_value();
  m_out += json_quote(name);
  m_out += ':';
  m_after_key = true;
  return *this;
}

JsonWriter& JsonWriter::value(std::string_view text) {
  before_value();
  m_out += json_quote(text);
  return *this;
}

JsonWriter& JsonWriter::value(std::int64_t number) {
  before_value();
  m_out += std::to_string(number);
  return *this;
}

JsonWriter& JsonWriter::value(double number) {
  before_value();
  if (!std::isfinite(number)) {
    m_out += "null";
    return *this;
  }
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.6g", number);
  m_out += buffer;
  return *this;
}

JsonWriter& JsonWriter::value(bool flag) {
  before_value();
  m_out += flag ? "true" : "false";
  return *this;
}

JsonWriter& JsonWriter::null() {
  before_value();
  m_out += "null";
  return *this;
}

} // namespace kasava::util
