// The JSON reader of json_value.hpp: a recursive-descent parser over the bytes of the
// document (depth-bounded), and the accessors and serializer of JsonValue.
#include "core/util/json_value.hpp"

#include <charconv>
#include <cmath>
#include <cstdio>
#include <limits>
#include <system_error>

#include "core/util/json.hpp"

namespace kasava::util {

const char* json_type_name(JsonType type) {
  switch (type) {
    case JsonType::null:
      return "null";
    case JsonType::boolean:
      return "boolean";
    case JsonType::number:
      return "number";
    case JsonType::string:
      return "string";
    case JsonType::array:
      return "array";
    case JsonType::object:
      return "object";
  }
  return "unknown";
}

namespace {

const JsonValue& null_value() {
  static const JsonValue k_null;
  return k_null;
}

// "a string", "an object", "null".
std::string with_article(JsonType type) {
  if (type == JsonType::null) return "null";
  const bool vowel = type == JsonType::array || type == JsonType::object;
  return std::string(vowel ? "an " : "a ") + json_type_name(type);
}

[[noreturn]] void throw_type_error(JsonType expected, JsonType actual) {
  throw JsonTypeError("expected " + with_article(expected) + ", got " + with_article(actual));
}

// The exact int64 value of d, if it has one.
std::optional<std::int64_t> exact_integer(double d) {
  // 2^63 is exactly representable; every double in [-2^63, 2^63) that is integral fits.
  constexpr double k_limit = 9223372036854775808.0;
  if (!std::isfinite(d) || d < -k_limit || d >= k_limit || std::trunc(d) != d) return std::nullopt;
  return static_cast<std::int64_t>(d);
}

bool is_digit(char c) {
  return c >= '0' && c <= '9';
}

void append_utf8(std::string& out, std::uint32_t code_point) {
  if (code_point < 0x80) {
    out += static_cast<char>(code_point);
  } else if (code_point < 0x800) {
    out += static_cast<char>(0xC0 | (code_point >> 6));
    out += static_cast<char>(0x80 | (code_point & 0x3F));
  } else if (code_point < 0x10000) {
    out += static_cast<char>(0xE0 | (code_point >> 12));
    out += static_cast<char>(0x80 | ((code_point >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (code_point & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (code_point >> 18));
    out += static_cast<char>(0x80 | ((code_point >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((code_point >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (code_point & 0x3F));
  }
}

// Length of the valid UTF-8 sequence starting at text[i] (a non-ASCII lead byte), or 0 when
// it is invalid: bad lead or continuation byte, truncated, overlong, surrogate, > U+10FFFF.
std::size_t utf8_sequence_length(std::string_view text, std::size_t i) {
  const auto byte = [&](std::size_t k) { return static_cast<unsigned char>(text[k]); };
  const unsigned char lead = byte(i);
  std::size_t length = 0;
  unsigned char low = 0x80;
  unsigned char high = 0xBF;  // allowed range of the second byte
  if (lead >= 0xC2 && lead <= 0xDF) {
    length = 2;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    length = 3;
    if (lead == 0xE0) low = 0xA0;   // overlong
    if (lead == 0xED) high = 0x9F;  // surrogates
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    length = 4;
    if (lead == 0xF0) low = 0x90;   // overlong
    if (lead == 0xF4) high = 0x8F;  // above U+10FFFF
  } else {
    return 0;
  }
  if (i + length > text.size()) return 0;
  if (byte(i + 1) < low || byte(i + 1) > high) return 0;
  for (std::size_t k = 2; k < length; ++k) {
    if (byte(i + k) < 0x80 || byte(i + k) > 0xBF) return 0;
  }
  return length;
}

// A character as it should appear in an error message: 'x', or a byte in hex.
std::string describe_char(char c) {
  const auto u = static_cast<unsigned char>(c);
  if (u >= 0x21 && u < 0x7F) return std::string("'") + c + "'";
  char buffer[16];
  std::snprintf(buffer, sizeof buffer, "byte 0x%02X", u);
  return buffer;
}

// Decimal magnitude of a JSON number lexeme (the exponent of its leading digit), used to
// tell overflow from underflow when conversion is out of range. Saturates on huge exponents.
long long decimal_magnitude(std::string_view lexeme) {
  std::size_t i = lexeme.empty() || lexeme[0] != '-' ? 0 : 1;
  long long magnitude = 0;
  bool found = false;
  long long integer_digits = 0;
  for (; i < lexeme.size() && is_digit(lexeme[i]); ++i) {
    if (found || lexeme[i] != '0') {
      found = true;
      ++integer_digits;
    }
  }
  if (found) {
    magnitude = integer_digits - 1;
  } else if (i < lexeme.size() && lexeme[i] == '.') {
    long long zeros = 0;
    for (++i; i < lexeme.size() && lexeme[i] == '0'; ++i) ++zeros;
    magnitude = -(zeros + 1);
  }
  const auto e = lexeme.find_first_of("eE");
  if (e != std::string_view::npos) {
    std::size_t k = e + 1;
    const bool negative = k < lexeme.size() && lexeme[k] == '-';
    if (k < lexeme.size() && (lexeme[k] == '-' || lexeme[k] == '+')) ++k;
    long long exponent = 0;
    for (; k < lexeme.size() && is_digit(lexeme[k]); ++k) {
      exponent = std::min<long long>(exponent * 10 + (lexeme[k] - '0'), 1'000'000'000LL);
    }
    magnitude += negative ? -exponent : exponent;
  }
  return magnitude;
}

}  // namespace

// ---- JsonValue -------------------------------------------------------------------------

JsonValue::JsonValue() = default;
JsonValue::JsonValue(std::nullptr_t) {}
JsonValue::JsonValue(bool flag) : m_data(flag) {}
JsonValue::JsonValue(int number) : m_data(Number{static_cast<double>(number), number}) {}
JsonValue::JsonValue(std::int64_t number) : m_data(Number{static_cast<double>(number), number}) {}
JsonValue::JsonValue(double number) : m_data(Number{number, exact_integer(number)}) {}
JsonValue::JsonValue(std::string text) : m_data(std::move(text)) {}
JsonValue::JsonValue(std::string_view text) : m_data(std::string(text)) {}
JsonValue::JsonValue(const char* text) : m_data(std::string(text)) {}
JsonValue::JsonValue(Array elements) : m_data(std::move(elements)) {}
JsonValue::JsonValue(Object members) : m_data(std::move(members)) {}
JsonValue::JsonValue(Number number) : m_data(number) {}

std::optional<bool> JsonValue::get_bool() const {
  if (const bool* flag = std::get_if<bool>(&m_data)) return *flag;
  return std::nullopt;
}

std::optional<double> JsonValue::get_number() const {
  if (const Number* number = std::get_if<Number>(&m_data)) return number->value;
  return std::nullopt;
}

std::optional<std::int64_t> JsonValue::get_integer() const {
  if (const Number* number = std::get_if<Number>(&m_data)) return number->integer;
  return std::nullopt;
}

const std::string* JsonValue::get_string() const {
  return std::get_if<std::string>(&m_data);
}
const JsonValue::Array* JsonValue::get_array() const {
  return std::get_if<Array>(&m_data);
}
const JsonValue::Object* JsonValue::get_object() const {
  return std::get_if<Object>(&m_data);
}

bool JsonValue::as_bool() const {
  if (auto flag = get_bool()) return *flag;
  throw_type_error(JsonType::boolean, type());
}

double JsonValue::as_number() const {
  if (auto number = get_number()) return *number;
  throw_type_error(JsonType::number, type());
}

std::int64_t JsonValue::as_integer() const {
  if (auto integer = get_integer()) return *integer;
  if (is_number()) throw JsonTypeError("expected an integer, got " + dump());
  throw_type_error(JsonType::number, type());
}

const std::string& JsonValue::as_string() const {
  if (const auto* text = get_string()) return *text;
  throw_type_error(JsonType::string, type());
}

const JsonValue::Array& JsonValue::as_array() const {
  if (const auto* elements = get_array()) return *elements;
  throw_type_error(JsonType::array, type());
}

const JsonValue::Object& JsonValue::as_object() const {
  if (const auto* members = get_object()) return *members;
  throw_type_error(JsonType::object, type());
}

const JsonValue* JsonValue::find(std::string_view key) const {
  const Object* members = get_object();
  if (members == nullptr) return nullptr;
  for (auto it = members->rbegin(); it != members->rend(); ++it) {
    if (it->key == key) return &it->value;
  }
  return nullptr;
}

const JsonValue& JsonValue::operator[](std::string_view key) const {
  const JsonValue* member = find(key);
  return member != nullptr ? *member : null_value();
}

const JsonValue& JsonValue::operator[](std::size_t index) const {
  const Array* elements = get_array();
  if (elements == nullptr || index >= elements->size()) return null_value();
  return (*elements)[index];
}

std::size_t JsonValue::size() const {
  if (const Array* elements = get_array()) return elements->size();
  if (const Object* members = get_object()) return members->size();
  return 0;
}

void JsonValue::dump_to(std::string& out) const {
  switch (type()) {
    case JsonType::null:
      out += "null";
      break;
    case JsonType::boolean:
      out += std::get<bool>(m_data) ? "true" : "false";
      break;
    case JsonType::number: {
      const Number& number = std::get<Number>(m_data);
      if (number.integer) {
        out += std::to_string(*number.integer);
      } else if (!std::isfinite(number.value)) {
        out += "null";  // JSON has no infinity or NaN
      } else {
        char buffer[32];  // the shortest text that reads back as the same double
        const auto result = std::to_chars(buffer, buffer + sizeof buffer, number.value);
        out.append(buffer, result.ptr);
      }
      break;
    }
    case JsonType::string:
      out += json_quote(std::get<std::string>(m_data));
      break;
    case JsonType::array: {
      out += '[';
      bool first = true;
      for (const JsonValue& element : std::get<Array>(m_data)) {
        if (!first) out += ',';
        first = false;
        element.dump_to(out);
      }
      out += ']';
      break;
    }
    case JsonType::object: {
      out += '{';
      bool first = true;
      for (const Member& member : std::get<Object>(m_data)) {
        if (!first) out += ',';
        first = false;
        out += json_quote(member.key);
        out += ':';
        member.value.dump_to(out);
      }
      out += '}';
      break;
    }
  }
}

std::string JsonValue::dump() const {
  std::string out;
  dump_to(out);
  return out;
}

bool operator==(const JsonValue& a, const JsonValue& b) {
  if (a.type() != b.type()) return false;
  switch (a.type()) {
    case JsonType::null:
      return true;
    case JsonType::boolean:
      return std::get<bool>(a.m_data) == std::get<bool>(b.m_data);
    case JsonType::number:
      return std::get<JsonValue::Number>(a.m_data).value ==
             std::get<JsonValue::Number>(b.m_data).value;
    case JsonType::string:
      return std::get<std::string>(a.m_data) == std::get<std::string>(b.m_data);
    case JsonType::array:
      return std::get<JsonValue::Array>(a.m_data) == std::get<JsonValue::Array>(b.m_data);
    case JsonType::object:
      return std::get<JsonValue::Object>(a.m_data) == std::get<JsonValue::Object>(b.m_data);
  }
  return false;
}

// ---- Parser ----------------------------------------------------------------------------

/// Recursive descent over the document. Every parse_* function either consumes one value
/// and returns true, or records the first error (message and offset) and returns false.
class JsonParser {
public:
  JsonParser(std::string_view text, const JsonParseOptions& options)
      : m_text(text), m_max_depth(options.max_depth) {}

  Result<JsonValue> parse_document() {
    if (m_text.substr(0, 3) == "\xEF\xBB\xBF") m_pos = 3;  // byte-order mark
    JsonValue value;
    skip_whitespace();
    if (!parse_value(value, 0)) return error();
    skip_whitespace();
    if (m_pos < m_text.size()) {
      fail("unexpected " + describe_char(m_text[m_pos]) + " after the document");
      return error();
    }
    return value;
  }

private:
  Error error() const {
    return Error{"invalid JSON at byte " + std::to_string(m_error_offset) + ": " + m_error};
  }

  bool fail(std::string message) { return fail_at(m_pos, std::move(message)); }
  bool fail_at(std::size_t offset, std::string message) {
    m_error = std::move(message);
    m_error_offset = offset;
    return false;
  }
  bool fail_unexpected(const char* expected) {
    if (m_pos >= m_text.size())
      return fail(std::string("unexpected end of input, expected ") + expected);
    return fail("unexpected " + describe_char(m_text[m_pos]) + ", expected " + expected);
  }

  bool at_end() const { return m_pos >= m_text.size(); }
  char peek() const { return m_text[m_pos]; }

  void skip_whitespace() {
    while (m_pos < m_text.size()) {
      const char c = m_text[m_pos];
      if (c != ' ' && c != '\t' && c != '\n' && c != '\r') break;
      ++m_pos;
    }
  }

  bool parse_value(JsonValue& out, std::size_t depth) {
    if (at_end()) return fail_unexpected("a value");
    switch (peek()) {
      case '{':
        return parse_object(out, depth + 1);
      case '[':
        return parse_array(out, depth + 1);
      case '"': {
        std::string text;
        if (!parse_string(text)) return false;
        out = JsonValue(std::move(text));
        return true;
      }
      case 't':
        return parse_literal("true", JsonValue(true), out);
      case 'f':
        return parse_literal("false", JsonValue(false), out);
      case 'n':
        return parse_literal("null", JsonValue(), out);
      default:
        if (peek() == '-' || is_digit(peek())) return parse_number(out);
        return fail_unexpected("a value");
    }
  }

  bool parse_literal(std::string_view word, JsonValue value, JsonValue& out) {
    if (m_text.substr(m_pos, word.size()) != word) {
      return fail("invalid literal, expected '" + std::string(word) + "'");
    }
    m_pos += word.size();
    out = std::move(value);
    return true;
  }

  bool enter(std::size_t depth) {
    if (depth > m_max_depth) {
      return fail("nesting deeper than " + std::to_string(m_max_depth) + " levels");
    }
    ++m_pos;  // the opening bracket
    skip_whitespace();
    return true;
  }

  bool parse_array(JsonValue& out, std::size_t depth) {
    if (!enter(depth)) return false;
    JsonValue::Array elements;
    if (!at_end() && peek() == ']') {
      ++m_pos;
      out = JsonValue(std::move(elements));
      return true;
    }
    while (true) {
      JsonValue element;
      if (!parse_value(element, depth)) return false;
      elements.push_back(std::move(element));
      skip_whitespace();
      if (at_end()) return fail_unexpected("',' or ']' in an array");
      if (peek() == ',') {
        ++m_pos;
        skip_whitespace();
        if (!at_end() && peek() == ']') return fail("trailing comma in an array");
        continue;
      }
      if (peek() == ']') {
        ++m_pos;
        out = JsonValue(std::move(elements));
        return true;
      }
      return fail_unexpected("',' or ']' in an array");
    }
  }

  bool parse_object(JsonValue& out, std::size_t depth) {
    if (!enter(depth)) return false;
    JsonValue::Object members;
    if (!at_end() && peek() == '}') {
      ++m_pos;
      out = JsonValue(std::move(members));
      return true;
    }
    while (true) {
      if (at_end() || peek() != '"') {
        if (!at_end() && peek() == '}' && !members.empty())
          return fail("trailing comma in an object");
        return fail_unexpected("a string key in an object");
      }
      JsonValue::Member member;
      if (!parse_string(member.key)) return false;
      skip_whitespace();
      if (at_end() || peek() != ':') return fail_unexpected("':' after an object key");
      ++m_pos;
      skip_whitespace();
      if (!parse_value(member.value, depth)) return false;
      members.push_back(std::move(member));
      skip_whitespace();
      if (at_end()) return fail_unexpected("',' or '}' in an object");
      if (peek() == ',') {
        ++m_pos;
        skip_whitespace();
        continue;
      }
      if (peek() == '}') {
        ++m_pos;
        out = JsonValue(std::move(members));
        return true;
      }
      return fail_unexpected("',' or '}' in an object");
    }
  }

  // Four hex digits at m_pos (after "\u"); advances past them.
  bool parse_hex4(std::uint32_t& value) {
    if (m_pos + 4 > m_text.size()) {
      m_pos = m_text.size();
      return fail("unexpected end of input in a \\u escape");
    }
    value = 0;
    for (int k = 0; k < 4; ++k) {
      const char c = m_text[m_pos];
      std::uint32_t digit = 0;
      if (is_digit(c)) {
        digit = static_cast<std::uint32_t>(c - '0');
      } else if (c >= 'a' && c <= 'f') {
        digit = static_cast<std::uint32_t>(c - 'a' + 10);
      } else if (c >= 'A' && c <= 'F') {
        digit = static_cast<std::uint32_t>(c - 'A' + 10);
      } else {
        return fail("invalid hex digit " + describe_char(c) + " in a \\u escape");
      }
      value = value * 16 + digit;
      ++m_pos;
    }
    return true;
  }

  // After "\u": one code point, joining a surrogate pair written as two escapes. A lone
  // surrogate (which UTF-8 cannot hold) becomes U+FFFD, as Go's and JavaScript's readers do.
  bool parse_unicode_escape(std::string& out) {
    std::uint32_t unit = 0;
    if (!parse_hex4(unit)) return false;
    if (unit >= 0xD800 && unit <= 0xDBFF) {
      if (m_text.substr(m_pos, 2) == "\\u") {
        const std::size_t saved = m_pos;
        m_pos += 2;
        std::uint32_t low = 0;
        if (!parse_hex4(low)) return false;
        if (low >= 0xDC00 && low <= 0xDFFF) {
          append_utf8(out, 0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00));
          return true;
        }
        m_pos = saved;  // not a low surrogate: decode that escape on its own
      }
      append_utf8(out, 0xFFFD);
      return true;
    }
    append_utf8(out, unit >= 0xDC00 && unit <= 0xDFFF ? 0xFFFD : unit);
    return true;
  }

  bool parse_string(std::string& out) {
    const std::size_t start = m_pos;
    ++m_pos;  // the opening quote
    while (true) {
      // Copy the run of plain bytes up to the next quote, backslash or special byte at once.
      const std::size_t run_start = m_pos;
      while (m_pos < m_text.size()) {
        const auto u = static_cast<unsigned char>(m_text[m_pos]);
        if (u == '"' || u == '\\' || u < 0x20 || u >= 0x80) break;
        ++m_pos;
      }
      out.append(m_text.substr(run_start, m_pos - run_start));
      if (at_end()) return fail_at(start, "unterminated string");
      const auto u = static_cast<unsigned char>(peek());
      if (u == '"') {
        ++m_pos;
        return true;
      }
      if (u < 0x20)
        return fail("control character " + describe_char(peek()) +
                    " in a string (must be escaped)");
      if (u >= 0x80) {
        const std::size_t length = utf8_sequence_length(m_text, m_pos);
        if (length == 0) return fail("invalid UTF-8 in a string");
        out.append(m_text.substr(m_pos, length));
        m_pos += length;
        continue;
      }
      // A backslash escape.
      ++m_pos;
      if (at_end()) return fail_at(start, "unterminated string");
      const char escape = peek();
      ++m_pos;
      switch (escape) {
        case '"':
          out += '"';
          break;
        case '\\':
          out += '\\';
          break;
        case '/':
          out += '/';
          break;
        case 'b':
          out += '\b';
          break;
        case 'f':
          out += '\f';
          break;
        case 'n':
          out += '\n';
          break;
        case 'r':
          out += '\r';
          break;
        case 't':
          out += '\t';
          break;
        case 'u':
          if (!parse_unicode_escape(out)) return false;
          break;
        default:
          return fail_at(m_pos - 1,
                         "invalid escape '\\" + std::string(1, escape) + "' in a string");
      }
    }
  }

  bool parse_number(JsonValue& out) {
    const std::size_t start = m_pos;
    if (peek() == '-') ++m_pos;
    if (at_end() || !is_digit(peek())) return fail_unexpected("a digit");
    if (peek() == '0') {
      ++m_pos;
      if (!at_end() && is_digit(peek())) return fail("leading zero in a number");
    } else {
      while (!at_end() && is_digit(peek())) ++m_pos;
    }
    bool integral = true;
    if (!at_end() && peek() == '.') {
      integral = false;
      ++m_pos;
      if (at_end() || !is_digit(peek())) return fail_unexpected("a digit after '.'");
      while (!at_end() && is_digit(peek())) ++m_pos;
    }
    if (!at_end() && (peek() == 'e' || peek() == 'E')) {
      integral = false;
      ++m_pos;
      if (!at_end() && (peek() == '+' || peek() == '-')) ++m_pos;
      if (at_end() || !is_digit(peek())) return fail_unexpected("a digit in the exponent");
      while (!at_end() && is_digit(peek())) ++m_pos;
    }
    const std::string_view lexeme = m_text.substr(start, m_pos - start);
    const char* first = lexeme.data();
    const char* last = lexeme.data() + lexeme.size();

    JsonValue::Number number;
    if (integral) {  // exact, even where a double is not
      std::int64_t integer = 0;
      const auto [end, error] = std::from_chars(first, last, integer);
      if (error == std::errc() && end == last) number.integer = integer;
    }
    double value = 0.0;
    const auto [end, error] = std::from_chars(first, last, value);
    if (error == std::errc::result_out_of_range) {
      if (decimal_magnitude(lexeme) >= 0) return fail_at(start, "number out of range");
      value = lexeme[0] == '-' ? -0.0 : 0.0;  // underflow: as close to zero as it gets
    } else if (error != std::errc() || end != last) {
      return fail_at(start, "invalid number");
    }
    number.value = value;
    if (!number.integer) number.integer = exact_integer(value);
    out = JsonValue(number);
    return true;
  }

  std::string_view m_text;
  std::size_t m_pos = 0;
  std::size_t m_max_depth;
  std::string m_error;
  std::size_t m_error_offset = 0;
};

Result<JsonValue> parse_json(std::string_view text, const JsonParseOptions& options) {
  return JsonParser(text, options).parse_document();
}

}  // namespace kasava::util
