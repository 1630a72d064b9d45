// Text clean-up for chunk metadata: see doc_text.hpp.
#include "core/parse/doc_text.hpp"

#include <algorithm>
#include <vector>

#include "core/util/strings.hpp"

namespace kasava::parse {
namespace {

bool is_space(char c) {
  return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\f' || c == '\v';
}

std::string_view drop_prefix_run(std::string_view text, char c) {
  while (!text.empty() && text.front() == c) text.remove_prefix(1);
  return text;
}

// One comment line without its markers. Block comments pass through here line by line, so
// an inner line of `/** … */` loses its leading `*` the same way as the opening line.
// lua_close is the closing bracket of a Lua long comment (`]]`, `]==]`), or empty.
std::string_view strip_line_markers(std::string_view line, std::string_view lua_close) {
  line = util::trim(line);
  if (line.starts_with("/*")) {
    line.remove_prefix(2);
    line = drop_prefix_run(line, '*');
    if (!line.empty() && line.front() == '!') line.remove_prefix(1);
  } else if (line.starts_with("//")) {
    line = drop_prefix_run(line, '/');
    if (!line.empty() && line.front() == '!') line.remove_prefix(1);
  } else if (line.starts_with("--")) {
    line = drop_prefix_run(line, '-');
    if (!lua_close.empty() && !line.empty() && line.front() == '[') {
      line.remove_prefix(std::min(line.size(), lua_close.size()));  // `[[`, `[==[`: as long
    }
  } else if (line.starts_with("#")) {
    line = drop_prefix_run(line, '#');
    if (!line.empty() && line.front() == '!') line.remove_prefix(1);
  } else if (line.starts_with("*") && !line.starts_with("*/")) {
    line = drop_prefix_run(line, '*');
  }
  line = util::trim(line);
  if (line.ends_with("*/")) {
    line.remove_suffix(2);
    while (!line.empty() && line.back() == '*') line.remove_suffix(1);
  } else if (!lua_close.empty() && line.ends_with(lua_close)) {
    line.remove_suffix(lua_close.size());
  }
  return util::trim(line);
}

// The closing bracket of a Lua long comment (`--[==[` → `]==]`), or "" for other comments.
std::string lua_long_comment_close(std::string_view comment) {
  comment = util::trim(comment);
  if (!comment.starts_with("--[")) return {};
  const auto open = comment.find_first_not_of('=', 3);
  if (open == std::string_view::npos || comment[open] != '[') return {};
  std::string close(open - 3 + 2, '=');
  close.front() = ']';
  close.back() = ']';
  return close;
}

// Joins lines with '\n', leaving out empty lines at the start and the end.
std::string join_lines(const std::vector<std::string_view>& lines) {
  std::size_t first = 0;
  std::size_t last = lines.size();
  while (first < last && lines[first].empty()) ++first;
  while (last > first && lines[last - 1].empty()) --last;
  std::string out;
  for (std::size_t i = first; i < last; ++i) {
    if (i > first) out += '\n';
    out.append(lines[i]);
  }
  return out;
}

template <typename Visit>
void for_each_line(std::string_view text, Visit visit) {
  std::size_t start = 0;
  while (start <= text.size()) {
    const auto end = text.find('\n', start);
    if (end == std::string_view::npos) {
      visit(text.substr(start));
      break;
    }
    visit(text.substr(start, end - start));
    start = end + 1;
  }
}

}  // namespace

std::string strip_comment_markers(std::string_view comment) {
  const std::string lua_close = lua_long_comment_close(comment);
  std::vector<std::string_view> lines;
  for_each_line(comment, [&](std::string_view line) {
    lines.push_back(strip_line_markers(line, lua_close));
  });
  return join_lines(lines);
}

std::string strip_docstring(std::string_view literal) {
  literal = util::trim(literal);
  // String prefixes: r, u, b, f and their combinations, in either case.
  while (!literal.empty() &&
         std::string_view("rRuUbBfF").find(literal.front()) != std::string_view::npos) {
    literal.remove_prefix(1);
  }
  for (std::string_view quote : {"\"\"\"", "'''", "\"", "'"}) {
    if (literal.starts_with(quote)) {
      literal.remove_prefix(quote.size());
      if (literal.ends_with(quote)) literal.remove_suffix(quote.size());
      break;
    }
  }
  std::vector<std::string_view> lines;
  for_each_line(literal, [&](std::string_view line) {
    while (!line.empty() && is_space(line.back())) line.remove_suffix(1);
    lines.push_back(line);
  });
  // Dedent like inspect.cleandoc: the first line is trimmed, the rest lose their common indent.
  std::size_t indent = std::string_view::npos;
  for (std::size_t i = 1; i < lines.size(); ++i) {
    const auto first = lines[i].find_first_not_of(" \t");
    if (first != std::string_view::npos) indent = std::min(indent, first);
  }
  if (!lines.empty()) lines[0] = util::trim(lines[0]);
  for (std::size_t i = 1; i < lines.size(); ++i) {
    if (indent != std::string_view::npos && lines[i].size() >= indent)
      lines[i].remove_prefix(indent);
  }
  return join_lines(lines);
}

std::string collapse_whitespace(std::string_view text, std::size_t max_bytes) {
  std::string out;
  out.reserve(std::min(text.size(), max_bytes));
  bool pending_space = false;
  for (char c : text) {
    if (is_space(c)) {
      pending_space = !out.empty();
      continue;
    }
    if (pending_space) out += ' ';
    pending_space = false;
    out += c;
    if (out.size() >= max_bytes) break;
  }
  if (out.size() > max_bytes) out.resize(max_bytes);
  // Never end inside a UTF-8 sequence: drop continuation bytes and the lead byte they follow.
  if (!out.empty() && (static_cast<unsigned char>(out.back()) & 0x80) != 0 &&
      out.size() >= max_bytes) {
    std::size_t end = out.size();
    while (end > 0 && (static_cast<unsigned char>(out[end - 1]) & 0xC0) == 0x80) --end;
    if (end > 0 && (static_cast<unsigned char>(out[end - 1]) & 0xC0) == 0xC0) {
      const auto lead = static_cast<unsigned char>(out[end - 1]);
      const std::size_t length = (lead & 0xE0) == 0xC0 ? 2 : (lead & 0xF0) == 0xE0 ? 3 : 4;
      if (out.size() - (end - 1) < length) out.resize(end - 1);
    }
  }
  while (!out.empty() && is_space(out.back())) out.pop_back();
  return out;
}

}  // namespace kasava::parse
