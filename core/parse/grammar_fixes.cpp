// Picks the fixed copy of a grammar whose scanner has a known bug: see grammar_fixes.hpp.
#include "core/parse/grammar_fixes.hpp"

namespace kasava::parse {

const TSLanguage* fixed_grammar(std::string_view language, const TSLanguage* original) {
  if (language == "swift") return fixed_swift_grammar(original);
  return original;
}

}  // namespace kasava::parse
