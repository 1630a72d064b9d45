// Unit tests for core/search/ranker.cpp: the ranker file format and the built-in ranker.
#include <catch2/catch.hpp>

#include <string>

#include "core/search/ranker.hpp"

using namespace kasava;
using search::Feature;

namespace {

// A ranker file with every feature, feature i weighing i / 10, and EXTRA appended.
std::string every_feature(const std::string& extra = "") {
  std::string text = "# a comment\n\n";
  for (int i = 0; i < search::k_feature_count; ++i) {
    text += std::string(search::feature_name(static_cast<Feature>(i))) + "\t" + std::to_string(i / 10.0) + "\n";
  }
  return text + extra;
}

} // namespace

TEST_CASE("search::parse_ranker reads one weight per feature") {
  auto ranker = search::parse_ranker(every_feature());
  REQUIRE(ranker);
  CHECK(ranker->weights[0] == 0.0);
  CHECK((*ranker)[Feature::semantic] == Approx(0.1));
  CHECK((*ranker)[Feature::kind_stubs] == Approx((search::k_feature_count - 1) / 10.0));
  search::Features features{};
  features[static_cast<int>(Feature::semantic)] = 2.0;
  features[static_cast<int>(Feature::path)] = 1.0;
  CHECK(ranker->value(features) == Approx(2.0 * 0.1 + 1.0 * static_cast<int>(Feature::path) / 10.0));
}

TEST_CASE("search::parse_ranker refuses a file that does not name every feature once") {
  const auto message = [](const std::string& text) {
    auto ranker = search::parse_ranker(text);
    REQUIRE_FALSE(ranker);
    return ranker.error().message;
  };
  CHECK(message(every_feature("semantic\t1\n")) == "ranker line " +
        std::to_string(2 + search::k_feature_count + 1) + ": feature 'semantic' given twice");
  CHECK(message(every_feature("popularity\t1\n")).ends_with(": unknown feature 'popularity'"));
  CHECK(message(every_feature("semantic 1\n")).ends_with(": expected 'name<TAB>weight'"));
  CHECK(message("lexical\tmany\n").ends_with(": 'many' is not a number"));
  CHECK(message("lexical\tnan\n").ends_with(": 'nan' is not a number"));
  CHECK(message("lexical\t1\n") == "ranker: no weight for feature 'semantic'");
}

TEST_CASE("search::built_in_ranker is models/ranker.tsv: every feature named, words and meaning both count") {
  const auto& ranker = search::built_in_ranker();
  CHECK(ranker[Feature::lexical] + ranker[Feature::lexical_absolute] > 0.0);
  CHECK(ranker[Feature::semantic] + ranker[Feature::semantic_absolute] > 0.0);
  CHECK(ranker[Feature::kind_changelog] < 0.0);  // a changelog never outranks the source it describes
}
