// Private to core/repo: a reader of git's index file (`.git/index`, "DIRC" versions 2–4) that
// keeps what listing a working tree needs — path, blob id, mode, flags and stat data — without
// libgit2's checksum (SHA-1DC over the whole file) and per-entry allocations. Includes no git2.h,
// so unit tests can use it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kasava::repo::detail {

/// One entry of git's index, as stored (times and sizes are git's 32-bit fields).
struct GitIndexEntry {
  std::string path;
  std::uint8_t id[20] = {};  ///< the blob (or gitlink commit) id
  std::uint32_t mode = 0;    ///< 0100644, 0100755, 0120000 (symlink) or 0160000 (gitlink)
  std::uint32_t ctime_s = 0, ctime_ns = 0;
  std::uint32_t mtime_s = 0, mtime_ns = 0;
  std::uint32_t dev = 0, ino = 0, uid = 0, gid = 0;
  std::uint32_t size = 0;      ///< the file's size modulo 2^32; 0 when git smudged a racy entry
  std::uint8_t stage = 0;      ///< 0, or 1–3 for the sides of a merge conflict
  bool skip_worktree = false;  ///< sparse checkout: not expected on disk
  bool intent_to_add = false;  ///< `git add -N`: no content staged yet
};

/// The entries of an index file, in the file's order (sorted by path, then stage), and the
/// file's own modification time (entries modified at or after it are "racily clean").
struct GitIndexFile {
  std::vector<GitIndexEntry> entries;
  std::int64_t mtime_ns = 0;
};

/// Parses an index file's bytes. nullopt when the file is not one this reader understands
/// completely — an unknown version, a truncated entry, a sparse-directory entry, or a required
/// extension (a lowercase signature such as the split index's `link` or the sparse index's
/// `sdir`): the caller then asks libgit2. The trailing checksum is not verified (git writes
/// the file through a lock and a rename, so a reader never sees it half written).
std::optional<GitIndexFile> parse_git_index(std::string_view bytes);

/// Reads and parses `path`. An absent file is an empty index (a repository before its first
/// `git add`); nullopt when it cannot be read or parse_git_index() declines it.
std::optional<GitIndexFile> read_git_index(const std::string& path);

}  // namespace kasava::repo::detail
