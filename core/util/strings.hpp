// Small string helpers used across kasava (UTF-8 checks, line handling, trimming).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace kasava::util {

std::string_view trim(std::string_view text);
std::string to_lower(std::string_view text);
bool starts_with(std::string_view text, std::string_view prefix);
bool ends_with(std::string_view text, std::string_view suffix);
std::vector<std::string> split(std::string_view text, char separator);

/// True when every byte sequence in text is valid UTF-8.
bool is_valid_utf8(std::string_view text);
/// A copy of text with each invalid UTF-8 byte replaced by U+FFFD, so it can go into JSON.
std::string to_valid_utf8(std::string_view text);

/// Number of lines in text (a final line without '\n' counts; "" has 0 lines).
std::size_t count_lines(std::string_view text);
/// Byte offsets where each line starts; size() == count_lines(text).
std::vector<std::size_t> line_starts(std::string_view text);

/// Levenshtein distance between two strings (for "did you mean" suggestions).
std::size_t edit_distance(std::string_view a, std::string_view b);

/// Human-readable byte size: "812 B", "4.2 KiB", "17.0 MiB".
std::string format_bytes(unsigned long long bytes);

} // namespace kasava::util
