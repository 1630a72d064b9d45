// Porter stemming of kasava's tokens (and StemCache, each distinct token stemmed once), the
// one function both sides of a shared store use: the terms a publish stores and the query
// terms `ask --store` looks for, so that a PostgreSQL store matches words as the local index
// does (FTS5's `porter` tokenizer wraps kasava's). Snowball's original "porter" algorithm
// (libstemmer); this file is the only includer of libstemmer.h.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>
#include <unordered_map>

namespace kasava::util {

/// The Porter stem of one lower-cased token, as FTS5's porter tokenizer gives it: tokens
/// shorter than 3 or longer than 64 bytes, and tokens the stemmer cannot take, unchanged.
std::string porter_stem(std::string_view token);

/// porter_stem with each distinct token stemmed once, for stemming much text whose words
/// repeat (a publish's chunks and commit subjects, a search's candidate paths). Keeps up to
/// k_most_tokens tokens, then starts again: a tree's distinct tokens grow with it (the Linux
/// kernel has 4.1 million, which kept whole took ~400 MB per publishing connection). Not
/// thread-safe; stem()'s reference is valid until the next call.
class StemCache {
public:
  static constexpr std::size_t k_most_tokens = 50'000;

  const std::string& stem(std::string_view token);
  /// The same stem, kept until the next trim() (never dropped in between): a caller may
  /// hold the addresses of many stems at once. One token, one address; two tokens with one
  /// stem ("parse", "parses") have two.
  const std::string* kept_stem(std::string_view token);
  /// Starts again when k_most_tokens tokens are kept: before a new batch of kept_stem calls.
  void trim();
  std::size_t size() const { return m_stems.size(); }

private:
  struct Hash {
    using is_transparent = void;
    std::size_t operator()(std::string_view text) const {
      return std::hash<std::string_view>{}(text);
    }
  };
  std::unordered_map<std::string, std::string, Hash, std::equal_to<>> m_stems;
};

} // namespace kasava::util
