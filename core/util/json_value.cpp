// The JSON reader of json_value.hpp: nlohmann-json's SAX parser builds the JsonValue tree
// (depth-bounded), and its errors are told in kasava's words; then the accessors and the
// serializer of JsonValue.
#include "core/util/json_value.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>

#include <nlohmann/json.hpp>

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

// A character as it should appear in an error message: 'x', or a byte in hex.
std::string describe_char(char c) {
  const auto u = static_cast<unsigned char>(c);
  if (u >= 0x21 && u < 0x7F) return std::string("'") + c + "'";
  char buffer[16];
  std::snprintf(buffer, sizeof buffer, "byte 0x%02X", u);
  return buffer;
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
//
// nlohmann-json reads the bytes: grammar, escapes, UTF-8 validation, numbers. Its SAX parser
// keeps open arrays and objects on a heap stack, not the call stack, so a hostile document
// cannot overflow the stack; the handler below builds the JsonValue tree from its events
// (members in order, repeated keys kept) and refuses to open a container deeper than
// max_depth. Three things nlohmann does differently are handled around it: a lone surrogate
// escape is an error there and U+FFFD here; a NUL byte ends its input; and its error messages
// are its own, so they are retold in kasava's words at the byte where the problem starts.

namespace {

bool is_hex(char c) {
  return is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

// The code unit of the four hex digits at text[at], if they are four hex digits.
std::optional<std::uint32_t> hex4(std::string_view text, std::size_t at) {
  if (at + 4 > text.size() || !std::all_of(text.begin() + at, text.begin() + at + 4, is_hex))
    return std::nullopt;
  std::uint32_t unit = 0;
  std::from_chars(text.data() + at, text.data() + at + 4, unit, 16);
  return unit;
}

// `text`, or a copy in `storage` where every lone surrogate escape (\uD800 not followed by
// \uDC00-\uDFFF, or such a low half alone) reads \uFFFD: UTF-8 cannot hold it, and U+FFFD is
// what Go's and JavaScript's readers make of it. Same length, so error offsets still hold.
std::string_view replace_lone_surrogates(std::string_view text, std::string& storage) {
  if (text.find("\\uD") == std::string_view::npos && text.find("\\ud") == std::string_view::npos)
    return text;
  storage.assign(text);
  bool in_string = false;
  for (std::size_t i = 0; i < storage.size(); ++i) {
    if (storage[i] == '"') {
      in_string = !in_string;
      continue;
    }
    if (!in_string || storage[i] != '\\') continue;
    const std::size_t escape = i++;  // i: the escaped character
    if (i >= storage.size() || storage[i] != 'u') continue;
    const auto unit = hex4(storage, i + 1);
    if (!unit) continue;  // a bad escape: nlohmann reports it
    i += 4;               // the last hex digit
    if (*unit < 0xD800 || *unit > 0xDFFF) continue;
    if (*unit <= 0xDBFF && storage.compare(i + 1, 2, "\\u") == 0) {
      const auto low = hex4(storage, i + 3);
      if (!low) continue;  // a bad escape follows: nlohmann reports it
      if (*low >= 0xDC00 && *low <= 0xDFFF) {
        i += 6;  // a pair
        continue;
      }
    }
    storage.replace(escape, 6, "\\uFFFD");
  }
  return storage;
}

// Where the literal (true, false, null) that breaks off at `failed` starts, and its word.
std::optional<std::pair<std::size_t, std::string_view>> literal_start(std::string_view text,
                                                                      std::size_t failed) {
  for (std::size_t length = 1; length <= 4 && length <= failed; ++length) {
    const std::size_t start = failed - length;
    const char c = text[start];
    const std::string_view word = c == 't' ? "true" : c == 'f' ? "false" : c == 'n' ? "null" : "";
    if (length < word.size() && word.substr(0, length) == text.substr(start, length))
      return std::pair{start, word};
  }
  return std::nullopt;
}

// Where the UTF-8 sequence that turned out invalid at `failed` starts: at its lead byte when
// `failed` is one of the continuation bytes that lead byte announced, else at `failed`.
std::size_t utf8_sequence_start(std::string_view text, std::size_t failed) {
  const auto byte = [&](std::size_t i) { return static_cast<unsigned char>(text[i]); };
  std::size_t lead = failed;
  while (lead > 0 && failed - lead < 3 && (byte(lead - 1) & 0xC0) == 0x80) --lead;
  if (lead == 0) return failed;
  const unsigned char first = byte(lead - 1);
  const std::size_t length = first >= 0xF0 ? 4 : first >= 0xE0 ? 3 : 2;
  return first >= 0xC2 && first <= 0xF4 && lead - 1 + length > failed ? lead - 1 : failed;
}

// The offset of the bracket that opens level max_depth + 1 (the one the handler refused).
std::size_t too_deep_offset(std::string_view text, std::size_t max_depth) {
  std::size_t depth = 0;
  bool in_string = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      i += c == '\\' ? 1 : 0;  // an escaped character, perhaps a quote
      in_string = c != '"';
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > max_depth) return i;
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
  return text.size();
}

// An error as nlohmann's SAX parser reports it.
struct SyntaxError {
  std::size_t position = 0;  ///< bytes read, the end of input counting as one
  std::string token;         ///< the last token's text (exact for strings and numbers)
  int id = 0;                ///< 101: syntax, 406: number out of range
  std::string what;          ///< "… syntax error while parsing CONTEXT - DETAIL[; expected X]"
};

// nlohmann says "syntax error while parsing object separator - unexpected number literal;
// expected ':'" after the token it read; kasava says "unexpected '1', expected ':' after an
// object key" at the byte where the token starts.
Error retell(std::string_view text, const SyntaxError& error) {
  const auto at = [](std::size_t offset, const std::string& message) {
    return Error{"invalid JSON at byte " + std::to_string(offset) + ": " + message};
  };
  const auto unexpected = [&](std::size_t offset) {
    return offset < text.size() ? "unexpected " + describe_char(text[offset])
                                : std::string("unexpected end of input");
  };
  const std::size_t end = std::clamp<std::size_t>(error.position, 1, text.size() + 1);
  const std::size_t failed = end - 1;  // the byte the lexer stopped at (text.size(): the end)
  // The last token's bytes end at `stop` (the end of input is not one); nlohmann spells a
  // control byte "<U+000A>" there, and only the byte it stopped at can be one.
  const std::size_t stop = std::min(end, text.size());
  std::size_t token_length = error.token.size();
  if (failed < text.size() && static_cast<unsigned char>(text[failed]) < 0x20 && token_length >= 8)
    token_length -= 7;
  const std::size_t token_start = stop - std::min(stop, token_length);
  if (error.id == 406) return at(token_start, "number out of range");

  const std::string_view what = error.what;
  const auto parsing = what.find("while parsing ");
  const auto dash = what.find(" - ", parsing);
  if (parsing == std::string_view::npos || dash == std::string_view::npos)
    return at(failed, error.what);
  const std::string_view context = what.substr(parsing + 14, dash - parsing - 14);
  const std::string_view detail = what.substr(dash + 3);
  const bool after_document = detail.ends_with("; expected end of input");
  const char* expected = context == "object key"         ? "a string key in an object"
                         : context == "object separator" ? "':' after an object key"
                         : context == "array"            ? "',' or ']' in an array"
                         : context == "object"           ? "',' or '}' in an object"
                                                         : "a value";
  // "01" reads as the number 0, then a number starting at 1.
  const auto after_zero = [&](std::size_t offset) {
    return offset > 0 && offset < text.size() && is_digit(text[offset - 1]) &&
           is_digit(text[offset]);
  };
  const auto misplaced = [&](std::size_t offset) {
    if (after_document) return at(offset, unexpected(offset) + " after the document");
    return at(offset, unexpected(offset) + ", expected " + expected);
  };

  if (detail.starts_with("unexpected ")) {  // a whole token, in the wrong place
    const std::string_view token = detail.substr(11, detail.find(';') - 11);
    std::size_t offset = failed;  // one-byte tokens and the end of input
    if (token == "string literal" || token == "number literal") offset = token_start;
    if (token == "true literal" || token == "null literal")
      offset = end - std::min<std::size_t>(end, 4);
    if (token == "false literal") offset = end - std::min<std::size_t>(end, 5);
    if (token == "number literal" && after_zero(offset))
      return at(offset, "leading zero in a number");
    const auto comma_before = [&] {
      const auto before =
          offset == 0 ? std::string_view::npos : text.find_last_not_of(" \t\r\n", offset - 1);
      return before != std::string_view::npos && text[before] == ',';
    };
    if (token == "']'" && context == "value" && !after_document && comma_before())
      return at(offset, "trailing comma in an array");
    if (token == "'}'" && context == "object key") return at(offset, "trailing comma in an object");
    return misplaced(offset);
  }

  const std::string_view message = detail.substr(0, detail.find("; last read: '"));
  const auto is = [&](std::string_view prefix) { return message.starts_with(prefix); };
  if (is("invalid literal")) {
    const auto literal = literal_start(text, failed);
    if (!literal) return misplaced(failed);
    if (context != "value" || after_document) return misplaced(literal->first);
    return at(literal->first, "invalid literal, expected '" + std::string(literal->second) + "'");
  }
  if (is("invalid BOM")) return misplaced(0);
  // A string or number where a separator or the end belongs: the token is what is wrong.
  const bool separator_due = after_document || (context != "value" && context != "object key");
  if ((separator_due && is("invalid string")) ||
      ((separator_due || context == "object key") && is("invalid number")))
    return after_zero(token_start) ? at(token_start, "leading zero in a number")
                                   : misplaced(token_start);
  if (is("invalid string: ill-formed UTF-8"))
    return at(utf8_sequence_start(text, failed), "invalid UTF-8 in a string");
  if (is("invalid string: missing closing quote") ||
      (is("invalid string: forbidden character after backslash") && failed >= text.size()))
    return at(token_start, "unterminated string");
  if (is("invalid string: '\\u' must be followed")) {
    std::size_t u = failed - 1;  // the 'u' before the hex digits read so far
    while (u > 0 && text[u] != 'u') --u;
    if (u + 5 > text.size()) return at(text.size(), "unexpected end of input in a \\u escape");
    return at(failed, "invalid hex digit " + describe_char(text[failed]) + " in a \\u escape");
  }
  if (failed < text.size()) {
    if (is("invalid string: control character"))
      return at(failed, "control character " + describe_char(text[failed]) +
                            " in a string (must be escaped)");
    if (is("invalid string: forbidden character after backslash"))
      return at(failed, "invalid escape '\\" + std::string(1, text[failed]) + "' in a string");
  }
  if (is("invalid number; expected digit after '-'"))
    return at(failed, unexpected(failed) + ", expected a digit");
  if (is("invalid number; expected digit after '.'"))
    return at(failed, unexpected(failed) + ", expected a digit after '.'");
  if (is("invalid number"))
    return at(failed, unexpected(failed) + ", expected a digit in the exponent");
  return at(failed, std::string(message));
}

}  // namespace

/// The SAX handler nlohmann's parser calls: builds the tree, bounds the depth, keeps the error.
class JsonParser {
public:
  explicit JsonParser(std::size_t max_depth) : m_max_depth(max_depth) {}

  bool null() { return add(JsonValue()); }
  bool boolean(bool flag) { return add(JsonValue(flag)); }
  bool number_integer(std::int64_t number) { return add(JsonValue(number)); }
  bool number_unsigned(std::uint64_t number) {
    if (number <= static_cast<std::uint64_t>(INT64_MAX))
      return add(JsonValue(static_cast<std::int64_t>(number)));
    return add(JsonValue(static_cast<double>(number)));  // beyond int64: no longer exact
  }
  bool number_float(double number, const std::string& /*lexeme*/) { return add(JsonValue(number)); }
  bool string(std::string& text) { return add(JsonValue(std::move(text))); }
  bool binary(nlohmann::json::binary_t& /*bytes*/) { return false; }  // not in JSON text
  bool start_object(std::size_t /*unknown size*/) { return open(true); }
  bool key(std::string& name) {
    m_open.back().key = std::move(name);
    return true;
  }
  bool end_object() { return close(); }
  bool start_array(std::size_t /*unknown size*/) { return open(false); }
  bool end_array() { return close(); }
  bool parse_error(std::size_t position, const std::string& token,
                   const nlohmann::detail::exception& error) {
    m_error = SyntaxError{position, token, error.id, error.what()};
    return false;
  }

  Result<JsonValue> parse(std::string_view text) {
    std::string repaired;
    const std::string_view input = replace_lone_surrogates(text, repaired);
    if (nlohmann::json::sax_parse(input.data(), input.data() + input.size(), this)) {
      // nlohmann stops at a NUL byte as at the end; for RFC 8259 it is one byte too many.
      if (const auto nul = text.find('\0'); nul != std::string_view::npos)
        return Error{"invalid JSON at byte " + std::to_string(nul) +
                     ": unexpected byte 0x00 after the document"};
      return std::move(m_root);
    }
    if (m_too_deep)
      return Error{"invalid JSON at byte " + std::to_string(too_deep_offset(text, m_max_depth)) +
                   ": nesting deeper than " + std::to_string(m_max_depth) + " levels"};
    return retell(text, m_error);
  }

private:
  // An array or object being read, with the key of the member whose value comes next.
  struct Open {
    bool is_object = false;
    JsonValue::Array elements;
    JsonValue::Object members;
    std::string key;
  };

  bool open(bool is_object) {
    if (m_open.size() >= m_max_depth) {
      m_too_deep = true;
      return false;
    }
    m_open.push_back(Open{is_object, {}, {}, {}});
    return true;
  }

  bool close() {
    Open done = std::move(m_open.back());
    m_open.pop_back();
    return done.is_object ? add(JsonValue(std::move(done.members)))
                          : add(JsonValue(std::move(done.elements)));
  }

  bool add(JsonValue value) {
    if (m_open.empty()) {
      m_root = std::move(value);
    } else if (Open& parent = m_open.back(); parent.is_object) {
      parent.members.push_back({std::move(parent.key), std::move(value)});
    } else {
      parent.elements.push_back(std::move(value));
    }
    return true;
  }

  std::size_t m_max_depth;
  std::vector<Open> m_open;
  JsonValue m_root;
  bool m_too_deep = false;
  SyntaxError m_error;
};

Result<JsonValue> parse_json(std::string_view text, const JsonParseOptions& options) {
  return JsonParser(options.max_depth).parse(text);
}

}  // namespace kasava::util
