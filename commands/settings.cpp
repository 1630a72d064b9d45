// Settings resolution: see settings.hpp.
#include "commands/settings.hpp"

#include <cstdlib>
#include <filesystem>

#include "core/util/config_file.hpp"
#include "core/util/files.hpp"
#include "core/util/result.hpp"
#include "core/util/strings.hpp"

namespace kasava::commands {

namespace fs = std::filesystem;

namespace {

/// Whether a repository's config may set a setting.
enum class FromRepository {
  allowed,
  endpoint,    ///< never: it would choose where the user's API keys go
  permission,  ///< never: it grants something only the user may grant
  destination, ///< never: it would choose where the user's index (and credentials) go
};

// One setting: its config key, its environment variable, and whether a repository's config
// may set it (see resolve_settings).
struct Spec {
  const char* key;
  const char* variable;
  Setting Settings::*member;
  FromRepository from_repository;
};

constexpr Spec k_specs[] = {
    {"model", "KASAVA_MODEL", &Settings::model, FromRepository::allowed},
    {"answer_model", "KASAVA_ANSWER_MODEL", &Settings::answer_model, FromRepository::allowed},
    {"dimensions", "KASAVA_DIMENSIONS", &Settings::dimensions, FromRepository::allowed},
    {"output_dtype", "KASAVA_OUTPUT_DTYPE", &Settings::output_dtype, FromRepository::allowed},
    {"retries", "KASAVA_RETRIES", &Settings::retries, FromRepository::allowed},
    {"parallel_requests", "KASAVA_PARALLEL_REQUESTS", &Settings::parallel_requests, FromRepository::allowed},
    {"rate_limit", "KASAVA_RATE_LIMIT", &Settings::rate_limit, FromRepository::allowed},
    {"openai_base_url", "KASAVA_OPENAI_BASE_URL", &Settings::openai_base_url, FromRepository::endpoint},
    {"voyage_base_url", "KASAVA_VOYAGE_BASE_URL", &Settings::voyage_base_url, FromRepository::endpoint},
    {"anthropic_base_url", "KASAVA_ANTHROPIC_BASE_URL", &Settings::anthropic_base_url,
     FromRepository::endpoint},
    {"allow_repository_models", "KASAVA_ALLOW_REPOSITORY_MODELS",
     &Settings::allow_repository_models, FromRepository::permission},
    {"store", "KASAVA_STORE", &Settings::store, FromRepository::destination},
};

const Spec* find_spec(std::string_view key) {
  for (const Spec& spec : k_specs) {
    if (key == spec.key) return &spec;
  }
  return nullptr;
}

std::string user_config_path() {
  const std::string xdg = environment("XDG_CONFIG_HOME");
  if (!xdg.empty()) return (fs::path(xdg) / "kasava" / "config").string();
  const std::string home = environment("HOME");
  if (home.empty()) return "";
  return (fs::path(home) / ".config" / "kasava" / "config").string();
}

// Applies the entries of the config file at `path` (if it exists) to the settings that are
// still unset after the stronger origins.
void apply_config_file(const std::string& path, Origin origin, Settings& settings) {
  std::error_code error;
  if (path.empty() || !fs::is_regular_file(path, error)) return;
  auto text = util::read_file(path);
  if (!text) throw util::Failure(text.error());
  auto entries = util::parse_config(*text, path);
  if (!entries) throw util::Failure(entries.error());
  for (const util::ConfigEntry& entry : *entries) {
    const std::string where = path + ":" + std::to_string(entry.line);
    const Spec* spec = find_spec(entry.key);
    if (spec == nullptr) {
      std::string message = "unknown setting '" + entry.key + "' in '" + where + "'";
      std::size_t best = 3;
      std::string closest;
      for (const Spec& candidate : k_specs) {
        const std::size_t distance = util::edit_distance(entry.key, candidate.key);
        if (distance < best) {
          best = distance;
          closest = candidate.key;
        }
      }
      if (!closest.empty()) message += ": did you mean '" + closest + "'?";
      settings.warnings.push_back(message);
      continue;
    }
    if (origin == Origin::repository_config && spec->from_repository == FromRepository::endpoint) {
      settings.warnings.push_back(
          "ignoring '" + entry.key + "' in '" + where + "': endpoints are read only from " +
          spec->variable + " or the user's config, so a repository cannot send API keys to a "
          "server of its choosing");
      continue;
    }
    if (origin == Origin::repository_config && spec->from_repository == FromRepository::permission) {
      settings.warnings.push_back("ignoring '" + entry.key + "' in '" + where + "': it is read only from " +
                                  spec->variable + " or the user's config, so a repository cannot "
                                  "grant it to itself");
      continue;
    }
    if (origin == Origin::repository_config && spec->from_repository == FromRepository::destination) {
      settings.warnings.push_back("ignoring '" + entry.key + "' in '" + where + "': it is read only from " +
                                  spec->variable + " or the user's config, so a repository cannot "
                                  "choose where its index is published");
      continue;
    }
    Setting& setting = settings.*(spec->member);
    // Stronger origins were applied first; within a file the last entry wins.
    if (setting.is_set() && setting.origin != origin) continue;
    setting = Setting{entry.value, origin, where};
  }
}

// Whether a model setting names a model that runs elsewhere, so that using it sends code
// there. As Context makes the embedder: "builtin" and model files (.kmodel, or any path) run
// on this machine, anything else is a provider's (or an error); chat models are all remote.
bool names_remote_model(Setting Settings::*member, std::string_view value) {
  if (member == &Settings::answer_model) return true;
  const std::string_view trimmed = util::trim(value);
  return util::to_lower(trimmed) != "builtin" && !trimmed.ends_with(".kmodel") &&
         trimmed.find('/') == std::string_view::npos;
}

bool is_true(const Setting& setting) {
  const std::string value = util::to_lower(util::trim(setting.value));
  return value == "true" || value == "yes" || value == "1" || value == "on";
}

// A repository may not choose where its code is sent: a remote model named by its config is
// dropped (the user's own choice, if any, applies instead) unless the user allowed it with
// allow_repository_models, or chose that same model.
void refuse_repository_models(Settings& settings, const Settings& user) {
  if (is_true(settings.allow_repository_models) || is_true(user.allow_repository_models)) return;
  for (const Spec& spec : k_specs) {
    if (spec.member != &Settings::model && spec.member != &Settings::answer_model) continue;
    Setting& setting = settings.*(spec.member);
    if (setting.origin != Origin::repository_config || !names_remote_model(spec.member, setting.value))
      continue;
    if (util::trim((user.*(spec.member)).value) == util::trim(setting.value)) continue;
    settings.warnings.push_back(
        "ignoring " + std::string(spec.key) + " '" + setting.value + "' in '" + setting.source +
        "': a repository's config may not send its code to a remote model; choose it yourself (" +
        (spec.member == &Settings::model ? "--model" : "--answer-model") + ", " + spec.variable +
        ", your config) or allow it with `allow_repository_models = true` in your config");
    setting = Setting{};
  }
}

} // namespace

const char* origin_name(Origin origin) {
  switch (origin) {
    case Origin::flag: return "flag";
    case Origin::environment: return "environment";
    case Origin::repository_config: return "repository config";
    case Origin::user_config: return "user config";
    case Origin::index: return "index";
    case Origin::default_value: return "default";
  }
  return "default";
}

std::string environment(const char* name) {
  const char* value = std::getenv(name);
  return value != nullptr ? std::string(value) : std::string();
}

Settings resolve_settings(const std::string& model_flag,
                          const std::optional<std::string>& repository_root) {
  Settings settings;
  if (!model_flag.empty()) settings.model = Setting{model_flag, Origin::flag, "--model"};
  for (const Spec& spec : k_specs) {
    Setting& setting = settings.*(spec.member);
    if (setting.is_set()) continue;
    std::string value = environment(spec.variable);
    if (!value.empty()) setting = Setting{std::move(value), Origin::environment, spec.variable};
  }
  settings.user_config = user_config_path();
  if (repository_root) {
    settings.repository_config = (fs::path(*repository_root) / ".kasava" / "config").string();
    apply_config_file(settings.repository_config, Origin::repository_config, settings);
    Settings user;  // the user's config alone: whether it allows, and which models it names
    apply_config_file(settings.user_config, Origin::user_config, user);
    refuse_repository_models(settings, user);
  }
  apply_config_file(settings.user_config, Origin::user_config, settings);
  if (!settings.model.is_set()) settings.model = Setting{"builtin", Origin::default_value, "default"};
  return settings;
}

std::vector<std::pair<std::string, bool>> api_key_status() {
  std::vector<std::pair<std::string, bool>> keys;
  for (const char* name : {"VOYAGE_API_KEY", "OPENAI_API_KEY", "ANTHROPIC_API_KEY"}) {
    keys.emplace_back(name, !environment(name).empty());
  }
  return keys;
}

} // namespace kasava::commands
