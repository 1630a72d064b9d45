// The training corpus: (doc comment, code) pairs mined from real source code by `kasava-mine`
// and read by `kasava-train`. One pair per line, tab-separated fields, with '\\', '\t', '\n'
// and '\r' escaped as \\ \t \n \r, so any text survives a round trip:
//   language  package  path  symbol  doc  code
#pragma once

#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

namespace kasava::train {

struct Pair {
  std::string language;  ///< kasava's language name ("python", "go", ...)
  std::string package;   ///< where it came from (Debian package or "stdlib-go"), for splits
  std::string path;      ///< file path inside the package
  std::string symbol;    ///< the definition's name
  std::string doc;       ///< its doc comment / docstring (the "query" side)
  std::string code;      ///< the definition's code without its doc comment (the "code" side)
};

/// Escapes one field (\\ \t \n \r).
std::string escape_field(std::string_view text);
/// Reverses escape_field; unknown escapes keep the escaped character.
std::string unescape_field(std::string_view text);

/// Writes one pair as one line.
void write_pair(std::FILE* out, const Pair& pair);
/// Parses one line (without its '\n'); false when it does not have six fields.
bool parse_pair(std::string_view line, Pair& pair);
/// Reads every pair of a corpus file; lines that do not parse are skipped and counted.
std::vector<Pair> read_corpus(const std::string& path, std::size_t* bad_lines = nullptr);

} // namespace kasava::train
