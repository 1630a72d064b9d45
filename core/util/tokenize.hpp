// Code-aware tokenization shared by the lexical index and the query side: identifiers are
// kept whole and also split on snake_case, camelCase, acronyms and digits, all lower-cased.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace kasava::util {

/// Splits one identifier into its lower-cased parts:
/// "parseHTTPRequest2" → {"parse", "http", "request", "2"}; "snake_case" → {"snake", "case"}.
std::vector<std::string> split_identifier(std::string_view identifier);

/// split_identifier's parts as views into `lowered`, which it sets to the identifier
/// lower-cased: no string per part, and both buffers are reused by the caller.
void split_identifier(std::string_view identifier, std::string& lowered, std::vector<std::string_view>& parts);

/// Called for each token of a text: the lower-cased token and its byte range in the text.
using TokenSink = std::function<void(std::string_view token, std::size_t begin, std::size_t end)>;

/// Tokenizes source text or prose. Each word (a run of letters, digits, '_' and non-ASCII
/// bytes) yields itself lower-cased and, when it splits into several parts, each part too
/// (with the word's byte range). Deterministic: the lexical index depends on it.
void for_each_code_token(std::string_view text, const TokenSink& sink);

/// All tokens of a text, in order (convenience for tests and the query side).
std::vector<std::string> code_tokens(std::string_view text);

/// True for common English words that carry no meaning in a code search ("the", "how", ...).
bool is_stop_word(std::string_view token);

/// The terms of a natural-language query: code tokens without stop words, duplicates removed,
/// in first-seen order. A query made only of stop words keeps them.
std::vector<std::string> query_terms(std::string_view query);

} // namespace kasava::util
