// Private to core/repo: the untracked cache of a work tree listing, as git has one (the
// index's UNTR extension), kept by the index between runs as opaque text. It names the
// folders that held only tracked files and folders with tracked files when last read, with
// their stat data then. A folder whose stat data is unchanged has the same entries (creating,
// deleting or renaming an entry changes its folder's mtime), so with the same tracked paths it
// still holds no untracked file, and the listing does not read it. Includes no git2.h, so unit
// tests can use it.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/repo/source.hpp"

namespace kasava::repo::detail {

struct FolderStamp {
  std::string path;  ///< relative to the root, ending with '/'; "" for the root
  FileStat stat;
  bool operator==(const FolderStamp&) const = default;
};

struct UntrackedCache {
  /// The TrackedPathsDigest of the index the folders were read against: the cache holds only
  /// while the tracked paths are the same (a `git add` or `git rm --cached` changes no folder).
  std::uint64_t tracked_digest = 0;
  std::vector<FolderStamp> folders;  ///< sorted by path

  /// The text to keep. Folders whose path holds a newline are left out.
  std::string encode() const;
  /// Parses encode()'s text; an empty cache for anything else ("", damaged, another version).
  static UntrackedCache decode(std::string_view text);
  /// The stamp of `path`, nullptr when there is none.
  const FileStat* find(std::string_view path) const;

  bool operator==(const UntrackedCache&) const = default;
};

/// A digest of the tracked paths in index order, each with whether it is a gitlink: what
/// decides which files and folders of a folder are tracked. Mixed 8 bytes at a time.
class TrackedPathsDigest {
public:
  void add(std::string_view path, bool gitlink);
  std::uint64_t value() const { return m_value; }

private:
  std::uint64_t m_value = 14695981039346656037ull;
};

}  // namespace kasava::repo::detail
