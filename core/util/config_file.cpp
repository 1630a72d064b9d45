// Parsing of kasava's config files (see config_file.hpp for the format): line by line, one
// `key = value` per line, every error naming the file and the line.
#include "core/util/config_file.hpp"

#include <optional>

namespace kasava::util {
namespace {

constexpr std::string_view k_whitespace = " \t\r\f\v";
constexpr std::string_view k_byte_order_mark = "\xEF\xBB\xBF";

bool is_space(char c) {
  return k_whitespace.find(c) != std::string_view::npos;
}

std::string_view trim_spaces(std::string_view text) {
  const auto first = text.find_first_not_of(k_whitespace);
  if (first == std::string_view::npos) return {};
  const auto last = text.find_last_not_of(k_whitespace);
  return text.substr(first, last - first + 1);
}

bool is_key_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '.' || c == '-';
}

char ascii_lower(char c) {
  return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c;
}

bool is_comment_start(char c) {
  return c == '#' || c == ';';
}

// Reads the rest of a line after '=' into `value`; nullopt when fine, else the error's text.
std::optional<std::string> parse_value(std::string_view rest, std::string& value) {
  rest = trim_spaces(rest);
  if (rest.empty() || is_comment_start(rest.front())) return std::nullopt;
  if (rest.front() != '"') {
    // A comment starts at '#' or ';' after whitespace; the value ends before that whitespace.
    std::size_t end = rest.size();
    for (std::size_t i = 1; i < rest.size(); ++i) {
      if (is_comment_start(rest[i]) && is_space(rest[i - 1])) {
        end = i;
        break;
      }
    }
    value = trim_spaces(rest.substr(0, end));
    return std::nullopt;
  }
  std::size_t i = 1;
  for (;; ++i) {
    if (i >= rest.size()) return "unterminated quoted value";
    const char c = rest[i];
    if (c == '"') break;
    if (c != '\\') {
      value += c;
      continue;
    }
    if (++i >= rest.size()) return "unterminated quoted value";
    switch (rest[i]) {
      case '"':
        value += '"';
        break;
      case '\\':
        value += '\\';
        break;
      case 'n':
        value += '\n';
        break;
      default:
        return "unknown escape '\\" + std::string(1, rest[i]) +
               "' in quoted value (use \\\", \\\\ or \\n)";
    }
  }
  const std::string_view after = trim_spaces(rest.substr(i + 1));
  if (!after.empty() && !is_comment_start(after.front())) {
    return "unexpected text after the closing quote: '" + std::string(after) + "'";
  }
  return std::nullopt;
}

}  // namespace

bool is_config_key(std::string_view key) {
  if (key.empty()) return false;
  for (const char c : key) {
    if (!is_key_char(c)) return false;
  }
  return true;
}

Result<std::vector<ConfigEntry>> parse_config(std::string_view text, std::string_view origin) {
  const std::string quoted = "'" + std::string(origin) + "'";
  if (text.size() > k_config_max_bytes) {
    return Error{quoted + ": larger than " + std::to_string(k_config_max_bytes / 1024) + " KiB (" +
                 std::to_string(text.size()) + " bytes)"};
  }
  if (text.substr(0, k_byte_order_mark.size()) == k_byte_order_mark) {
    text.remove_prefix(k_byte_order_mark.size());
  }

  std::vector<ConfigEntry> entries;
  int number = 0;
  while (!text.empty()) {
    ++number;
    const std::size_t newline = text.find('\n');
    std::string_view line = text.substr(0, newline);
    text.remove_prefix(newline == std::string_view::npos ? text.size() : newline + 1);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);

    const auto at = [&](const std::string& message) {
      return Error{quoted + ", line " + std::to_string(number) + ": " + message};
    };
    if (line.find('\0') != std::string_view::npos) return at("contains a NUL byte");
    if (line.size() > k_config_max_line_bytes) {
      return at("line longer than " + std::to_string(k_config_max_line_bytes) + " bytes");
    }

    const std::string_view content = trim_spaces(line);
    if (content.empty() || is_comment_start(content.front())) continue;
    if (content.front() == '[') {
      return at("sections ('" + std::string(content) +
                "') are not supported: write 'key = value' lines");
    }
    const std::size_t equals = content.find('=');
    if (equals == std::string_view::npos) return at("expected 'key = value'");
    const std::string_view raw_key = trim_spaces(content.substr(0, equals));
    if (raw_key.empty()) return at("missing key before '='");

    ConfigEntry entry;
    entry.line = number;
    entry.key.reserve(raw_key.size());
    for (const char c : raw_key) entry.key += ascii_lower(c);
    if (!is_config_key(entry.key)) {
      return at("invalid key '" + std::string(raw_key) +
                "': use letters, digits, '_', '.' and '-'");
    }
    if (auto failure = parse_value(content.substr(equals + 1), entry.value)) {
      return at(*failure);
    }
    entries.push_back(std::move(entry));
  }
  return entries;
}

}  // namespace kasava::util
