// What every command gets after parsing: the global options, the output, and the resolve
// step — finding the repository and the index, and refreshing the index before a query.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "commands/options.hpp"
#include "commands/output.hpp"
#include "core/embed/embedder.hpp"
#include "core/index/indexer.hpp"
#include "core/store/store.hpp"

namespace kasava::commands {

struct Context {
  explicit Context(GlobalOptions options);
  GlobalOptions global;
  Output output;
  std::string cwd;

  /// The embedding model in use: the file of --model / KASAVA_MODEL, else the one built into
  /// kasava. Loaded on first use (lexical-only work never loads it); a bad file throws
  /// util::Failure naming it.
  embed::Embedder& embedder();

private:
  std::unique_ptr<embed::Embedder> m_embedder;
};

/// What opening an index for writing does when the index holds another model's vectors.
enum class ModelChange {
  rebuild,  ///< `kasava index`: start over with the model in use, after a one-line notice
  fail,     ///< the refresh before a query: an error naming both models and the fix
};

/// Thrown by open_index_for_writing (ModelChange::fail) for an index of another model.
class ModelMismatch : public util::Failure {
public:
  using util::Failure::Failure;
};

/// Opens (or creates) the index at `path` for indexing with context.embedder(): an index of an
/// older schema is rebuilt after a one-line notice (it is a cache), one of another model as
/// `on_model_change` says. The caller holds the index lock.
std::unique_ptr<store::Store> open_index_for_writing(Context& context, const std::string& path,
                                                     ModelChange on_model_change);

/// The embedder a query on `store` needs: null for a lexical query or an index without
/// vectors (nothing is loaded then), else context.embedder().
embed::Embedder* embedder_for_query(Context& context, const store::Store& store, bool lexical);

/// The error for an index whose vectors come from another model than the one in use.
std::string model_mismatch_message(const std::string& index_path, const std::string& index_model,
                                   const std::string& model_in_use);

/// The index a query should read, and the source folder to refresh it from (if known).
struct QueryTarget {
  std::string index_path;
  std::optional<std::string> root;  ///< the work tree or directory the index was built from
};

/// Finds the index for ask/status: --index / KASAVA_INDEX, else `.kasava/index.db` in the
/// current folder or a parent, else the git repository around the current folder (whose
/// index does not exist yet). Throws util::Failure when there is nothing to search.
QueryTarget resolve_query_target(const Context& context);

/// Brings the index at target.index_path up to date with target.root (creating it when
/// missing), showing progress on a terminal. Returns false, after a warning, when the index
/// cannot be written (e.g. a read-only CI artifact) but can still be read.
bool refresh_index(Context& context, const QueryTarget& target);

/// Index options for a run on `store`: the file size limit requested (0 = none requested)
/// or else the one the index was last built with, so a refresh never changes the rules; and
/// the model in use (context.embedder()) to embed the chunks.
index::IndexOptions index_options_for(Context& context, const store::Store& store,
                                      std::uint64_t max_file_size);
/// The file size limit of index_options_for, for commands that do not index (status).
std::uint64_t max_file_size_for(const store::Store& store);

/// Opens the index, adding to "not a database"-style errors how to start over.
std::unique_ptr<store::Store> open_store(const std::string& path, store::OpenMode mode);

/// Progress and warning callbacks that draw on context.output.
index::IndexCallbacks progress_callbacks(Context& context);

/// One-line human summary of an index run.
std::string format_summary(const index::IndexSummary& summary);

} // namespace kasava::commands
