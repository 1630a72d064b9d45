// The line table of one source file: where each line starts, which lines are blank, and the
// text of a range of lines. Rows are 0-based here; chunks turn them into 1-based lines.
#pragma once

#include <cstddef>
#include <string_view>
#include <vector>

namespace kasava::parse {

class SourceLines {
public:
  explicit SourceLines(std::string_view content);

  int count() const { return static_cast<int>(m_starts.size()); }
  std::string_view content() const { return m_content; }
  std::size_t start_of(int row) const { return m_starts[static_cast<std::size_t>(row)]; }
  /// Byte offset just past the row's text (before its '\n' and a '\r' preceding it).
  std::size_t end_of(int row) const;
  std::string_view line(int row) const;
  /// The rows first..last inclusive, without the final line break.
  std::string_view text(int first, int last) const;

  bool is_blank(int row) const;
  /// True for lines that only close something (`}`, `});`, `end`, `fi`…): not worth a chunk of
  /// their own, so they extend the chunk before them.
  bool is_closing(int row) const;

private:
  std::string_view m_content;
  std::vector<std::size_t> m_starts;
};

}  // namespace kasava::parse
