// Small string helpers used across kasava (UTF-8 checks, line handling, trimming).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace kasava::util {

std::string_view trim(std::string_view text);
std::string to_lower(std::string_view text);
std::vector<std::string> split(std::string_view text, char separator);

/// True when every byte sequence in text is valid UTF-8.
bool is_valid_utf8(std::string_view text);
/// A copy of text with each invalid UTF-8 byte replaced by U+FFFD, so it can go into JSON.
std::string to_valid_utf8(std::string_view text);

/// Whether escape_controls leaves line breaks as they are.
enum class LineBreaks { escape, keep };

/// text made safe to print on a terminal: every control character a terminal acts on — C0
/// but tab (and '\n' with LineBreaks::keep), DEL, C1 (U+0080-U+009F, and a lone byte
/// 0x80-0x9F, which an 8-bit terminal takes for one) — is written out as `\n`, `\r`,
/// `\x1b` or `\u009b`, so that a file's name or content cannot move the cursor, rewrite
/// the screen or the window title, or cut a `path:line` line in two. Other bytes, invalid
/// UTF-8 included, are kept.
std::string escape_controls(std::string_view text, LineBreaks line_breaks = LineBreaks::escape);

/// `'text'`, quotes included, for values quoted in messages.
std::string quoted(std::string_view text);

/// Number of lines in text (a final line without '\n' counts; "" has 0 lines).
std::size_t count_lines(std::string_view text);
/// Byte offsets where each line starts; size() == count_lines(text).
std::vector<std::size_t> line_starts(std::string_view text);

/// Levenshtein distance between two strings (for "did you mean" suggestions).
std::size_t edit_distance(std::string_view a, std::string_view b);

/// Human-readable byte size: "812 B", "4.2 KiB", "17.0 MiB".
std::string format_bytes(unsigned long long bytes);

} // namespace kasava::util
