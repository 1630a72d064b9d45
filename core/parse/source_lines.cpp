// The line table of one source file: see source_lines.hpp.
#include "core/parse/source_lines.hpp"

#include "core/util/strings.hpp"

namespace kasava::parse {

SourceLines::SourceLines(std::string_view content)
    : m_content(content), m_starts(util::line_starts(content)) {}

std::size_t SourceLines::end_of(int row) const {
  const auto next = static_cast<std::size_t>(row) + 1;
  std::size_t end = next < m_starts.size() ? m_starts[next] : m_content.size();
  const std::size_t start = start_of(row);
  if (end > start && m_content[end - 1] == '\n') --end;
  if (end > start && m_content[end - 1] == '\r') --end;
  return end;
}

std::string_view SourceLines::line(int row) const {
  const std::size_t start = start_of(row);
  return m_content.substr(start, end_of(row) - start);
}

std::string_view SourceLines::text(int first, int last) const {
  const std::size_t start = start_of(first);
  return m_content.substr(start, end_of(last) - start);
}

bool SourceLines::is_blank(int row) const {
  for (char c : line(row)) {
    if (c != ' ' && c != '\t' && c != '\f' && c != '\v' && c != '\r') return false;
  }
  return true;
}

bool SourceLines::is_closing(int row) const {
  std::string_view text = line(row);
  // A trailing comment does not make a line worth a chunk: `} // namespace net`.
  for (std::string_view marker : {"//", "#", "--", "/*"}) {
    text = text.substr(0, text.find(marker));
  }
  text = util::trim(text);
  if (text.empty()) return false;
  if (text == "end" || text == "end;" || text == "fi" || text == "done" || text == "esac")
    return true;
  for (char c : text) {
    if (c != '}' && c != ')' && c != ']' && c != ';' && c != ',') return false;
  }
  return true;
}

}  // namespace kasava::parse
