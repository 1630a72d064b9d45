// How the built-in model sees a text: kasava's code-aware tokens (identifiers whole and split),
// lightly stemmed, each word counted once with its frequency; and the hashed character
// n-grams (fastText-style) that give unknown or abbreviated words a vector ("auth" shares
// "<au", "aut", "uth" with "authenticate"). Shared by the model and the trainer.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace kasava::embed {

/// One distinct word of a text and how often it occurs.
struct WordCount {
  std::string word;
  int count = 0;
  bool in_first_line = false;  ///< occurs on the text's first line (embedding_input's names)
};

/// Light suffix stemming ("files" → "file", "parsing"/"parsed"/"parse" → "pars",
/// "stopped" → "stop"); short words are kept as they are.
std::string stem_word(std::string_view word);

/// The distinct words of a text in first-seen order: code tokens (lower-cased identifiers,
/// whole and split), stemmed; numbers and over-long tokens (hashes, base64) are dropped.
/// At most `max_words` distinct words are kept (0 = no limit).
std::vector<WordCount> text_words(std::string_view text, std::size_t max_words = 0);

/// Appends the bucket of each character n-gram (min_n..max_n bytes) of "<word>" to `out`:
/// FNV-1a of the n-gram modulo `buckets`. Words are short, so this is a few dozen hashes.
void ngram_buckets(std::string_view word, int min_n, int max_n, std::uint32_t buckets,
                   std::vector<std::uint32_t>& out);

} // namespace kasava::embed
