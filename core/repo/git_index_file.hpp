// Private to core/repo: a reader of git's index file (`.git/index`, "DIRC" versions 2–4, split
// or not) that keeps what listing a working tree needs — path, blob id, mode, flags and stat
// data — without libgit2's checksum (SHA-1DC over the whole file) and per-entry allocations.
// Includes no git2.h, so unit tests can use it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace kasava::repo::detail {

/// Storage for many short strings in blocks that never move, so that views into it stay valid
/// when its owner is moved: one allocation per 64 KiB of paths rather than one per path (for
/// 10,000 entries, 10,000 mallocs and their page faults on the thread that lists).
class PathStore {
public:
  PathStore() = default;
  PathStore(PathStore&& other) noexcept { *this = std::move(other); }
  /// Leaves `other` empty, so that it cannot write into the blocks it handed over.
  PathStore& operator=(PathStore&& other) noexcept {
    m_blocks = std::move(other.m_blocks);
    m_next = std::exchange(other.m_next, nullptr);
    m_free = std::exchange(other.m_free, 0);
    return *this;
  }

  /// Room for `bytes` more without another allocation (for paths whose total is known).
  void reserve(std::size_t bytes);
  /// A copy of `text` that lives as long as this store.
  std::string_view add(std::string_view text);
  /// Takes over `other`'s blocks, so that views into them live as long as this store.
  void adopt(PathStore&& other);

private:
  std::vector<std::unique_ptr<char[]>> m_blocks;
  char* m_next = nullptr;
  std::size_t m_free = 0;
};

/// One entry of git's index, as stored (times and sizes are git's 32-bit fields).
struct GitIndexEntry {
  std::string_view path;     ///< into the GitIndexFile's `paths`
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

/// A split index's `link` extension (`git update-index --split-index`, core.splitIndex): the
/// entries are those of the shared index `sharedindex.<base>` beside it, less the positions
/// of `deleted`, with those of `replaced` taken from this file's first entries (stored
/// without a path: the shared entry's path is theirs), and this file's other entries added.
struct SplitIndexLink {
  std::uint8_t base[20] = {};
  /// The two EWAH bitmaps as stored (git's ewah/ewah_io.c), decoded by apply_split_index(),
  /// which knows how many entries they may name. Empty when the link has none (no change).
  std::string deleted, replaced;
};

/// The entries of an index file, in the file's order (sorted by path, then stage), and the
/// file's own modification time (entries modified at or after it are "racily clean").
struct GitIndexFile {
  std::vector<GitIndexEntry> entries;
  std::int64_t mtime_ns = 0;
  /// Where the entries' paths are (move-only, so a copy cannot point into another's store).
  PathStore paths;
  /// Set by parse_git_index() for a split index whose shared index is still to be applied;
  /// its first entries may then have an empty path. read_git_index() applies it.
  std::optional<SplitIndexLink> link;
  /// The trailing checksum, which names a shared index (`sharedindex.<checksum>`).
  std::uint8_t checksum[20] = {};
  /// Whether the entries came from a split index and its shared index (libgit2 cannot read
  /// such an index: whatever would make it read the index must not be asked).
  bool split = false;
};

/// Parses an index file's bytes. nullopt when the file is not one this reader understands
/// completely — an unknown version, a truncated entry, a sparse-directory entry, or a required
/// extension other than `link` (a lowercase signature such as the sparse index's `sdir`): the
/// caller then asks libgit2. The trailing checksum is not verified (git writes the file
/// through a lock and a rename, so a reader never sees it half written).
std::optional<GitIndexFile> parse_git_index(std::string_view bytes);

/// A split index (`split.link` set) with its shared index applied: the entries git would
/// have after reading both (split-index.c's merge_base_index), sorted, `link` cleared. nullopt
/// when they do not fit together (a position past the shared index, an entry both deleted and
/// replaced, a replacement without its entry, a shared index that is split itself or is not
/// the one named).
std::optional<GitIndexFile> apply_split_index(GitIndexFile split, GitIndexFile shared);

/// Reads and parses `path` — and, for a split index, the shared index beside it, applied. An
/// absent file is an empty index (a repository before its first `git add`); nullopt when it
/// cannot be read or parse_git_index() or apply_split_index() declines it.
std::optional<GitIndexFile> read_git_index(const std::string& path);

}  // namespace kasava::repo::detail
