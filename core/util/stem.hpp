// Porter stemming of kasava's tokens, the one function both sides of a shared store use: the
// terms a publish stores and the query terms `ask --store` looks for, so that a PostgreSQL
// store matches words as the local index does (FTS5's `porter` tokenizer wraps kasava's).
// Snowball's original "porter" algorithm (libstemmer); this file is the only includer of
// libstemmer.h.
#pragma once

#include <string>
#include <string_view>

namespace kasava::util {

/// The Porter stem of one lower-cased token, as FTS5's porter tokenizer gives it: tokens
/// shorter than 3 or longer than 64 bytes, and tokens the stemmer cannot take, unchanged.
std::string porter_stem(std::string_view token);

} // namespace kasava::util
