// Model specs as users write them (`--model`, KASAVA_MODEL): "builtin", "voyage:voyage-code-3",
// "openai:nomic-embed-text" → which provider and which model.
#pragma once

#include <string>
#include <string_view>

#include "core/util/result.hpp"

namespace kasava::remote {

enum class Provider { builtin, voyage, openai };

/// "builtin", "voyage", "openai".
const char* provider_name(Provider provider);

struct ModelSpec {
  Provider provider = Provider::builtin;
  std::string model;  ///< empty for "builtin" without a name

  /// Back to text: "voyage:voyage-code-3", "builtin".
  std::string str() const;
  bool is_remote() const { return provider != Provider::builtin; }
};

/// Parses "<provider>:<model>" or "builtin[:<name>]". Errors name the spec and the choices:
/// `unknown model provider 'cohere' in 'cohere:embed-v3': expected builtin, voyage:<model> or
/// openai:<model>`; a near miss gets "did you mean 'voyage'?".
util::Result<ModelSpec> parse_model_spec(std::string_view text);

}  // namespace kasava::remote
