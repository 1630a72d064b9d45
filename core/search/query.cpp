// Parsing a query once (see query.hpp).
#include "core/search/query.hpp"

#include <algorithm>

#include "core/util/strings.hpp"
#include "core/util/tokenize.hpp"

namespace kasava::search {
namespace {

std::string quote_term(std::string_view term) {
  std::string quoted = "\"";
  for (char c : term) {
    if (c == '"') quoted += '"';
    quoted += c;
  }
  quoted += '"';
  return quoted;
}

bool is_identifier_start(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == '$';
}
bool is_identifier_byte(char c) { return is_identifier_start(c) || (c >= '0' && c <= '9'); }

std::string expression_of(const std::vector<std::string>& terms) {
  std::string expression;
  for (const auto& term : terms) {
    if (!expression.empty()) expression += " OR ";
    expression += quote_term(term);
  }
  return expression;
}

// The lower-cased parts of the query's words, stop words dropped ("invoice", "total").
std::vector<std::string> query_parts(std::string_view query) {
  std::vector<std::string> parts;
  std::size_t i = 0;
  while (i < query.size()) {
    while (i < query.size() && !is_identifier_byte(query[i])) ++i;
    std::size_t end = i;
    while (end < query.size() && is_identifier_byte(query[end])) ++end;
    if (end > i) {
      for (auto& part : util::split_identifier(query.substr(i, end - i))) {
        if (!util::is_stop_word(part) &&
            std::find(parts.begin(), parts.end(), part) == parts.end()) {
          parts.push_back(std::move(part));
        }
      }
    }
    i = end;
  }
  return parts;
}

} // namespace

std::vector<std::string_view> name_components(std::string_view word) {
  std::vector<std::string_view> parts;
  std::size_t i = 0;
  while (i < word.size()) {
    if (!is_identifier_start(word[i])) return {};
    std::size_t end = i;
    while (end < word.size() && is_identifier_byte(word[end])) ++end;
    parts.push_back(word.substr(i, end - i));
    if (end == word.size()) break;
    if (word.compare(end, 2, "::") == 0 || word.compare(end, 2, "->") == 0) {
      i = end + 2;
    } else if (word[end] == '.') {
      i = end + 1;
    } else {
      return {};
    }
    if (i >= word.size()) return {};
  }
  return parts;
}

std::vector<PathWord> path_words(std::string_view text) {
  std::vector<PathWord> words;
  std::size_t i = 0;
  while (i < text.size()) {
    while (i < text.size() && (text[i] == ' ' || text[i] == '`' || text[i] == '\'' || text[i] == '"' ||
                               text[i] == '(' || text[i] == '[')) {
      ++i;
    }
    std::size_t end = i;
    while (end < text.size() && text[end] != ' ' && text[end] != '`' && text[end] != '\'' && text[end] != '"') {
      ++end;
    }
    std::string_view word = text.substr(i, end - i);
    while (!word.empty() && (word.back() == ':' || word.back() == ',' || word.back() == ')' ||
                             word.back() == ']' || word.back() == '.' || word.back() == '/')) {
      word.remove_suffix(1);
    }
    while (!word.empty() && (word.front() == '.' || word.front() == '/')) word.remove_prefix(1);
    const bool has_slash = word.find('/') != std::string_view::npos;
    const std::size_t dot = word.rfind('.');
    const bool has_extension = dot != std::string_view::npos && dot > 0 && dot + 1 < word.size() &&
                               word.size() - dot <= 5 && word.find('(') == std::string_view::npos;
    if (word.size() >= 3 && (has_slash || has_extension)) words.push_back({util::to_lower(word), has_slash});
    i = end + 1;
  }
  return words;
}

std::string match_expression(std::string_view query) {
  return expression_of(util::query_terms(query));
}

std::vector<std::string> identifier_words(std::string_view query) {
  std::vector<std::string_view> words;
  std::size_t i = 0;
  while (i < query.size()) {
    while (i < query.size() && (query[i] == ' ' || query[i] == '\t' || query[i] == '\n')) ++i;
    std::size_t end = i;
    while (end < query.size() && query[end] != ' ' && query[end] != '\t' && query[end] != '\n') ++end;
    if (end > i) words.push_back(query.substr(i, end - i));
    i = end;
  }
  std::vector<std::string> identifiers;
  for (std::string_view word : words) {
    // Trailing punctuation of prose ("parseConfig?") and call parentheses are not the name.
    while (!word.empty() && (word.back() == '?' || word.back() == ',' || word.back() == ')' ||
                             word.back() == '(' || word.back() == '!' || word.back() == ':' ||
                             (word.back() == '.' && word.size() > 1))) {
      word.remove_suffix(1);
    }
    if (name_components(word).empty()) continue;
    bool code_like = words.size() == 1;
    for (std::size_t c = 0; c < word.size(); ++c) {
      const char ch = word[c];
      if (ch == '_' || ch == '.' || ch == ':' || (ch >= '0' && ch <= '9') ||
          (c > 0 && ch >= 'A' && ch <= 'Z')) {
        code_like = true;
      }
    }
    if (code_like) identifiers.emplace_back(word);
  }
  return identifiers;
}

Query parse_query(std::string_view text) {
  Query query;
  query.text = std::string(text);
  query.terms = util::query_terms(text);
  query.match_expression = expression_of(query.terms);
  query.identifiers = identifier_words(text);
  query.parts = query_parts(text);
  query.path_words = path_words(text);
  query.one_identifier = query.identifiers.size() == 1 &&
                         query.terms.size() <= util::query_terms(query.identifiers.front()).size();
  return query;
}

} // namespace kasava::search
