// Tests of model spec parsing (core/remote/spec.cpp).
#include <catch2/catch.hpp>

#include "core/remote/spec.hpp"

using namespace kasava;

TEST_CASE("remote::parse_model_spec reads provider and model") {
  auto voyage = remote::parse_model_spec("voyage:voyage-code-3");
  REQUIRE(voyage);
  CHECK(voyage->provider == remote::Provider::voyage);
  CHECK(voyage->model == "voyage-code-3");
  CHECK(voyage->str() == "voyage:voyage-code-3");
  CHECK(voyage->is_remote());

  auto openai = remote::parse_model_spec(" openai:nomic-embed-text:latest ");
  REQUIRE(openai);
  CHECK(openai->provider == remote::Provider::openai);
  CHECK(openai->model == "nomic-embed-text:latest");  // Ollama tags keep their colon

  auto builtin = remote::parse_model_spec("builtin");
  REQUIRE(builtin);
  CHECK(builtin->provider == remote::Provider::builtin);
  CHECK(!builtin->is_remote());
  CHECK(builtin->str() == "builtin");
  CHECK(remote::parse_model_spec("builtin:nbow-v1")->model == "nbow-v1");
  CHECK(remote::parse_model_spec("Voyage:voyage-3")->provider == remote::Provider::voyage);
}

TEST_CASE("remote::parse_model_spec explains bad specs") {
  auto unknown = remote::parse_model_spec("cohere:embed-v3");
  REQUIRE(!unknown);
  CHECK(unknown.error().message ==
        "unknown model provider 'cohere' in 'cohere:embed-v3': expected builtin, "
        "voyage:<model> or openai:<model>");
  auto typo = remote::parse_model_spec("voyag:voyage-code-3");
  REQUIRE(!typo);
  CHECK(typo.error().message.find("did you mean 'voyage'?") != std::string::npos);
  auto empty_model = remote::parse_model_spec("voyage:");
  REQUIRE(!empty_model);
  CHECK(empty_model.error().message ==
        "model spec 'voyage:' names no model: write voyage:<model>, e.g. voyage:voyage-code-3");
  CHECK(!remote::parse_model_spec("openai"));
  CHECK(!remote::parse_model_spec(""));
  CHECK(!remote::parse_model_spec("builtin:"));
  CHECK(!remote::parse_model_spec("openai:bad model"));
  CHECK(!remote::parse_model_spec("openai:bad\"model"));
}
