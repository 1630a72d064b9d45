// What every command gets after parsing: the global options, the output, and the resolve
// step — finding the repository and the index, and refreshing the index before a query.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "commands/options.hpp"
#include "commands/output.hpp"
#include "core/index/indexer.hpp"
#include "core/store/store.hpp"

namespace kasava::commands {

struct Context {
  explicit Context(GlobalOptions options);
  GlobalOptions global;
  Output output;
  std::string cwd;
};

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
/// or else the one the index was last built with, so a refresh never changes the rules.
index::IndexOptions index_options_for(const store::Store& store, std::uint64_t max_file_size);

/// Opens the index, adding to "not a database"-style errors how to start over.
std::unique_ptr<store::Store> open_store(const std::string& path, store::OpenMode mode);

/// Progress and warning callbacks that draw on context.output.
index::IndexCallbacks progress_callbacks(Context& context);

/// One-line human summary of an index run.
std::string format_summary(const index::IndexSummary& summary);

} // namespace kasava::commands
