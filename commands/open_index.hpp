// Opening an index: read-only with a hint for files that are not an index, or for writing
// with the policy for an index of an older schema, another model or another folder (rebuilt
// beside the old one and swapped in when complete), and the options of a run on it.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "commands/context.hpp"
#include "core/index/indexer.hpp"
#include "core/store/store.hpp"
#include "core/util/result.hpp"

namespace kasava::commands {

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
/// partitions its codes when they need it (store::Store::update_partitions), records the
/// index as complete and, when the run rebuilt it beside, puts the new index in
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

/// The error for an index whose vectors come from another model than the one in use.
std::string model_mismatch_message(const std::string& index_path, const std::string& index_model,
                                   const std::string& model_in_use);


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

} // namespace kasava::commands
