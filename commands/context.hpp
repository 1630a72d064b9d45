// What every command gets after parsing: the global options, the output, and the resolve
// step — finding the repository and the index, and refreshing the index before a query.
#pragma once

#include <memory>
#include <optional>
#include <set>
#include <string>

#include "commands/options.hpp"
#include "commands/output.hpp"
#include "commands/settings.hpp"
#include "core/embed/embedder.hpp"
#include "core/index/indexer.hpp"
#include "core/search/search.hpp"
#include "core/store/store.hpp"
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

  /// The repository whose `.kasava/config` applies: the resolve step says it once it knows,
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

/// What opening an index for writing does when the index holds another model's vectors.
enum class ModelChange {
  rebuild,  ///< `kasava index`: start over with the model in use, after a one-line notice
  fail,     ///< the refresh before a query: an error naming both models and the fix, except
            ///< for an older kasava's built-in model (same name) when no model was chosen: this
            ///< kasava's is the one to use, so it is rebuilt as by `rebuild`
};

/// Thrown by open_index_for_writing (ModelChange::fail) for an index of another model.
class ModelMismatch : public util::Failure {
public:
  using util::Failure::Failure;
};

/// What open_index_for_writing does with an index that exists.
enum class Existing {
  update,   ///< index what changed (rebuilding it only for an older schema or another model)
  rebuild,  ///< `kasava index --rebuild`: start over
};

/// Opens (or creates) the index at `path` for indexing `root` with context.embedder(): an
/// index of an older schema is rebuilt after a one-line notice (it is a cache), one of another
/// model as `on_model_change` says, and one that records another root is rebuilt after a
/// notice (a foreign index's rows are not trusted to be `root`'s files, not even when their
/// blob ids match). A rebuild of an index that exists writes a new one beside it
/// (rebuild_path), which finish_index_run puts in its place once complete: until then readers
/// search the old one, and a killed rebuild leaves it as it was. Only a kasava index (or a
/// file in a `.kasava` folder) is ever replaced: anything else is refused with an error that
/// says how to remove it by hand. The caller holds the index lock.
std::unique_ptr<store::Store> open_index_for_writing(Context& context, const std::string& path,
                                                     const std::string& root,
                                                     ModelChange on_model_change,
                                                     Existing existing = Existing::update);

/// Ends an index run that succeeded on a store from open_index_for_writing(…, path, …):
/// records the index as complete and, when the run rebuilt it beside, puts the new index in
/// the place of the old one (store::Store::swap_in). The caller holds the index lock.
void finish_index_run(std::unique_ptr<store::Store> store, const std::string& path);

/// Where a rebuild of the index at `path` writes the new index until it is complete.
std::string rebuild_path(const std::string& path);
/// Deletes what a rebuild killed midway left beside the index at `path`. The caller holds
/// the index lock.
void discard_unfinished_rebuild(const std::string& path);

/// Whether an index run on `store` did not finish (killed or interrupted midway): some files
/// may be missing or out of date. Searching it still works.
bool index_is_partial(const store::Store& store);
/// How status, verify and ask describe a partial index.
inline constexpr const char* k_partial_index =
    "partial (an index run did not finish; run `kasava index`)";

/// The embedder a query on `store` in `mode` needs: null for a lexical query or an index
/// without vectors (nothing is loaded then), else context.embedder(). An index whose remote
/// model was not adopted (Context::unadopted_index_model) and is not the model chosen gets
/// null after a warning (hybrid: the words still answer) or an error (semantic): kasava does
/// not send a query to a service because a file it did not make names it.
embed::Embedder* embedder_for_query(Context& context, const store::Store& store, search::Mode mode);

/// Runs a search on `store` with the embedder the mode needs (embedder_for_query). When a
/// hybrid search fails because a remote model's service does not answer, the words still
/// do: it warns and returns the lexical results.
util::Result<std::vector<search::SearchHit>> run_search(Context& context, const store::Store& store,
                                                        search::SearchOptions options);

/// The error for an index whose vectors come from another model than the one in use.
std::string model_mismatch_message(const std::string& index_path, const std::string& index_model,
                                   const std::string& model_in_use);

/// The index a query should read, and the folder its files come from, if known. An index
/// file is untrusted input (shared as a CI artifact, downloaded, committed by mistake): the
/// folder never comes from what the file records, only from where the index was found.
struct QueryTarget {
  std::string index_path;
  /// The work tree or directory to refresh the index from and read its files from: the
  /// repository found on disk, when the index records it as its root. nullopt for an index
  /// of a commit (--rev), a foreign index, or an index asked from the file alone.
  std::optional<std::string> root;
  /// The repository the index belongs to, found on disk as for root; set for an index of a
  /// commit too (`kasava verify` compares that commit).
  std::optional<std::string> repository;
  /// Why root is not set ("" when it is), for errors of commands that need the files.
  std::string no_root_reason;
};

/// Finds the index for ask/status/verify/mcp: --index / KASAVA_INDEX, else `.kasava/index.db`
/// in the current folder or a parent, else the git repository around the current folder
/// (whose index does not exist yet). Throws util::Failure when there is nothing to search.
///
/// The repository an index belongs to is a folder found on disk that the index records as its
/// root (same folder, compared by device and inode): `<dir>` for an index at
/// `<dir>/.kasava/index.db` (found by walking up or named); for a named index elsewhere, the
/// git work tree around the current folder. An index at `<dir>/.kasava/index.db` recording no
/// root belongs to `<dir>`. An index at `<dir>/.kasava/index.db` recording another root is
/// foreign: asked from the file alone (no refresh, no file read, its remote model not
/// adopted), after a warning given once. A named index elsewhere whose repository is not
/// found is asked from the file alone, silently (a CI artifact). Tells the context which
/// repository's config applies and which model the index was built with.
QueryTarget resolve_query_target(Context& context);

/// Brings the index at target.index_path up to date with target.root (creating it when
/// missing), showing progress on a terminal. Returns false, after a warning, when the index
/// cannot be written (e.g. a read-only CI artifact) but can still be read.
bool refresh_index(Context& context, const QueryTarget& target);

/// Index options for a run on `store`: the file size limit requested (0 = none requested)
/// or else the one the index was last built with, so a refresh never changes the rules; and
/// the model in use (context.embedder()) to embed the chunks.
index::IndexOptions index_options_for(Context& context, const store::Store& store,
                                      std::uint64_t max_file_size);
/// The file size limit of index_options_for, for commands that do not index (status, mcp):
/// the index's stored limit when it is a plain positive number, else the default.
std::uint64_t max_file_size_for(const store::Store& store);

/// Opens the index, adding to "not a database"-style errors how to start over.
std::unique_ptr<store::Store> open_store(const std::string& path, store::OpenMode mode);

/// Progress and warning callbacks that draw on context.output.
index::IndexCallbacks progress_callbacks(Context& context);

/// One-line human summary of an index run.
std::string format_summary(const index::IndexSummary& summary);

} // namespace kasava::commands
