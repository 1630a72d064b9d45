// Lookup in the compiled-in language table (internal to core/parse): by language name, by
// file extension and by exact file name.
#pragma once

#include <string_view>

#include "core/parse/language_table.hpp"

namespace kasava::parse {

/// The table row of a language by name, or nullptr.
const LanguageSpec* find_language(std::string_view name);

}  // namespace kasava::parse
