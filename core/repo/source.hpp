// Where the files to index come from: a git repository's working tree or a commit's tree
// (through libgit2), or a plain directory. The only module that includes <git2.h>.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/util/result.hpp"

namespace kasava::repo {

enum class EntryKind {
  regular,    ///< a file (executable or not)
  symlink,    ///< a symbolic link (never followed out of the root)
  submodule,  ///< a gitlink: never entered
};

/// What the file system says of a file, compared like git's index does: any difference
/// means "read it again".
struct FileStat {
  std::int64_t mtime_ns = 0;  ///< modification time, ns since the epoch; 0 = not stat'ed
  std::int64_t ctime_ns = 0;  ///< inode change time
  std::uint64_t inode = 0;
  bool operator==(const FileStat&) const = default;
};

/// One file as the source sees it, before its content is read.
/// Source::read's error for a symlink to a folder inside the root. It is not a failure to try
/// again but a fact of the listing: the folder's own files are listed under their own paths, so
/// a change of what the link points to changes the listing too.
inline constexpr std::string_view k_symlink_to_directory = "symlink to a directory";

struct SourceEntry {
  std::string path;     ///< relative to the root, '/' separators
  std::string blob_id;  ///< git blob id (40 hex) of the current content; "" if not yet known
  std::uint64_t size = 0;
  EntryKind kind = EntryKind::regular;
  /// Stat data of a regular file whose blob id is not known from git (plain directories,
  /// changed and untracked working-tree files), so the index can tell an unchanged file
  /// without reading it; all 0 when not stat'ed.
  FileStat stat = {};
};

/// A commit's files listed against the tree ids of an earlier listing (Source::list_changed):
/// git trees are a Merkle tree, so a folder whose tree id did not change holds exactly the
/// files it held, and is not walked.
struct TreeListing {
  /// Files of the folders whose tree id changed (or that are new), sorted by path; what
  /// list() would return for them.
  std::vector<SourceEntry> entries;
  /// Folders whose tree id matched `known`, sorted: every file under "<folder>/" is as it was
  /// ("" for the root: nothing changed at all). Files under them are not in `entries`.
  std::vector<std::string> unchanged;
  /// The tree id of every folder this listing walked, and of each unchanged one ("" = the
  /// root); with the ids remembered under the unchanged folders, the `known` of next time.
  std::vector<std::pair<std::string, std::string>> trees;
};

/// A repository or directory to index.
class Source {
public:
  virtual ~Source() = default;

  /// Absolute path of the root (the work tree for git, the directory otherwise).
  virtual const std::string& root() const = 0;
  /// True when backed by a git repository.
  virtual bool is_git() const = 0;
  /// The commit id that HEAD (or --rev) points at, "" when there is none.
  virtual std::string commit_id() const = 0;

  /// Every file to consider, sorted by path (bytewise): for git, tracked files plus untracked
  /// files that are not ignored (working tree), or the tree of the selected revision. `.git/`
  /// and `.kasava/` are never listed. blob_id is filled when cheap (unchanged tracked
  /// files, revisions); otherwise read() computes it. Working-tree symlinks always get ""
  /// so that read() ids them by their target's content. Sizes of unchanged tracked files
  /// come from the git index, which stores them modulo 2^32. Untracked folders holding their
  /// own repository are listed once, as kind submodule. Reads no file content.
  virtual util::Result<std::vector<SourceEntry>> list() = 0;

  /// For `--rev`: list() without walking the folders whose tree id is the one in `known`
  /// (folder path → tree id; "" is the root), for an index that remembers the tree ids of the
  /// commit it last listed. nullopt when this source has no tree ids (work trees, plain
  /// directories): use list().
  virtual std::optional<util::Result<TreeListing>> list_changed(
      const std::vector<std::pair<std::string, std::string>>& known) {
    (void)known;
    return std::nullopt;
  }

  /// Work trees: the untracked cache an earlier listing learnt (its untracked_cache()), so
  /// that list() need not read the folders that did not change since. Damaged or outdated
  /// text is ignored. Other sources ignore it.
  virtual void use_untracked_cache(std::string_view text) { (void)text; }
  /// After list(): the untracked cache to give the next listing, "" when there is none.
  virtual std::string untracked_cache() const { return {}; }

  /// The content of one listed entry; fills entry.blob_id if it was empty (for changed
  /// working-tree files, after git's clean filters, as `git hash-object` does).
  /// Symlinks: the target's content when it is a regular file inside the root, else an error
  /// ("symlink leaves the repository", "symlink loop", "dangling symlink", …); with --rev
  /// always the error "symlink". Submodules: the error "submodule". Error messages carry no
  /// path: report them as `path: reason`. Safe to call from several threads at once.
  virtual util::Result<std::string> read(SourceEntry& entry) = 0;
};

/// Options for open_source().
struct OpenOptions {
  /// --rev: index this commit's tree instead of the work tree.
  std::optional<std::string> revision;
};

/// Opens the git repository that contains `path`, or `path` as a plain directory when it is
/// not inside one. Errors: nonexistent path, not a directory, bare repository without --rev,
/// unknown revision.
util::Result<std::unique_ptr<Source>> open_source(const std::string& path,
                                                  const OpenOptions& options);

/// Root of the git work tree containing `path`, if any (no error when there is none).
std::optional<std::string> find_work_tree(const std::string& path);

/// The git directory shared by all work trees of the repository containing `path` (where
/// `info/exclude` lives): `<root>/.git` usually, the main repository's for a linked worktree.
std::optional<std::string> common_git_dir(const std::string& path);

/// The URL of the remote `name` ("origin") of the repository containing `path`, without
/// credentials (redact_url), or nullopt when there is no such remote.
std::optional<std::string> remote_url(const std::string& path, const std::string& name);

/// True when `target` looks like a URL to clone (https://, http://, ssh://, git://, file://,
/// or scp-like user@host:path).
bool is_url(const std::string& target);

/// Where a URL is cloned: <cache_dir>/repos/<host>/<path> (credentials and ".git" dropped).
std::string clone_path_for(const std::string& url, const std::string& cache_dir);

/// A URL with any user:password@ (or token@) part removed, safe to print or store.
/// scp-like `git@host:path` is returned unchanged (it carries no secret).
std::string redact_url(const std::string& url);

/// Clones `url` into `destination` (through a temporary sibling renamed at the end), or, when
/// already cloned there, fetches and hard-resets the work tree to the remote's default branch.
/// Returns the absolute work tree path. Errors never contain the URL's credentials, and the
/// clone's stored origin URL has them removed.
util::Result<std::string> clone_or_fetch(const std::string& url, const std::string& destination);

/// What names a repository in a shared store (`kasava index --store`): its `origin` remote's
/// URL with credentials removed ("" when none) and the branch HEAD is on ("" when detached,
/// unborn or not a git repository).
struct Identity {
  std::string origin_url;
  std::string branch;
};
Identity identity_of(const std::string& root);

/// "owner/name" of a clone URL: its last two path parts without ".git" ("" when it has none).
std::string owner_and_name(const std::string& url);

/// Git blob id (40 hex) of `content`, as `git hash-object` computes it.
std::string blob_id_of(std::string_view content);

}  // namespace kasava::repo
