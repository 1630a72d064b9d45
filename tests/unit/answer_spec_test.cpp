// Tests of chat model specs (core/answer/spec.cpp): what parses, and errors that say how to
// write a spec.
#include <catch2/catch.hpp>

#include "core/answer/spec.hpp"

using namespace kasava;

TEST_CASE("answer::parse_chat_model_spec reads provider and model") {
  auto anthropic = answer::parse_chat_model_spec("anthropic:claude-sonnet-4-5");
  REQUIRE(anthropic);
  CHECK(anthropic->provider == answer::Provider::anthropic);
  CHECK(anthropic->model == "claude-sonnet-4-5");
  CHECK(anthropic->str() == "anthropic:claude-sonnet-4-5");

  auto openai = answer::parse_chat_model_spec("  OpenAI:llama3.1:8b ");
  REQUIRE(openai);
  CHECK(openai->provider == answer::Provider::openai);
  CHECK(openai->model == "llama3.1:8b");  // Ollama tags keep their colon
}

TEST_CASE("answer::parse_chat_model_spec explains bad specs") {
  auto typo = answer::parse_chat_model_spec("antropic:claude-x");
  REQUIRE(!typo);
  CHECK(typo.error().message ==
        "unknown chat model provider 'antropic' in 'antropic:claude-x': expected "
        "anthropic:<model> or openai:<model>; did you mean 'anthropic'?");

  auto unknown = answer::parse_chat_model_spec("cohere:command-r");
  REQUIRE(!unknown);
  CHECK(unknown.error().message.find("did you mean") == std::string::npos);

  auto no_model = answer::parse_chat_model_spec("openai");
  REQUIRE(!no_model);
  CHECK(no_model.error().message ==
        "chat model spec 'openai' names no model: write openai:<model>, e.g. openai:gpt-4o-mini");
  CHECK(!answer::parse_chat_model_spec("anthropic:"));
  CHECK(!answer::parse_chat_model_spec(""));
  CHECK(!answer::parse_chat_model_spec("openai:gpt 4"));
}

TEST_CASE("answer::key_variable and answer::default_base_url") {
  CHECK(std::string(answer::key_variable(answer::Provider::anthropic)) == "ANTHROPIC_API_KEY");
  CHECK(std::string(answer::key_variable(answer::Provider::openai)) == "OPENAI_API_KEY");
  CHECK(std::string(answer::default_base_url(answer::Provider::anthropic)) ==
        "https://api.anthropic.com");
  CHECK(std::string(answer::default_base_url(answer::Provider::openai)) ==
        "https://api.openai.com/v1");
}
