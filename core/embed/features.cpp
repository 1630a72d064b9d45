// Words and character n-grams of a text for the built-in model: see features.hpp.
#include "core/embed/features.hpp"

#include <algorithm>
#include <functional>

#include "core/util/tokenize.hpp"

namespace kasava::embed {
namespace {

// Tokens longer than this are hashes, base64 or minified noise, not words.
constexpr std::size_t k_max_word_length = 40;

bool is_vowel(char c) { return c == 'a' || c == 'e' || c == 'i' || c == 'o' || c == 'u'; }

bool all_digits(std::string_view word) {
  return std::all_of(word.begin(), word.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// stem_word into `out`, whose buffer is reused: text_words stems every token of a chunk.
void stem_into(std::string_view word, std::string& out) {
  out.assign(word);
  if (out.size() <= 3) return;
  // Plurals and third person: "entries" → "entry", "classes" → "class", "files" → "file".
  if (out.ends_with("ies") && out.size() > 4) {
    out.resize(out.size() - 3);
    out += 'y';
  } else if (out.ends_with("sses")) {
    out.resize(out.size() - 2);
  } else if (out.ends_with("s") && !out.ends_with("ss") && !out.ends_with("us") &&
             !out.ends_with("is")) {
    out.pop_back();
  }
  // Verb forms: "parsing", "parsed" → "pars"; "stopped" → "stopp" → "stop".
  bool verb = false;
  if (out.ends_with("ing") && out.size() >= 7) {
    out.resize(out.size() - 3);
    verb = true;
  } else if (out.ends_with("ed") && out.size() >= 6) {
    out.resize(out.size() - 2);
    verb = true;
  }
  if (verb && out.size() >= 4) {
    const char last = out.back();
    const char before = out[out.size() - 2];
    if (last == before && !is_vowel(last) && last != 'l' && last != 's' && last != 'z') {
      out.pop_back();
    }
  }
  // A final silent 'e' so "parse" meets "pars(ing)": "create" → "creat".
  if (out.size() >= 5 && out.back() == 'e') out.pop_back();
}

} // namespace

std::string stem_word(std::string_view word) {
  std::string out;
  stem_into(word, out);
  return out;
}

std::vector<WordCount> text_words(std::string_view text, std::size_t max_words) {
  std::vector<WordCount> words;
  // Open addressing over indices into `words` (0 = empty): a chunk has a few hundred tokens,
  // and this spares a node allocation per distinct word (encoding speed is indexing speed).
  std::size_t capacity = 64;
  while (capacity < text.size() / 2 && capacity < (1U << 16)) capacity *= 2;
  std::vector<std::uint32_t> slots(capacity, 0);
  std::size_t mask = capacity - 1;
  const std::hash<std::string_view> hasher;
  auto find_slot = [&](std::string_view word) -> std::uint32_t& {
    std::size_t i = hasher(word) & mask;
    while (slots[i] != 0 && words[slots[i] - 1].word != word) i = (i + 1) & mask;
    return slots[i];
  };
  const std::size_t first_line_end = std::min(text.find('\n'), text.size());
  std::string word;  // the stemmed token; copied only for a word not seen before
  util::for_each_code_token(text, [&](std::string_view token, std::size_t begin, std::size_t) {
    if (token.empty() || token.size() > k_max_word_length || all_digits(token)) return;
    stem_into(token, word);
    std::uint32_t& slot = find_slot(word);
    if (slot != 0) {
      ++words[slot - 1].count;
      return;
    }
    if (max_words != 0 && words.size() >= max_words) return;
    words.push_back({word, 1, begin < first_line_end});
    slot = static_cast<std::uint32_t>(words.size());
    if (words.size() * 2 > capacity) {  // keep the load under one half
      capacity *= 2;
      mask = capacity - 1;
      slots.assign(capacity, 0);
      for (std::size_t w = 0; w < words.size(); ++w)
        find_slot(words[w].word) = static_cast<std::uint32_t>(w + 1);
    }
  });
  return words;
}

void ngram_buckets(std::string_view word, int min_n, int max_n, std::uint32_t buckets,
                   std::vector<std::uint32_t>& out) {
  if (buckets == 0) return;
  std::string marked;
  marked.reserve(word.size() + 2);
  marked += '<';
  marked.append(word);
  marked += '>';
  const std::string_view view(marked);
  for (int n = min_n; n <= max_n; ++n) {
    const auto length = static_cast<std::size_t>(n);
    if (length > view.size()) break;
    for (std::size_t start = 0; start + length <= view.size(); ++start) {
      // The whole "<word>" is the word itself, not an n-gram of it.
      if (length == view.size()) continue;
      std::uint32_t hash = 2166136261U;
      for (const char c : view.substr(start, length)) {
        hash ^= static_cast<unsigned char>(c);
        hash *= 16777619U;
      }
      out.push_back(hash % buckets);
    }
  }
}

} // namespace kasava::embed
