// Work-arounds for bugs in the external scanners of pinned grammars: a language whose scanner
// misbehaves is replaced by a copy of it with the faulty scanner entry points wrapped.
#pragma once

#include <string_view>

struct TSLanguage;

namespace kasava::parse {

/// The grammar to use for `language`: `original`, or a fixed copy of it (see the .cpp files
/// fix_*_scanner.cpp for what each fix is about).
const TSLanguage* fixed_grammar(std::string_view language, const TSLanguage* original);

/// Fixed copies, one per grammar with a known scanner bug.
const TSLanguage* fixed_swift_grammar(const TSLanguage* original);

}  // namespace kasava::parse
