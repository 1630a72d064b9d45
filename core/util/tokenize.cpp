// Code-aware tokenization: see tokenize.hpp.
#include "core/util/tokenize.hpp"

#include <algorithm>
#include <array>
#include <cstdint>
#include <utility>

namespace kasava::util {
namespace {

bool is_word_byte(unsigned char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
         c >= 0x80;
}
bool is_upper(unsigned char c) { return c >= 'A' && c <= 'Z'; }
bool is_lower(unsigned char c) { return c >= 'a' && c <= 'z'; }
bool is_digit(unsigned char c) { return c >= '0' && c <= '9'; }

void lower_in_place(std::string& text) {
  for (char& c : text) {
    if (is_upper(static_cast<unsigned char>(c))) c = static_cast<char>(c - 'A' + 'a');
  }
}

std::string lower(std::string_view text) {
  std::string out(text);
  lower_in_place(out);
  return out;
}

// Words longer than this are hashes, base64 or minified noise: kept whole, never split.
constexpr std::size_t k_max_split_length = 64;

// Calls part(begin, end) for each part of `identifier`, as byte ranges in it, by the rules of
// split_identifier. Lower-casing is per byte, so the parts of a lower-cased copy of the
// identifier are the same ranges of that copy: for_each_code_token lowers each word once and
// passes views into it, with no string per part.
template <typename PartSink>
void for_each_identifier_part(std::string_view identifier, PartSink&& part) {
  std::size_t start = 0;
  auto flush = [&](std::size_t end) {
    if (end > start) part(start, end);
    start = end;
  };
  for (std::size_t i = 0; i < identifier.size(); ++i) {
    const auto c = static_cast<unsigned char>(identifier[i]);
    if (c == '_') {
      flush(i);
      start = i + 1;
      continue;
    }
    if (i == start) continue;
    const auto prev = static_cast<unsigned char>(identifier[i - 1]);
    const bool next_is_lower =
        i + 1 < identifier.size() && is_lower(static_cast<unsigned char>(identifier[i + 1]));
    if (is_upper(c) && (is_lower(prev) || is_digit(prev))) {
      flush(i);  // fooBar, utf8Decode
    } else if (is_upper(c) && is_upper(prev) && next_is_lower) {
      flush(i);  // HTTPServer → HTTP | Server
    } else if (is_digit(c) != is_digit(prev) && c < 0x80 && prev < 0x80) {
      flush(i);  // utf8 → utf | 8
    }
  }
  flush(identifier.size());
}

} // namespace

std::vector<std::string> split_identifier(std::string_view identifier) {
  std::vector<std::string> parts;
  for_each_identifier_part(identifier, [&](std::size_t begin, std::size_t end) {
    parts.push_back(lower(identifier.substr(begin, end - begin)));
  });
  return parts;
}

void split_identifier(std::string_view identifier, std::string& lowered, std::vector<std::string_view>& parts) {
  lowered.assign(identifier);
  lower_in_place(lowered);
  parts.clear();
  const std::string_view view(lowered);
  for_each_identifier_part(identifier, [&](std::size_t begin, std::size_t end) {
    parts.push_back(view.substr(begin, end - begin));
  });
}

void for_each_code_token(std::string_view text, const TokenSink& sink) {
  // This runs over every chunk twice (the lexical index and the embedding), so it allocates
  // nothing per word: one lower-cased copy of the word, reused, and views into it.
  std::string lowered;
  std::array<std::pair<std::uint8_t, std::uint8_t>, k_max_split_length> parts{};
  std::size_t i = 0;
  while (i < text.size()) {
    if (!is_word_byte(static_cast<unsigned char>(text[i]))) {
      ++i;
      continue;
    }
    std::size_t end = i;
    while (end < text.size() && is_word_byte(static_cast<unsigned char>(text[end]))) ++end;
    const std::string_view word = text.substr(i, end - i);
    // Skip words that are only underscores.
    if (word.find_first_not_of('_') != std::string_view::npos) {
      lowered.assign(word);
      lower_in_place(lowered);
      const std::string_view whole(lowered);
      const std::string_view trimmed = whole.substr(whole.find_first_not_of('_'));
      sink(trimmed.substr(0, trimmed.find_last_not_of('_') + 1), i, end);
      if (word.size() <= k_max_split_length) {
        std::size_t count = 0;
        for_each_identifier_part(word, [&](std::size_t begin, std::size_t part_end) {
          parts[count++] = {static_cast<std::uint8_t>(begin), static_cast<std::uint8_t>(part_end)};
        });
        if (count > 1) {
          for (std::size_t p = 0; p < count; ++p) {
            sink(whole.substr(parts[p].first, parts[p].second - parts[p].first), i, end);
          }
        }
      }
    }
    i = end;
  }
}

std::vector<std::string> code_tokens(std::string_view text) {
  std::vector<std::string> tokens;
  for_each_code_token(text, [&](std::string_view token, std::size_t, std::size_t) {
    tokens.emplace_back(token);
  });
  return tokens;
}

bool is_stop_word(std::string_view token) {
  static constexpr std::array<std::string_view, 74> k_stop_words = {
      "a",     "about", "all",   "an",    "and",   "any",   "are",   "as",    "at",    "be",
      "been",  "but",   "by",    "can",   "could", "did",   "do",    "does",  "doing", "for",
      "from",  "had",   "has",   "have",  "having", "here", "how",   "i",     "if",    "in",
      "into",  "is",    "it",    "its",   "me",    "my",    "of",    "on",    "or",    "our",
      "should", "so",   "some",  "such",  "than",  "that",  "the",   "their", "them",  "then",
      "there", "these", "they",  "this",  "those", "to",    "via",   "was",   "we",    "were",
      "what",  "when",  "where", "which", "while", "who",   "whom",  "why",   "will",  "with",
      "would", "you",   "your",  "using"};
  return std::find(k_stop_words.begin(), k_stop_words.end(), token) != k_stop_words.end();
}

std::vector<std::string> query_terms(std::string_view query) {
  std::vector<std::string> all;
  for_each_code_token(query, [&](std::string_view token, std::size_t, std::size_t) {
    if (std::find(all.begin(), all.end(), token) == all.end()) all.emplace_back(token);
  });
  std::vector<std::string> terms;
  for (const auto& token : all) {
    if (!is_stop_word(token)) terms.push_back(token);
  }
  return terms.empty() ? all : terms;
}

} // namespace kasava::util
