// Glob matching: see glob.hpp.
#include "core/util/glob.hpp"

#include <string>
#include <vector>

namespace kasava::util {
namespace {

// Matches a pattern against a text by memoised recursion over (pattern position, text
// position): every state is decided once, so patterns full of stars cost O(|pattern| x
// |text|) instead of the exponential time of plain backtracking.
class Matcher {
public:
  Matcher(std::string_view pattern, std::string_view text)
      : m_pattern(pattern), m_text(text), m_memo((pattern.size() + 1) * (text.size() + 1), -1) {}

  bool match(std::size_t p, std::size_t t) {
    signed char& memo = m_memo[p * (m_text.size() + 1) + t];
    if (memo < 0) memo = compute(p, t) ? 1 : 0;
    return memo == 1;
  }

private:
  bool compute(std::size_t p, std::size_t t) {
    if (p == m_pattern.size()) return t == m_text.size();
    const char c = m_pattern[p];
    const bool more_text = t < m_text.size();
    if (c == '*') {
      std::size_t rest = p;
      while (rest < m_pattern.size() && m_pattern[rest] == '*') ++rest;
      if (rest - p >= 2) {  // '**' spans folders; "**/" also matches nothing
        if (rest < m_pattern.size() && m_pattern[rest] == '/' && match(rest + 1, t)) return true;
        return match(rest, t) || (more_text && match(p, t + 1));
      }
      return match(rest, t) || (more_text && m_text[t] != '/' && match(p, t + 1));
    }
    if (!more_text) return false;
    if (c == '?') return m_text[t] != '/' && match(p + 1, t + 1);
    if (c == '[') {
      const auto close = m_pattern.find(']', p + 1);
      if (close != std::string_view::npos) {
        std::string_view set = m_pattern.substr(p + 1, close - p - 1);
        const bool negate = !set.empty() && (set[0] == '!' || set[0] == '^');
        if (negate) set.remove_prefix(1);
        bool found = false;
        for (std::size_t i = 0; i < set.size(); ++i) {
          if (i + 2 < set.size() && set[i + 1] == '-') {
            found = found || (m_text[t] >= set[i] && m_text[t] <= set[i + 2]);
            i += 2;
          } else {
            found = found || set[i] == m_text[t];
          }
        }
        return found != negate && m_text[t] != '/' && match(close + 1, t + 1);
      }
    }
    return c == m_text[t] && match(p + 1, t + 1);
  }

  std::string_view m_pattern;
  std::string_view m_text;
  std::vector<signed char> m_memo;  // -1 unknown, 0 no, 1 yes
};

bool match_from(std::string_view pattern, std::string_view text) {
  return Matcher(pattern, text).match(0, 0);
}

} // namespace

bool glob_match(std::string_view pattern, std::string_view path) {
  if (pattern.empty()) return true;
  if (pattern.back() == '/') {  // a folder: everything below it
    const std::string prefix(pattern);
    return glob_match(prefix + "**", path);
  }
  if (pattern.find('/') == std::string_view::npos) {
    return match_from(std::string("**/") + std::string(pattern), path);
  }
  if (pattern.front() == '/') pattern.remove_prefix(1);
  return match_from(pattern, path);
}

} // namespace kasava::util
