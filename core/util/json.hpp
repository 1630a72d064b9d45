// A minimal streaming JSON writer for --json output (strings escaped by nlohmann-json; valid
// UTF-8 guaranteed: invalid bytes in source text become U+FFFD).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace kasava::util {

/// Builds one JSON document into a string. Commas and nesting are tracked for the caller:
/// `w.begin_object(); w.key("a"); w.value(1); w.end_object();`.
class JsonWriter {
public:
  JsonWriter& begin_object();
  JsonWriter& end_object();
  JsonWriter& begin_array();
  JsonWriter& end_array();
  JsonWriter& key(std::string_view name);
  JsonWriter& value(std::string_view text);
  JsonWriter& value(const char* text) { return value(std::string_view(text)); }
  JsonWriter& value(const std::string& text) { return value(std::string_view(text)); }
  JsonWriter& value(std::int64_t number);
  JsonWriter& value(int number) { return value(static_cast<std::int64_t>(number)); }
  JsonWriter& value(std::size_t number) { return value(static_cast<std::int64_t>(number)); }
  JsonWriter& value(double number);
  JsonWriter& value(bool flag);
  JsonWriter& null();

  const std::string& str() const { return m_out; }

private:
  void before_value();
  std::string m_out;
  // One entry per open container: true once it holds an element (a comma is due).
  std::vector<bool> m_has_element;
  bool m_after_key = false;
};

/// `text` as a JSON string literal, quotes included.
std::string json_quote(std::string_view text);

} // namespace kasava::util
