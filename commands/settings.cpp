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

// One setting: its config key, its environment variable, and whether a repository's config
// may set it (endpoints may not: see resolve_settings).
struct Spec {
  const char* key;
  const char* variable;
  Setting Settings::*member;
  bool repository_may_set;
};

constexpr Spec k_specs[] = {
    {"model", "KASAVA_MODEL", &Settings::model, true},
    {"answer_model", "KASAVA_ANSWER_MODEL", &Settings::answer_model, true},
    {"dimensions", "KASAVA_DIMENSIONS", &Settings::dimensions, true},
    {"output_dtype", "KASAVA_OUTPUT_DTYPE", &Settings::output_dtype, true},
    {"retries", "KASAVA_RETRIES", &Settings::retries, true},
    {"parallel_requests", "KASAVA_PARALLEL_REQUESTS", &Settings::parallel_requests, true},
    {"rate_limit", "KASAVA_RATE_LIMIT", &Settings::rate_limit, true},
    {"openai_base_url", "KASAVA_OPENAI_BASE_URL", &Settings::openai_base_url, false},
    {"voyage_base_url", "KASAVA_VOYAGE_BASE_URL", &Settings::voyage_base_url, false},
    {"anthropic_base_url", "KASAVA_ANTHROPIC_BASE_URL", &Settings::anthropic_base_url, false},
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
    if (origin == Origin::repository_config && !spec->repository_may_set) {
      settings.warnings.push_back(
          "ignoring '" + entry.key + "' in '" + where + "': endpoints are read only from " +
          spec->variable + " or the user's config, so a repository cannot send API keys to a "
          "server of its choosing");
      continue;
    }
    Setting& setting = settings.*(spec->member);
    // Stronger origins were applied first; within a file the last entry wins.
    if (setting.is_set() && setting.origin != origin) continue;
    setting = Setting{entry.value, origin, where};
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
  if (repository_root) {
    settings.repository_config = (fs::path(*repository_root) / ".kasava" / "config").string();
    apply_config_file(settings.repository_config, Origin::repository_config, settings);
  }
  settings.user_config = user_config_path();
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
