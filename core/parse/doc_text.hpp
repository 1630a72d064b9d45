// Text clean-up for chunk metadata: comment markers stripped from doc comments, docstring
// literals unquoted and dedented, signatures collapsed to one bounded line.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace kasava::parse {

/// The text of a comment without its markers (`//`, `///`, `/** */`, leading `*`, `#`, `--`,
/// `--[[ ]]`), each line trimmed, empty lines at either end dropped.
std::string strip_comment_markers(std::string_view comment);

/// The text of a docstring literal (`"""…"""`, `r'…'`) without prefix and quotes, dedented,
/// empty lines at either end dropped.
std::string strip_docstring(std::string_view literal);

/// text with every whitespace run collapsed to one space, trimmed, and cut to at most
/// max_bytes without splitting a UTF-8 sequence.
std::string collapse_whitespace(std::string_view text, std::size_t max_bytes);

}  // namespace kasava::parse
