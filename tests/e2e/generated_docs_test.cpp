// End-to-end drift tests: the committed man page and shell completions must be exactly what
// `kasava generate` prints from the CLI definition (regenerate them with scripts/generate-docs).
#include <catch2/catch.hpp>

#include "core/util/files.hpp"
#include "harness.hpp"

using namespace kasava;

TEST_CASE("generate: committed man page and completions match the CLI definition") {
  const std::vector<std::pair<std::string, std::string>> documents = {
      {"man", "man/kasava.1"},
      {"bash", "completions/kasava.bash"},
      {"zsh", "completions/kasava.zsh"},
      {"fish", "completions/kasava.fish"}};
  for (const auto& [format, path] : documents) {
    INFO(format << " → " << path << " (run scripts/generate-docs)");
    const e2e::RunResult result = e2e::run_kasava({"generate", format});
    REQUIRE(result.exit_code == 0);
    CHECK(result.err.empty());
    auto committed = util::read_file(std::string(KASAVA_SOURCE_DIR) + "/" + path);
    REQUIRE(committed.ok());
    CHECK(result.out == *committed);
  }
}

TEST_CASE("generate: the bash completion is valid bash and an unknown format is an error") {
  const e2e::RunResult bash = e2e::run_kasava({"generate", "bash"});
  REQUIRE(bash.exit_code == 0);
  CHECK_THAT(bash.out, Catch::Contains("complete -F _kasava kasava"));
  CHECK_THAT(bash.out, Catch::Contains("--max-file-size"));
  const e2e::RunResult bad = e2e::run_kasava({"generate", "powershell"});
  CHECK(bad.exit_code == 2);
  CHECK_THAT(bad.err, Catch::StartsWith("kasava: error:"));
}
