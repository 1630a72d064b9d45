// embedding_input: the text the built-in model embeds for a chunk (see model.hpp).
#include <cstddef>
#include <string>

#include "core/embed/model.hpp"

namespace kasava::embed {
namespace {

// The model is a bag of words: past the first couple of kilobytes a chunk adds mostly noise
// and costs encoding time, so the code is cut here (the symbol and doc come first).
constexpr std::size_t k_max_code_bytes = 2048;

} // namespace

std::string embedding_input(std::string_view path, const types::Chunk& chunk) {
  std::string text;
  text.reserve(path.size() + chunk.symbol.size() + chunk.parent.size() + chunk.doc.size() +
               k_max_code_bytes + 8);
  // First line: the names (the model weighs them more). Newlines cannot occur in them.
  const std::string_view names[] = {path, chunk.parent, chunk.symbol};
  for (const std::string_view name : names) {
    if (name.empty()) continue;
    if (!text.empty()) text += ' ';
    for (const char c : name) text += c == '\n' ? ' ' : c;
  }
  text += '\n';
  if (!chunk.doc.empty()) {
    text += chunk.doc;
    text += '\n';
  }
  text.append(chunk.text.substr(0, k_max_code_bytes));
  return text;
}

} // namespace kasava::embed
