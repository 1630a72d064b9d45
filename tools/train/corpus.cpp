// Reading and writing the training corpus format described in corpus.hpp.
#include "tools/train/corpus.hpp"

#include <fstream>
#include <stdexcept>

namespace kasava::train {

std::string escape_field(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '\\': out += "\\\\"; break;
      case '\t': out += "\\t"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      default: out += c;
    }
  }
  return out;
}

std::string unescape_field(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (c != '\\' || i + 1 == text.size()) {
      out += c;
      continue;
    }
    char next = text[++i];
    switch (next) {
      case 't': out += '\t'; break;
      case 'n': out += '\n'; break;
      case 'r': out += '\r'; break;
      default: out += next;
    }
  }
  return out;
}

void write_pair(std::FILE* out, const Pair& pair) {
  const std::string line = escape_field(pair.language) + '\t' + escape_field(pair.package) + '\t' +
                           escape_field(pair.path) + '\t' + escape_field(pair.symbol) + '\t' +
                           escape_field(pair.doc) + '\t' + escape_field(pair.code) + '\n';
  std::fwrite(line.data(), 1, line.size(), out);
}

bool parse_pair(std::string_view line, Pair& pair) {
  std::string* fields[] = {&pair.language, &pair.package, &pair.path,
                           &pair.symbol,   &pair.doc,     &pair.code};
  std::size_t start = 0;
  for (std::size_t i = 0; i < 6; ++i) {
    const std::size_t tab = line.find('\t', start);
    const bool last = i == 5;
    if (last != (tab == std::string_view::npos)) return false;
    const std::size_t end = last ? line.size() : tab;
    *fields[i] = unescape_field(line.substr(start, end - start));
    start = end + 1;
  }
  return true;
}

std::vector<Pair> read_corpus(const std::string& path, std::size_t* bad_lines) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot open corpus " + path);
  std::vector<Pair> pairs;
  std::size_t bad = 0;
  std::string line;
  Pair pair;
  while (std::getline(in, line)) {
    if (parse_pair(line, pair)) {
      pairs.push_back(std::move(pair));
      pair = Pair{};
    } else {
      ++bad;
    }
  }
  if (bad_lines) *bad_lines = bad;
  return pairs;
}

} // namespace kasava::train
