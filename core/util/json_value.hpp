// The JSON reader: parses a document (RFC 8259) into a JsonValue tree, for tests, the MCP
// server and HTTP clients, with nlohmann-json underneath (json_value.cpp). Strict about the
// grammar, bounded in depth, errors with a byte offset.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "core/util/result.hpp"

namespace kasava::util {

enum class JsonType { null, boolean, number, string, array, object };

/// Name of a type for messages: "null", "boolean", "number", "string", "array", "object".
const char* json_type_name(JsonType type);

/// Thrown by the unchecked accessors (as_string(), …) when the value has another type.
class JsonTypeError : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

/// One parsed JSON value. Objects keep their members in document order; when a key occurs
/// twice, both are kept and lookups find the last one (as most JSON readers do).
/// Strings are always valid UTF-8.
class JsonValue {
public:
  struct Member;
  using Array = std::vector<JsonValue>;
  using Object = std::vector<Member>;

  // Defined out of line: Member is incomplete inside this class.
  JsonValue();  ///< null
  JsonValue(std::nullptr_t);
  JsonValue(bool flag);
  JsonValue(int number);
  JsonValue(std::int64_t number);
  JsonValue(double number);
  JsonValue(std::string text);
  JsonValue(std::string_view text);
  JsonValue(const char* text);
  JsonValue(Array elements);
  JsonValue(Object members);

  JsonType type() const { return static_cast<JsonType>(m_data.index()); }
  bool is_null() const { return type() == JsonType::null; }
  bool is_bool() const { return type() == JsonType::boolean; }
  bool is_number() const { return type() == JsonType::number; }
  bool is_string() const { return type() == JsonType::string; }
  bool is_array() const { return type() == JsonType::array; }
  bool is_object() const { return type() == JsonType::object; }

  /// Checked access: the value when it has that type, else nullopt / nullptr.
  std::optional<bool> get_bool() const;
  std::optional<double> get_number() const;
  /// The number when its value is an integer that fits in 64 bits (exact for integers
  /// written without fraction or exponent, whatever their size up to int64).
  std::optional<std::int64_t> get_integer() const;
  const std::string* get_string() const;
  const Array* get_array() const;
  const Object* get_object() const;

  /// Unchecked access: throws JsonTypeError ("expected a string, got a number").
  bool as_bool() const;
  double as_number() const;
  std::int64_t as_integer() const;
  const std::string& as_string() const;
  const Array& as_array() const;
  const Object& as_object() const;

  /// Member `key` of an object (the last one if repeated); nullptr when absent or not an object.
  const JsonValue* find(std::string_view key) const;
  bool contains(std::string_view key) const { return find(key) != nullptr; }
  /// Member `key`, or a null value when absent: chains safely, `v["a"]["b"].is_null()`.
  const JsonValue& operator[](std::string_view key) const;
  /// Element `index` of an array, or a null value when out of range or not an array.
  const JsonValue& operator[](std::size_t index) const;
  /// Elements of an array or members of an object; 0 for other types.
  std::size_t size() const;

  /// Compact JSON text of the value (members in order, numbers round-tripping).
  std::string dump() const;

  /// Deep equality; numbers compare by value, objects by members in order.
  friend bool operator==(const JsonValue& a, const JsonValue& b);
  friend bool operator!=(const JsonValue& a, const JsonValue& b) { return !(a == b); }

private:
  struct Number {
    double value = 0.0;
    std::optional<std::int64_t> integer;  ///< set when the number is an exact int64
  };
  void dump_to(std::string& out) const;

  // Alternatives in the order of JsonType.
  std::variant<std::monostate, bool, Number, std::string, Array, Object> m_data;
};

struct JsonValue::Member {
  std::string key;
  JsonValue value;
  friend bool operator==(const Member& a, const Member& b) {
    return a.key == b.key && a.value == b.value;
  }
};

struct JsonParseOptions {
  /// Arrays and objects nested deeper than this are an error (the reader is recursive; this
  /// keeps hostile input from exhausting the stack).
  std::size_t max_depth = 256;
};

/// Parses one JSON document (whitespace around it allowed, nothing else after it; a leading
/// UTF-8 byte-order mark is ignored). Errors are one line with the byte offset:
/// `invalid JSON at byte 12: expected ':' after an object key`. Rejects what RFC 8259 does
/// not allow: comments, trailing commas, single quotes, NaN, leading zeros, control
/// characters in strings, invalid UTF-8. A lone surrogate escape (\uD800) decodes to U+FFFD.
Result<JsonValue> parse_json(std::string_view text, const JsonParseOptions& options = {});

}  // namespace kasava::util
