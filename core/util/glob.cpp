// Glob matching: see glob.hpp.
#include "core/util/glob.hpp"

#include <string>

namespace kasava::util {
namespace {

// Matches pattern[p..] against text[t..]. Recursive with backtracking on '*' and '**';
// patterns are short, so the worst case stays small.
bool match_from(std::string_view pattern, std::string_view text) {
  std::size_t p = 0;
  std::size_t t = 0;
  while (p < pattern.size()) {
    const char c = pattern[p];
    if (c == '*') {
      const bool double_star = p + 1 < pattern.size() && pattern[p + 1] == '*';
      if (double_star) {
        std::size_t rest = p + 2;
        if (rest < pattern.size() && pattern[rest] == '/') ++rest;  // "**/" also matches ""
        for (std::size_t k = t; k <= text.size(); ++k) {
          if (match_from(pattern.substr(rest), text.substr(k))) return true;
        }
        return false;
      }
      for (std::size_t k = t; k <= text.size(); ++k) {
        if (match_from(pattern.substr(p + 1), text.substr(k))) return true;
        if (k < text.size() && text[k] == '/') break;
      }
      return false;
    }
    if (t >= text.size()) return false;
    if (c == '?') {
      if (text[t] == '/') return false;
    } else if (c == '[') {
      const auto close = pattern.find(']', p + 1);
      if (close == std::string_view::npos) {
        if (text[t] != '[') return false;
      } else {
        std::string_view set = pattern.substr(p + 1, close - p - 1);
        bool negate = !set.empty() && (set[0] == '!' || set[0] == '^');
        if (negate) set.remove_prefix(1);
        bool found = false;
        for (std::size_t i = 0; i < set.size(); ++i) {
          if (i + 2 < set.size() && set[i + 1] == '-') {
            if (text[t] >= set[i] && text[t] <= set[i + 2]) found = true;
            i += 2;
          } else if (set[i] == text[t]) {
            found = true;
          }
        }
        if (found == negate || text[t] == '/') return false;
        p = close + 1;
        ++t;
        continue;
      }
    } else if (c != text[t]) {
      return false;
    }
    ++p;
    ++t;
  }
  return t == text.size();
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
