// Small string helpers: see strings.hpp.
#include "core/util/strings.hpp"

#include <algorithm>
#include <cstdio>

namespace kasava::util {

std::string_view trim(std::string_view text) {
  const auto first = text.find_first_not_of(" \t\r\n\f\v");
  if (first == std::string_view::npos) return {};
  const auto last = text.find_last_not_of(" \t\r\n\f\v");
  return text.substr(first, last - first + 1);
}

std::string to_lower(std::string_view text) {
  std::string out(text);
  for (char& c : out) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return out;
}

std::vector<std::string> split(std::string_view text, char separator) {
  std::vector<std::string> parts;
  std::size_t start = 0;
  while (true) {
    const auto end = text.find(separator, start);
    parts.emplace_back(text.substr(start, end - start));
    if (end == std::string_view::npos) break;
    start = end + 1;
  }
  return parts;
}

namespace {
// Length of the valid UTF-8 sequence at text[i], or 0 when it is invalid.
std::size_t utf8_sequence_length(std::string_view text, std::size_t i) {
  const auto c = static_cast<unsigned char>(text[i]);
  if (c < 0x80) return 1;
  std::size_t length = 0;
  unsigned min = 0;
  if ((c & 0xE0) == 0xC0) {
    length = 2;
    min = 0x80;
  } else if ((c & 0xF0) == 0xE0) {
    length = 3;
    min = 0x800;
  } else if ((c & 0xF8) == 0xF0) {
    length = 4;
    min = 0x10000;
  } else {
    return 0;
  }
  if (i + length > text.size()) return 0;
  unsigned code = c & (0xFF >> (length + 1));
  for (std::size_t k = 1; k < length; ++k) {
    const auto next = static_cast<unsigned char>(text[i + k]);
    if ((next & 0xC0) != 0x80) return 0;
    code = (code << 6) | (next & 0x3F);
  }
  if (code < min || code > 0x10FFFF || (code >= 0xD800 && code <= 0xDFFF)) return 0;
  return length;
}
} // namespace

bool is_valid_utf8(std::string_view text) {
  for (std::size_t i = 0; i < text.size();) {
    const auto length = utf8_sequence_length(text, i);
    if (length == 0) return false;
    i += length;
  }
  return true;
}

std::string to_valid_utf8(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size();) {
    const auto length = utf8_sequence_length(text, i);
    if (length == 0) {
      out += "\xEF\xBF\xBD";
      ++i;
    } else {
      out.append(text.substr(i, length));
      i += length;
    }
  }
  return out;
}

std::string escape_controls(std::string_view text, LineBreaks line_breaks) {
  std::string out;
  out.reserve(text.size());
  const auto append_escape = [&out](const char* prefix, unsigned value, int digits) {
    static constexpr char k_hex[] = "0123456789abcdef";
    out += prefix;
    for (int shift = (digits - 1) * 4; shift >= 0; shift -= 4) out += k_hex[(value >> shift) & 0xfu];
  };
  for (std::size_t i = 0; i < text.size();) {
    const auto byte = static_cast<unsigned char>(text[i]);
    if (byte < 0x80) {
      if ((byte >= 0x20 && byte != 0x7f) || byte == '\t' ||
          (byte == '\n' && line_breaks == LineBreaks::keep)) {
        out += text[i];
      } else if (byte == '\n') {
        out += "\\n";
      } else if (byte == '\r') {
        out += "\\r";
      } else {
        append_escape("\\x", byte, 2);
      }
      ++i;
      continue;
    }
    const std::size_t length = utf8_sequence_length(text, i);
    if (length == 0) {  // not UTF-8: kept, unless a terminal could read it as C1
      if (byte <= 0x9f) {
        append_escape("\\x", byte, 2);
      } else {
        out += text[i];
      }
      ++i;
      continue;
    }
    const auto second = static_cast<unsigned char>(text[i + 1]);
    if (byte == 0xc2 && second <= 0x9f) {
      append_escape("\\u", second, 4);  // U+0080-U+009F is C2 80-9F
    } else {
      out.append(text.substr(i, length));
    }
    i += length;
  }
  return out;
}

std::size_t count_lines(std::string_view text) {
  if (text.empty()) return 0;
  std::size_t lines = 0;
  for (char c : text) lines += c == '\n';
  return text.back() == '\n' ? lines : lines + 1;
}

std::vector<std::size_t> line_starts(std::string_view text) {
  std::vector<std::size_t> starts;
  if (text.empty()) return starts;
  starts.push_back(0);
  for (std::size_t i = 0; i + 1 < text.size(); ++i) {
    if (text[i] == '\n') starts.push_back(i + 1);
  }
  return starts;
}

std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

std::string quoted(std::string_view text) {
  // Built by appending: GCC 12 warns falsely on "'" + std::string.
  std::string result;
  result.reserve(text.size() + 2);
  result += '\'';
  result.append(text);
  result += '\'';
  return result;
}

std::string format_bytes(unsigned long long bytes) {
  char buffer[32];
  if (bytes < 1024) {
    std::snprintf(buffer, sizeof buffer, "%llu B", bytes);
  } else if (bytes < 1024ull * 1024) {
    std::snprintf(buffer, sizeof buffer, "%.1f KiB", static_cast<double>(bytes) / 1024);
  } else if (bytes < 1024ull * 1024 * 1024) {
    std::snprintf(buffer, sizeof buffer, "%.1f MiB", static_cast<double>(bytes) / (1024 * 1024));
  } else {
    std::snprintf(buffer, sizeof buffer, "%.2f GiB",
                  static_cast<double>(bytes) / (1024.0 * 1024 * 1024));
  }
  return buffer;
}

} // namespace kasava::util
