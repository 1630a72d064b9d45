// Parsing chat model specs (see spec.hpp).
#include "core/answer/spec.hpp"

#include "core/util/strings.hpp"

namespace kasava::answer {

namespace {

constexpr const char* k_choices = "expected anthropic:<model> or openai:<model>";

const char* example_spec(Provider provider) {
  return provider == Provider::anthropic ? "anthropic:claude-sonnet-4-5" : "openai:gpt-4o-mini";
}

}  // namespace

const char* provider_name(Provider provider) {
  return provider == Provider::anthropic ? "anthropic" : "openai";
}

const char* key_variable(Provider provider) {
  return provider == Provider::anthropic ? "ANTHROPIC_API_KEY" : "OPENAI_API_KEY";
}

const char* default_base_url(Provider provider) {
  return provider == Provider::anthropic ? "https://api.anthropic.com"
                                         : "https://api.openai.com/v1";
}

std::string ChatModelSpec::str() const {
  return std::string(provider_name(provider)) + ":" + model;
}

util::Result<ChatModelSpec> parse_chat_model_spec(std::string_view text) {
  const std::string_view spec = util::trim(text);
  if (spec.empty()) return util::Error{std::string("empty chat model spec: ") + k_choices};
  const std::size_t colon = spec.find(':');
  const std::string name = util::to_lower(util::trim(spec.substr(0, colon)));
  const std::string_view model =
      colon == std::string_view::npos ? std::string_view() : util::trim(spec.substr(colon + 1));
  std::string quoted = "'";  // built by appending: GCC 12 warns falsely on "'" + string
  quoted.append(spec);
  quoted += '\'';

  ChatModelSpec result;
  if (name == "anthropic") {
    result.provider = Provider::anthropic;
  } else if (name == "openai") {
    result.provider = Provider::openai;
  } else {
    std::string message =
        "unknown chat model provider '" + name + "' in " + quoted + ": " + k_choices;
    for (const Provider known : {Provider::anthropic, Provider::openai})
      if (util::edit_distance(name, provider_name(known)) <= 2) {
        message += "; did you mean '" + std::string(provider_name(known)) + "'?";
        break;
      }
    return util::Error{message};
  }
  if (model.empty())
    return util::Error{"chat model spec " + quoted + " names no model: write " + name +
                       ":<model>, e.g. " + example_spec(result.provider)};
  for (char c : model)
    if (static_cast<unsigned char>(c) < 0x21 || c == '"' || c == '\\')
      return util::Error{"chat model spec " + quoted +
                         ": the model name contains a space, a quote or a control character"};
  result.model = std::string(model);
  return result;
}

}  // namespace kasava::answer
