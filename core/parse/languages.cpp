// Language detection and the language list over the table generated from
// grammars/languages.tsv (detect_language, known_languages, has_grammar in chunker.hpp).
#include "core/parse/languages.hpp"

#include <algorithm>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/parse/chunker.hpp"
#include "core/util/strings.hpp"

namespace kasava::parse {
namespace {

struct LanguageIndex {
  std::unordered_map<std::string, const LanguageSpec*> by_name;
  std::unordered_map<std::string, const LanguageSpec*> by_extension;  // ".py", lower case
  std::unordered_map<std::string, const LanguageSpec*> by_file_name;  // "makefile", lower case
  std::vector<std::string> names;                                     // sorted
};

LanguageIndex build_index() {
  LanguageIndex index;
  for (std::size_t i = 0; i < k_language_spec_count; ++i) {
    const LanguageSpec& spec = k_language_specs[i];
    index.by_name.emplace(spec.name, &spec);
    index.names.emplace_back(spec.name);
    for (const std::string& entry : util::split(spec.match, ',')) {
      const std::string key = util::to_lower(util::trim(entry));
      if (key.empty()) continue;
      // The first row that claims a match wins (".h" is C, not C++).
      if (key.front() == '.') {
        index.by_extension.emplace(key, &spec);
      } else {
        index.by_file_name.emplace(key, &spec);
      }
    }
  }
  std::sort(index.names.begin(), index.names.end());
  return index;
}

const LanguageIndex& language_index() {
  static const LanguageIndex index = build_index();
  return index;
}

}  // namespace

const LanguageSpec* find_language(std::string_view name) {
  const auto& by_name = language_index().by_name;
  const auto found = by_name.find(std::string(name));
  return found == by_name.end() ? nullptr : found->second;
}

std::string detect_language(std::string_view path) {
  const auto slash = path.find_last_of("/\\");
  const std::string file_name =
      util::to_lower(slash == std::string_view::npos ? path : path.substr(slash + 1));
  const LanguageIndex& index = language_index();
  if (const auto found = index.by_file_name.find(file_name); found != index.by_file_name.end()) {
    return found->second->name;
  }
  // The extension includes the dot, and a dot file's whole name is its extension (".bashrc").
  const auto dot = file_name.rfind('.');
  if (dot == std::string::npos) return {};
  if (const auto found = index.by_extension.find(file_name.substr(dot));
      found != index.by_extension.end()) {
    return found->second->name;
  }
  return {};
}

std::vector<std::string> known_languages() {
  return language_index().names;
}

bool has_grammar(std::string_view language) {
  const LanguageSpec* spec = find_language(language);
  return spec != nullptr && spec->grammar != nullptr;
}

}  // namespace kasava::parse
