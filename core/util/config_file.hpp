// The format of kasava's config files (`.kasava/config` in a repository,
// `$XDG_CONFIG_HOME/kasava/config`): flat `key = value` lines, git-config-like. Parsing only;
// which file and which setting wins is the caller's business.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "core/util/result.hpp"

namespace kasava::util {

/// Larger config files are rejected: a config is a handful of lines, and a huge file is a
/// mistake (or an attack) better reported than read.
inline constexpr std::size_t k_config_max_bytes = 64 * 1024;
/// Longer lines (without their line ending) are rejected.
inline constexpr std::size_t k_config_max_line_bytes = 4096;

/// One `key = value` line.
struct ConfigEntry {
  std::string key;    ///< lower-case, matches [a-z0-9_.-]+
  std::string value;  ///< trimmed, comment removed, quotes and escapes resolved
  int line = 0;       ///< 1-based
};

/// Parses a config file's text. `origin` names the file in errors, context first:
/// "'/home/u/.config/kasava/config', line 3: expected 'key = value'".
///
/// The format, one setting per line:
///
///     # a comment; so is a line starting with ';'
///     model = voyage:voyage-code-3
///     answer_model = "anthropic:claude-sonnet-4-5"   # a trailing comment
///
/// - Keys are ASCII letters, digits, '_', '.' and '-', case-insensitive like git's: they are
///   returned lower-cased ("Model" reads as "model").
/// - Values are trimmed. In an unquoted value, '#' or ';' after a space or tab (or at the
///   value's start) begins a comment; elsewhere they are part of the value
///   (`http://host/#x`). `key =` gives an empty value.
/// - A value in double quotes keeps its spaces, '#' and ';'; it may use the escapes \", \\ and
///   \n, and may be followed only by spaces and a comment.
/// - A key given twice yields both entries in file order; the caller takes the last.
/// - Tolerated: a UTF-8 byte-order mark, CRLF line endings, a missing final newline.
/// - Errors: a line without '=', an empty key, a key of other characters, a `[section]`
///   line, an unterminated quote, an unknown escape, text after a closing quote, a NUL byte,
///   a line over k_config_max_line_bytes, a file over k_config_max_bytes.
Result<std::vector<ConfigEntry>> parse_config(std::string_view text, std::string_view origin);

/// True when `key` is a valid key as parse_config() returns it: [a-z0-9_.-]+.
bool is_config_key(std::string_view key);

}  // namespace kasava::util
