// Finding the index a command reads and the repository it belongs to (resolve_query_target),
// or the repository `kasava index` indexes, cloned first when it is a URL (resolve_index_target).
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "commands/context.hpp"
#include "core/repo/source.hpp"
#include "core/store/store.hpp"

namespace kasava::commands {

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
/// repository's config applies and which model the index was built with. The index is opened
/// read-only to judge it; given `opened`, that store is left there (null when it could not be
/// opened) for a caller that reads it as it is, without opening it again.
QueryTarget resolve_query_target(Context& context, std::unique_ptr<store::Store>* opened = nullptr);


/// The repository `kasava index` indexes, opened, and the index it writes.
struct IndexTarget {
  std::unique_ptr<repo::Source> source;  ///< the work tree, the commit (--rev) or the folder
  std::string index_path;                ///< --index, else `<root>/.kasava/index.db`
  std::string cloned_into;               ///< the clone of a URL target (its root), else ""
};

/// Finds what `kasava index [TARGET]` indexes: TARGET (a folder, or a URL cloned or fetched
/// into the cache: on a failed fetch the last clone, after a warning), else -C's URL, else
/// the current folder; opened at `revision` when not "". Tells the context the repository
/// and the model its index was built with; makes the embedder, so a bad model fails before
/// anything is written.
IndexTarget resolve_index_target(Context& context, const std::string& target,
                                 const std::string& revision);

} // namespace kasava::commands
