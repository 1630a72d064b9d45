// Typed tool arguments: see arguments.hpp.
#include "core/mcp/arguments.hpp"

#include <charconv>
#include <cmath>

#include "core/util/strings.hpp"

namespace kasava::mcp {

void Arguments::fail(std::string_view name, const std::string& problem) {
  if (m_error.empty()) m_error = "invalid argument '" + std::string(name) + "': " + problem;
}

bool Arguments::has(std::string_view name) const {
  const util::JsonValue* value = m_arguments.find(name);
  return value != nullptr && !value->is_null();
}

std::string Arguments::required_string(std::string_view name) {
  if (!has(name)) {
    if (m_error.empty()) m_error = "missing argument '" + std::string(name) + "'";
    return "";
  }
  std::string value = string(name);
  if (ok() && util::trim(value).empty()) fail(name, "must not be empty");
  return value;
}

std::string Arguments::string(std::string_view name, std::string fallback) {
  if (!has(name)) return fallback;
  const std::string* text = m_arguments[name].get_string();
  if (text == nullptr) {
    fail(name, std::string("expected a string, got ") + util::json_type_name(m_arguments[name].type()));
    return fallback;
  }
  // JSON may carry "\u0000", which every C string below (paths above all) would cut short:
  // `src/a.py\u0000.png` must not quietly become `src/a.py`.
  if (text->find('\0') != std::string::npos) {
    fail(name, "must not contain a NUL character (\\u0000)");
    return fallback;
  }
  return *text;
}

std::string Arguments::choice(std::string_view name, const std::vector<std::string>& allowed,
                              std::string fallback) {
  if (!has(name)) return fallback;
  std::string value = string(name, fallback);
  for (const auto& option : allowed) {
    if (value == option) return value;
  }
  std::string list;
  for (const auto& option : allowed) list += (list.empty() ? "" : ", ") + option;
  fail(name, "expected one of " + list + ", got '" + value + "'");
  return fallback;
}

std::int64_t Arguments::integer(std::string_view name, std::int64_t fallback, std::int64_t min,
                                std::int64_t max) {
  if (!has(name)) return fallback;
  const util::JsonValue& value = m_arguments[name];
  std::optional<std::int64_t> number = value.get_integer();
  if (const std::string* text = value.get_string()) {  // models sometimes quote numbers
    std::int64_t parsed = 0;
    const std::string_view trimmed = util::trim(*text);
    const auto [end, error] = std::from_chars(trimmed.data(), trimmed.data() + trimmed.size(), parsed);
    if (error == std::errc() && end == trimmed.data() + trimmed.size()) number = parsed;
  }
  if (!number || *number < min || *number > max) {
    fail(name, "expected an integer from " + std::to_string(min) + " to " + std::to_string(max) +
                   ", got " + value.dump());
    return fallback;
  }
  return *number;
}

double Arguments::number(std::string_view name, double fallback, double min, double max) {
  if (!has(name)) return fallback;
  const util::JsonValue& value = m_arguments[name];
  const std::optional<double> number = value.get_number();
  if (!number || !std::isfinite(*number) || *number < min || *number > max) {
    fail(name, "expected a number from " + util::JsonValue(min).dump() + " to " +
                   util::JsonValue(max).dump() + ", got " + value.dump());
    return fallback;
  }
  return *number;
}

} // namespace kasava::mcp
