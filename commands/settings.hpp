// Settings and where each comes from: a flag, then the environment, then the repository's
// `.kasava/config`, then the user's `$XDG_CONFIG_HOME/kasava/config`, then the default. The
// resolve step of every command reads them here; `kasava status` shows the provenance.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace kasava::commands {

/// Where a setting's value came from, strongest first. `index`: the model an index was built
/// with, used for queries on it when nothing else chose one (Context::adopt_index_model).
enum class Origin { flag, environment, repository_config, user_config, index, default_value };

/// "flag", "environment", "repository config", "user config", "index", "default".
const char* origin_name(Origin origin);

struct Setting {
  std::string value;  ///< "" when unset
  Origin origin = Origin::default_value;
  /// Where exactly: "--model", "KASAVA_MODEL", "/repo/.kasava/config:3", "default".
  std::string source;
  bool is_set() const { return !value.empty(); }
};

/// Every setting kasava reads. API keys are not settings: they are read from the environment
/// only (VOYAGE_API_KEY, OPENAI_API_KEY, ANTHROPIC_API_KEY) and never written anywhere.
struct Settings {
  Setting model;               ///< --model, KASAVA_MODEL, `model`; default "builtin"
  Setting answer_model;        ///< KASAVA_ANSWER_MODEL, `answer_model` (--answer-model: ask)
  Setting dimensions;          ///< KASAVA_DIMENSIONS, `dimensions`: a remote model's output size
  Setting output_dtype;        ///< KASAVA_OUTPUT_DTYPE, `output_dtype`: Voyage's float or int8
  Setting retries;             ///< KASAVA_RETRIES, `retries`: attempts after a failed request (5)
  Setting parallel_requests;   ///< KASAVA_PARALLEL_REQUESTS, `parallel_requests`: in flight (4)
  Setting rate_limit;          ///< KASAVA_RATE_LIMIT, `rate_limit`: requests per second (none)
  Setting openai_base_url;     ///< KASAVA_OPENAI_BASE_URL, `openai_base_url` (user config only)
  Setting voyage_base_url;     ///< KASAVA_VOYAGE_BASE_URL, `voyage_base_url` (user config only)
  Setting anthropic_base_url;  ///< KASAVA_ANTHROPIC_BASE_URL, `anthropic_base_url` (user config only)
  /// KASAVA_ALLOW_REPOSITORY_MODELS, `allow_repository_models` (user config only): "true" lets
  /// a repository's config choose a remote model or answer model.
  Setting allow_repository_models;
  /// KASAVA_STORE, `store` (user config only): the shared PostgreSQL store `kasava index`
  /// publishes to (--store: index); a libpq URI or key=value string, which may hold a password.
  Setting store;
  std::string repository_config;  ///< the repository's config file looked at ("" when no repository)
  std::string user_config;        ///< the user's config file looked at
  /// Problems that do not stop the command (unknown keys, endpoints in a repository config):
  /// the caller prints them as warnings.
  std::vector<std::string> warnings;
};

/// Resolves every setting. `model_flag` is --model ("" when not given); `repository_root` the
/// repository whose `.kasava/config` applies, if any. A config file that cannot be parsed is
/// an error (util::Failure naming the file and line); a missing one is not.
///
/// Endpoints (base URLs) are read from the environment and the user's config only: a
/// repository, cloned from anywhere, must not be able to send the user's API keys to a server
/// of its choosing. For the same reason a repository config may choose only local models
/// (builtin, a .kmodel file): a remote `model` or any `answer_model` from it is ignored with
/// a warning, unless the user's config or environment allows it (allow_repository_models) or
/// names the same model.
Settings resolve_settings(const std::string& model_flag,
                          const std::optional<std::string>& repository_root);

/// An environment variable's value, "" when unset.
std::string environment(const char* name);

/// The API key variables kasava reads, with whether each is set (for `kasava status`; a key's
/// value is never shown).
std::vector<std::pair<std::string, bool>> api_key_status();

} // namespace kasava::commands
