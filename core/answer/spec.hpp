// Chat model specs as users write them (`--answer-model`, KASAVA_ANSWER_MODEL):
// "anthropic:claude-sonnet-4-5", "openai:gpt-4o-mini" → which provider and which model.
#pragma once

#include <string>
#include <string_view>

#include "core/util/result.hpp"

namespace kasava::answer {

enum class Provider { anthropic, openai };

/// "anthropic", "openai".
const char* provider_name(Provider provider);

/// The environment variable holding the provider's key: "ANTHROPIC_API_KEY", "OPENAI_API_KEY".
const char* key_variable(Provider provider);

/// The provider's default base URL: "https://api.anthropic.com" (the path adds /v1/messages),
/// "https://api.openai.com/v1" (the path adds /chat/completions).
const char* default_base_url(Provider provider);

struct ChatModelSpec {
  Provider provider = Provider::anthropic;
  std::string model;

  /// Back to text: "anthropic:claude-sonnet-4-5".
  std::string str() const;
};

/// Parses "<provider>:<model>". Errors name the spec and the choices: `unknown chat model
/// provider 'antropic' in 'antropic:x': expected anthropic:<model> or openai:<model>; did you
/// mean 'anthropic'?`; a spec without a model says how to write one.
util::Result<ChatModelSpec> parse_chat_model_spec(std::string_view text);

}  // namespace kasava::answer
