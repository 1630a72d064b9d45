// A chunk: the unit kasava indexes and returns — one definition (function, method, class…)
// or one window of lines. Plain data shared by parse (which makes chunks) and store (which keeps them).
#pragma once

#include <string>

namespace kasava::types {

struct Chunk {
  std::string kind;       ///< "function", "method", "class", "interface", "struct", "enum",
                          ///< "module", "type", "macro", or "block" for a line window
  std::string symbol;     ///< the defined name ("" for a block)
  std::string parent;     ///< enclosing definition's name, e.g. the class of a method ("" if none)
  std::string signature;  ///< the definition's first line(s) up to its body, trimmed
  std::string doc;        ///< its doc comment or docstring, comment markers stripped
  int start_line = 0;     ///< 1-based, inclusive
  int end_line = 0;       ///< 1-based, inclusive
  std::string text;       ///< the source lines start_line..end_line
};

} // namespace kasava::types
