// The JSON writer of json.hpp: commas and nesting here, string escaping by nlohmann-json
// (text that needs none is quoted here), numbers printed as kasava always has (%.6g for scores
// and timings).
#include "core/util/json.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include <nlohmann/json.hpp>

#include "core/util/strings.hpp"

namespace kasava::util {

std::string json_quote(std::string_view raw) {
  // Most text needs no escape: quoted as it is, it is what nlohmann would write (which
  // escapes only quotes, backslashes and control characters). A publish quotes every term of
  // every chunk, and building and dumping a nlohmann value for each was ~10% of its CPU.
  const bool valid = is_valid_utf8(raw);
  const bool plain = std::none_of(raw.begin(), raw.end(), [](char c) {
    return c == '"' || c == '\\' || static_cast<unsigned char>(c) < 0x20;
  });
  if (valid && plain) {
    std::string quoted;
    quoted.reserve(raw.size() + 2);
    quoted += '"';
    quoted += raw;
    quoted += '"';
    return quoted;
  }
  // Invalid bytes are replaced here, one U+FFFD each: nlohmann's own replacement puts one
  // U+FFFD per invalid sequence, and the text kasava prints must not change.
  const nlohmann::json text = valid ? std::string(raw) : to_valid_utf8(raw);
  return text.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
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

}  // namespace kasava::util
