// Feature names, the ranker file format and the built-in ranker (see ranker.hpp).
#include "core/search/ranker.hpp"

#include <cmath>
#include <cstdlib>

#include "core/util/strings.hpp"

namespace kasava::search {
namespace {

constexpr std::array<std::string_view, k_feature_count> k_names = {
    "lexical",        "semantic",      "identifier_lexical", "identifier_semantic",
    "lexical_absolute", "semantic_absolute", "path",          "history",
    "other_places",   "file_lexical",  "file_semantic",      "name_words",
    "kind_test",      "kind_example",  "kind_docs",          "kind_changelog",
    "kind_build",     "kind_generated", "kind_barrel",       "kind_stubs",
};

// models/ranker.tsv, as CMake wrote it into ranker_weights.inc at configure time.
constexpr std::string_view k_built_in_text =
#include "ranker_weights.inc"
    ;

} // namespace

std::string_view feature_name(Feature feature) { return k_names[static_cast<int>(feature)]; }

double Ranker::value(const Features& features) const {
  double sum = 0.0;
  for (int i = 0; i < k_feature_count; ++i) sum += weights[i] * features[i];
  return sum;
}

util::Result<Ranker> parse_ranker(std::string_view text) {
  Ranker ranker;
  std::array<bool, k_feature_count> seen{};
  int line_number = 0;
  for (const auto& raw : util::split(text, '\n')) {
    ++line_number;
    const std::string line(util::trim(raw));
    if (line.empty() || line.starts_with('#')) continue;
    const auto tab = line.find('\t');
    const std::string name(util::trim(std::string_view(line).substr(0, tab)));
    int index = -1;
    for (int i = 0; i < k_feature_count; ++i) {
      if (k_names[i] == name) index = i;
    }
    const std::string where = "ranker line " + std::to_string(line_number);
    if (tab == std::string::npos) return util::Error{where + ": expected 'name<TAB>weight'"};
    if (index < 0) return util::Error{where + ": unknown feature '" + name + "'"};
    if (seen[index]) return util::Error{where + ": feature '" + name + "' given twice"};
    const std::string number(util::trim(std::string_view(line).substr(tab + 1)));
    char* end = nullptr;
    const double weight = std::strtod(number.c_str(), &end);
    if (number.empty() || *end != '\0' || !std::isfinite(weight)) {
      return util::Error{where + ": '" + number + "' is not a number"};
    }
    ranker.weights[index] = weight;
    seen[index] = true;
  }
  for (int i = 0; i < k_feature_count; ++i) {
    if (!seen[i]) return util::Error{"ranker: no weight for feature '" + std::string(k_names[i]) + "'"};
  }
  return ranker;
}

const Ranker& built_in_ranker() {
  static const Ranker ranker = parse_ranker(k_built_in_text).value_or_throw();
  return ranker;
}

} // namespace kasava::search
