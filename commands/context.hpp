// What every command gets after parsing: the global options, the output, the settings and
// the embedding model in use (made on first use). Finding the index is target.hpp's, opening
// it open_index.hpp's, refreshing it refresh.hpp's; setup.hpp runs them for a command.
#pragma once

#include <memory>
#include <optional>
#include <set>
#include <string>

#include "commands/options.hpp"
#include "commands/output.hpp"
#include "commands/settings.hpp"
#include "core/embed/embedder.hpp"
#include "core/store/vector_cache.hpp"

namespace kasava::commands {

/// Whether an index belongs to the repository found on disk (see resolve_query_target).
enum class IndexTrust {
  own,      ///< it records the folder it was found for as its root (or records none)
  foreign,  ///< it records another root, or none could be found on disk: the file alone
};

struct Context {
  explicit Context(GlobalOptions options);
  GlobalOptions global;
  Output output;
  std::string cwd;

  /// The repository whose `.kasava/config` applies: the setup (target.hpp) says it once it knows,
  /// before the first settings() or embedder() (a later call changes nothing after those).
  void use_repository(std::optional<std::string> root);
  /// The settings (flags > environment > repository config > user config > defaults),
  /// resolved on first use; their warnings are printed then.
  const Settings& settings();
  /// An index made with a remote model remembers it: when no model was chosen (the setting
  /// is the default), queries on that index and `kasava index` runs on it use the index's
  /// model (`voyage:voyage-code-3`, `openai:nomic-embed-text@512`) instead of the built-in
  /// one; `--model builtin` switches back. Only an index of `root` (it records that folder as
  /// its root) is trusted to choose: a foreign one (a CI artifact, one committed to a
  /// repository) never makes kasava send code or queries to a service it names.
  void adopt_index_model(const std::string& index_path, const std::string& root);
  /// The same, for a model read from an index resolve_query_target has judged: a foreign
  /// index's remote model is not adopted (queries on that index are then by words only, with
  /// a warning, unless the user chooses its model).
  void adopt_index_model(const std::string& index_model, IndexTrust trust);
  /// The remote model a foreign index was built with and that was not adopted ("" if none):
  /// embedder_for_query searches it by words only.
  const std::string& unadopted_index_model() const { return m_unadopted_index_model; }

  /// Prints a warning once per process (an MCP server resolves its index for every call).
  void warn_once(const std::string& message);

  /// The embedding model in use: `builtin` (compiled into kasava), a `.kmodel` file, or a
  /// remote model (`voyage:<model>`, `openai:<model>`), as the model setting says. Made on
  /// first use (lexical-only work never loads it); a bad setting throws util::Failure naming
  /// it and where it came from.
  embed::Embedder& embedder();
  /// Whether the model in use is a remote one (without making the embedder).
  bool model_is_remote();
  /// The user's vector cache of remote models (store::VectorCache::default_path()), opened on
  /// first use; null, after a warning, when it cannot be opened (indexing goes on without).
  store::VectorCache* vector_cache();

private:
  std::optional<std::string> m_repository;
  std::optional<Settings> m_settings;
  std::unique_ptr<embed::Embedder> m_embedder;
  std::unique_ptr<store::VectorCache> m_vector_cache;
  bool m_vector_cache_tried = false;
  std::string m_unadopted_index_model;
  std::set<std::string> m_warned;
};

} // namespace kasava::commands
