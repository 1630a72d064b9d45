// Parsing model specs (see spec.hpp).
#include "core/remote/spec.hpp"

#include "core/util/strings.hpp"

namespace kasava::remote {

const char* provider_name(Provider provider) {
  switch (provider) {
    case Provider::builtin:
      return "builtin";
    case Provider::voyage:
      return "voyage";
    case Provider::openai:
      return "openai";
  }
  return "builtin";
}

std::string ModelSpec::str() const {
  if (model.empty()) return provider_name(provider);
  return std::string(provider_name(provider)) + ":" + model;
}

util::Result<ModelSpec> parse_model_spec(std::string_view text) {
  const std::string_view spec = util::trim(text);
  if (spec.empty())
    return util::Error{"empty model spec: expected builtin, voyage:<model> or openai:<model>"};
  const std::size_t colon = spec.find(':');
  const std::string name = util::to_lower(spec.substr(0, colon));
  const std::string_view model =
      colon == std::string_view::npos ? std::string_view() : util::trim(spec.substr(colon + 1));
  std::string quoted = "'";
  quoted.append(spec);
  quoted += '\'';

  ModelSpec result;
  if (name == "builtin") {
    result.provider = Provider::builtin;
  } else if (name == "voyage") {
    result.provider = Provider::voyage;
  } else if (name == "openai") {
    result.provider = Provider::openai;
  } else {
    std::string message = "unknown model provider '" + name + "' in " + quoted +
                          ": expected builtin, voyage:<model> or openai:<model>";
    for (const char* known : {"builtin", "voyage", "openai"})
      if (util::edit_distance(name, known) <= 2) {
        message += "; did you mean '" + std::string(known) + "'?";
        break;
      }
    return util::Error{message};
  }
  if (result.provider != Provider::builtin && model.empty())
    return util::Error{"model spec " + quoted + " names no model: write " + name +
                       ":<model>, e.g. " +
                       (result.provider == Provider::voyage ? "voyage:voyage-code-3"
                                                            : "openai:text-embedding-3-small")};
  if (colon != std::string_view::npos && model.empty())
    return util::Error{"model spec " + quoted + " names no model"};
  for (char c : model)
    if (static_cast<unsigned char>(c) < 0x21 || c == '"' || c == '\\')
      return util::Error{"model spec " + quoted +
                         ": the model name contains a space, a quote or a control character"};
  result.model = std::string(model);
  return result;
}

}  // namespace kasava::remote
