// The compiled-in table of languages (generated from grammars/languages.tsv by CMake).
#pragma once

#include <cstddef>

struct TSLanguage;

namespace kasava::parse {

struct LanguageSpec {
  const char* name;                    ///< "python"
  const char* match;                   ///< ".py,.pyi" extensions and exact file names
  const TSLanguage* (*grammar)(void);  ///< nullptr: chunked by line windows only
  const char* tag_query;               ///< tree-sitter tag query source ("" when none)
};

extern const LanguageSpec k_language_specs[];
extern const std::size_t k_language_spec_count;

} // namespace kasava::parse
