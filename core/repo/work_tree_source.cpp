// A git working tree as git sees it: tracked files (from git's index) plus untracked files that
// are not ignored, with their current contents.
//
// Why it is fast: a no-change listing costs one lstat per tracked file, one directory read per
// folder, and no file content, no hashing and no ignore lookup.
// - Tracked files: git's index file is read by our own reader (git_index_file.cpp: no SHA-1 of
//   the whole file, no hash map), and each entry's stat data is compared with an lstat of the
//   file by git's rules: size, mtime and ctime with nanoseconds, inode, owner. A file whose
//   stat data matches takes its blob id from the index and is never read. This is what
//   git_status_list_new did for us, without its diff machinery and allocations.
//   The lstat calls are spread over two threads (the directory walk below runs on the first
//   meanwhile), which also build the listed entries, so that their strings (a path and a
//   40-digit id each: most of the listing's allocations) are made in parallel. Paths are
//   looked up relative to a descriptor of the root, so the kernel walks only their own
//   components (3 instead of 6 for a 10,000-file tree at /tmp/repo-bench/synth): that took
//   its listing from 39 to 25 ms of wall time (bench/list_files). On the VM this was
//   measured on, a page fault costs ~13 µs, so the large buffers (index entries, the listed
//   entries) are mapped in one call each (prefault.hpp), and git's index file is mapped
//   rather than read into a zero-filled string.
// - "Racily clean" entries (modified at or after the index was written, or smudged to size 0 by
//   git when it found one modified) may have changed without their stat data showing it: like
//   git and libgit2, we hash them (through the clean filters) to decide. Any other stat
//   difference means "changed": the entry gets blob_id "" and its stat data, and the index's
//   own stat cache or read() decides — libgit2 hashed those on every run until git refreshed
//   its index.
// - Untracked files: one walk of the folders (getdents64's d_type, no lstat) that skips
//   `.git`, `.kasava`, submodules and, before entering them, untracked folders that are ignored
//   or hold their own repository. Ignore rules are asked of libgit2 only for what is untracked:
//   a folder without tracked files before it is entered, a file found untracked, and the
//   folders above such a file once each. A tree where everything is tracked costs no lookup.
//   A lookup re-reads the stat data of every .gitignore above its path, so an untracked tree
//   that needs more than a few hundred of them is handed to libgit2's status instead, which
//   keeps a stack of ignore files while it walks.
//   With the untracked cache (untracked_cache.hpp) of an earlier listing, a folder whose stat
//   data is the cached one is not read: its folders are known from the index and walked
//   (one fstatat each instead of an open, two getdents64 and a close).
// Changed and untracked files get blob_id "" and read() hashes what it reads, applying the
// repository's clean filters (CRLF, ident) like `git hash-object` so that an edit that is
// reverted gets its index id back. libgit2 is asked for the filters only where one could
// apply (see filters_may_apply): its first answer costs a full read of git's index.
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <algorithm>
#include <array>
#include <atomic>
#include <cstring>
#include <chrono>
#include <exception>
#include <iterator>
#include <limits>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <utility>

#include "core/repo/detail.hpp"
#include "core/repo/git_index_file.hpp"
#include "core/repo/prefault.hpp"
#include "core/repo/untracked_cache.hpp"
#include "core/util/parallel.hpp"
#include "core/util/strings.hpp"

namespace kasava::repo::detail {

namespace {

constexpr std::uint32_t k_mode_type_mask = 0170000;
constexpr std::uint32_t k_mode_symlink = 0120000;
constexpr std::uint32_t k_mode_gitlink = 0160000;
/// Threads for the lstat calls of tracked files. On the 2-core machine this was measured on,
/// listing 10,000 files took 38 ms of wall time with two instead of 56 ms with one (same CPU).
constexpr unsigned k_stat_threads = 2;
/// Entries a stat thread claims at a time.
constexpr std::size_t k_stat_chunk = 256;
/// Ignore lookups one untracked folder may cost before libgit2's status walks it instead: a
/// lookup re-checks every .gitignore above the path (~3 stat calls), status keeps a stack of
/// them but first loads git's whole index (~15 ms for 10,000 entries), so it pays only for
/// large untracked trees.
constexpr std::size_t k_lookups_before_status = 500;
/// Folders modified this recently are not put in the untracked cache (see UntrackedWalk::run):
/// as the index's margin for files.
constexpr std::chrono::seconds k_racy_folder_margin{2};

/// Fills kind, size and stat data from an lstat result; false when it is not a file or link.
bool describe(const struct stat& info, SourceEntry& entry) {
  if (S_ISREG(info.st_mode)) {
    entry.kind = EntryKind::regular;
    entry.stat = file_stat_of(info);
  } else if (S_ISLNK(info.st_mode)) {
    entry.kind = EntryKind::symlink;
  } else {
    return false;
  }
  entry.size = static_cast<std::uint64_t>(info.st_size);
  return true;
}

/// Fills kind and size from the file on disk; false when it is gone or not a file or link.
bool describe_from_disk(const std::string& full_path, SourceEntry& entry) {
  struct stat info {};
  if (::lstat(full_path.c_str(), &info) != 0) return false;
  return describe(info, entry);
}

/// The two hex digits of every byte value: one lookup per byte of an id (10,000 ids per
/// listing of a large tree).
constexpr std::array<std::array<char, 2>, 256> k_hex_pairs = [] {
  constexpr char k_digits[] = "0123456789abcdef";
  std::array<std::array<char, 2>, 256> pairs{};
  for (std::size_t byte = 0; byte < 256; ++byte) {
    pairs[byte] = {k_digits[byte >> 4], k_digits[byte & 15]};
  }
  return pairs;
}();

std::string hex_of(const std::uint8_t (&id)[20]) {
  char text[40];
  for (std::size_t i = 0; i < 20; ++i) std::memcpy(text + 2 * i, k_hex_pairs[id[i]].data(), 2);
  return std::string(text, sizeof text);
}

/// How an index entry's stat data compares with the file's, by git's rules.
enum class StatMatch : std::uint8_t {
  same,     ///< unchanged: the index's blob id is the file's
  racy,     ///< the same, but written too close to the index to trust: hash to decide
  changed,  ///< something differs: the content must be read to know its id
};

StatMatch compare_stat(const GitIndexEntry& entry, const struct stat& info,
                       std::int64_t index_mtime_ns) {
  const auto u32 = [](auto value) { return static_cast<std::uint32_t>(value); };
  // A changed exec bit leaves the content, and so the id, as it is: only the type matters.
  if (entry.mtime_s != u32(info.st_mtim.tv_sec) || entry.mtime_ns != u32(info.st_mtim.tv_nsec) ||
      entry.ctime_s != u32(info.st_ctim.tv_sec) || entry.ctime_ns != u32(info.st_ctim.tv_nsec) ||
      entry.ino != u32(info.st_ino) || entry.uid != u32(info.st_uid) ||
      entry.gid != u32(info.st_gid)) {
    return StatMatch::changed;
  }
  // git writes size 0 for an entry whose stat data matched but whose content did not when it
  // wrote a racy index ("smudged"), so that stat data alone never passes it again; hash it to
  // be sure. Any other size difference is a change.
  if (entry.size != u32(info.st_size))
    return entry.size == 0 ? StatMatch::racy : StatMatch::changed;
  const std::int64_t mtime_ns =
      static_cast<std::int64_t>(info.st_mtim.tv_sec) * 1000000000 + info.st_mtim.tv_nsec;
  // Modified at or after the index was written: a later edit within the file system's
  // timestamp granularity would leave the same stat data (git's "racy clean").
  if (index_mtime_ns != 0 && mtime_ns >= index_mtime_ns) return StatMatch::racy;
  return StatMatch::same;
}

/// What a stat thread decided for one index entry; the calling thread finishes what needs
/// libgit2 or the entries before it.
enum class Outcome : std::uint8_t {
  dropped,     ///< not listed: deleted, not a file or link, skip-worktree, or excluded
  listed,      ///< its SourceEntry is complete
  conflicted,  ///< a stage of a conflict: listed once, at its first listed stage
  racy,        ///< regular, racily clean: listed with the index's id if hashing confirms it
};

/// Index entries read through libgit2, for index files our reader declines (split index, …).
std::optional<GitIndexFile> index_from_libgit2(git_repository* repository,
                                               const std::string& index_path, std::string& error) {
  git_index* raw_index = nullptr;
  if (git_repository_index(&raw_index, repository) < 0 || git_index_read(raw_index, 0) < 0) {
    if (raw_index != nullptr) git_index_free(raw_index);
    error = last_git_error();
    return std::nullopt;
  }
  const IndexHandle index(raw_index);
  GitIndexFile file;
  const std::size_t count = git_index_entrycount(index.get());
  file.entries.reserve(count);
  for (std::size_t i = 0; i < count; ++i) {
    const git_index_entry* item = git_index_get_byindex(index.get(), i);
    if (item == nullptr) continue;
    GitIndexEntry entry;
    entry.path = file.paths.add(item->path);
    std::copy(std::begin(item->id.id), std::end(item->id.id), std::begin(entry.id));
    entry.mode = item->mode;
    entry.ctime_s = static_cast<std::uint32_t>(item->ctime.seconds);
    entry.ctime_ns = item->ctime.nanoseconds;
    entry.mtime_s = static_cast<std::uint32_t>(item->mtime.seconds);
    entry.mtime_ns = item->mtime.nanoseconds;
    entry.dev = item->dev;
    entry.ino = item->ino;
    entry.uid = item->uid;
    entry.gid = item->gid;
    entry.size = item->file_size;
    entry.stage = static_cast<std::uint8_t>(git_index_entry_stage(item));
    entry.skip_worktree = (item->flags_extended & GIT_INDEX_ENTRY_SKIP_WORKTREE) != 0;
    entry.intent_to_add = (item->flags_extended & GIT_INDEX_ENTRY_INTENT_TO_ADD) != 0;
    file.entries.push_back(std::move(entry));
  }
  struct stat info {};
  if (::stat(index_path.c_str(), &info) == 0) file.mtime_ns = file_stat_of(info).mtime_ns;
  return file;
}

/// The tracked files as SourceEntry values, one per index entry, each with its Outcome. The
/// lstat calls and the entries' strings (a path and a 40-digit id each: two allocations) are
/// made on k_stat_threads threads; the calling thread is one of them, after `before` returns:
/// it does the directory walk meanwhile.
struct TrackedFiles {
  std::vector<SourceEntry> entries;
  std::unique_ptr<Outcome[]> outcomes;
};

/// What one index entry is on disk now (see list_locked for the rules it follows).
Outcome describe_tracked(const GitIndexEntry& item, int base_fd, std::string& path,
                         std::size_t prefix, std::int64_t index_mtime_ns, SourceEntry& entry) {
  // A sparse checkout leaves skip-worktree files off disk: they are not part of the tree.
  if (item.skip_worktree || is_excluded_path(item.path)) return Outcome::dropped;
  // A conflict has up to three stages of one path, adjacent in the index: listed once.
  const Outcome listed = item.stage != 0 ? Outcome::conflicted : Outcome::listed;
  const std::uint32_t type = item.mode & k_mode_type_mask;
  if (type == k_mode_gitlink) {
    entry.path = item.path;
    entry.kind = EntryKind::submodule;
    return listed;
  }
  path.resize(prefix);
  path += item.path;
  struct stat info;
  // Deleted from the work tree, or now a directory or a special file: not listed.
  if (::fstatat(base_fd, path.c_str(), &info, AT_SYMLINK_NOFOLLOW) != 0) return Outcome::dropped;
  if (S_ISLNK(info.st_mode)) {
    // A link's id is its target text's; read() hashes the target's content instead, so that
    // the id changes when the target does.
    entry.kind = EntryKind::symlink;
  } else if (S_ISREG(info.st_mode)) {
    entry.kind = EntryKind::regular;
    entry.stat = file_stat_of(info);
  } else {
    return Outcome::dropped;
  }
  entry.path = item.path;
  entry.size = static_cast<std::uint64_t>(info.st_size);
  // Changed files keep "" and their stat data; so do conflicts, `git add -N` entries and
  // files that were links in the index.
  if (entry.kind != EntryKind::regular || type == k_mode_symlink || item.stage != 0 ||
      item.intent_to_add) {
    return listed;
  }
  switch (compare_stat(item, info, index_mtime_ns)) {
    case StatMatch::same:
      // As before: ids known from the index come without stat data (the index's own stat
      // cache is for files kasava read).
      entry.blob_id = hex_of(item.id);
      entry.stat = {};
      return listed;
    case StatMatch::racy:
      return Outcome::racy;
    case StatMatch::changed:
      return listed;
  }
  return listed;
}

template <typename Before>
TrackedFiles list_tracked(const std::string& root, const std::vector<GitIndexEntry>& items,
                          std::int64_t index_mtime_ns, Before before) {
  TrackedFiles tracked;
  // Constructed here (one pass over ~1 MB for 10,000 entries) so that the threads can fill
  // them in place; the outcomes are not initialised: each is written by its thread.
  tracked.entries.reserve(items.size());
  prefault_for_writing(tracked.entries.data(), items.size() * sizeof(SourceEntry));
  tracked.entries.resize(items.size());
  tracked.outcomes.reset(new Outcome[items.size()]);
  // Paths relative to the root's descriptor: the kernel then walks only the path's own
  // components, not the root's as well (3 instead of 6 for the benchmark's pkg000/mod0/x.c).
  const int root_fd = ::open(root.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
  const std::string prefix = root_fd >= 0 ? std::string() : root + "/";
  const int base_fd = root_fd >= 0 ? root_fd : AT_FDCWD;
  std::atomic<std::size_t> next{0};
  std::atomic<bool> stop{false};  // set by util::run_threads when a thread throws
  const auto work = [&] {
    std::string path = prefix;
    while (!stop) {
      const std::size_t begin = next.fetch_add(k_stat_chunk);
      if (begin >= items.size()) return;
      const std::size_t end = std::min(items.size(), begin + k_stat_chunk);
      for (std::size_t i = begin; i < end; ++i) {
        tracked.outcomes[i] = describe_tracked(items[i], base_fd, path, prefix.size(),
                                               index_mtime_ns, tracked.entries[i]);
      }
    }
  };
  const unsigned threads = items.size() > k_stat_chunk ? k_stat_threads : 1;
  try {
    util::run_threads(
        threads,
        [&](unsigned thread) {
          if (thread == 0) before();
          work();
        },
        &stop);
  } catch (...) {
    if (root_fd >= 0) ::close(root_fd);
    throw;
  }
  if (root_fd >= 0) ::close(root_fd);
  return tracked;
}

const char* status_path(const git_status_entry& status) {
  const git_diff_delta* delta = status.index_to_workdir;
  if (delta == nullptr) return nullptr;
  return delta->new_file.path ? delta->new_file.path : delta->old_file.path;
}

/// The untracked, not ignored files of a work tree: a walk of its directories against the
/// sorted paths of git's index. Uses libgit2 (ignore rules) on the calling thread only.
class UntrackedWalk {
public:
  /// `known`: the untracked cache of an earlier listing, trusted only if its tracked paths
  /// are these; `learnt` receives this listing's.
  /// `status_reads_index`: false when libgit2 cannot read git's index (a split index), so
  /// that large untracked trees are walked with lookups rather than handed to its status.
  UntrackedWalk(git_repository* repository, const std::string& root,
                const std::vector<GitIndexEntry>& entries, const UntrackedCache& known,
                UntrackedCache& learnt, bool status_reads_index)
      : m_repository(repository), m_root(root), m_learnt(learnt),
        m_lookup_budget(status_reads_index ? k_lookups_before_status
                                           : std::numeric_limits<std::size_t>::max()) {
    m_tracked.reserve(entries.size());
    prefault_for_writing(m_tracked.data(), entries.size() * sizeof(std::string_view));
    TrackedPathsDigest digest;
    for (const GitIndexEntry& entry : entries) {
      const bool gitlink = (entry.mode & k_mode_type_mask) == k_mode_gitlink;
      m_tracked.emplace_back(entry.path);
      if (gitlink) m_gitlinks.emplace_back(entry.path);
      digest.add(entry.path, gitlink);
    }
    m_learnt = UntrackedCache{};
    m_learnt.tracked_digest = digest.value();
    m_learnt.folders.reserve(known.folders.size());  // mostly the same folders
    if (known.tracked_digest == digest.value()) m_known = &known;
    // Git keeps its index sorted; a damaged one must not make the lookups below wrong.
    if (!std::is_sorted(m_tracked.begin(), m_tracked.end())) {
      std::sort(m_tracked.begin(), m_tracked.end());
    }
    std::sort(m_gitlinks.begin(), m_gitlinks.end());
  }

  /// Untracked entries, sorted by path.
  std::vector<SourceEntry> run() {
    // Folders are opened relative to the root's descriptor, as the tracked files are stat'ed;
    // by their full path if it cannot be had.
    m_root_fd = ::open(m_root.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (m_root_fd < 0) m_prefix = m_root + "/";
    // A folder changed within the file system's timestamp granularity of this moment could
    // change again and keep its mtime: such folders are read again next time. (A folder that
    // did not change for longer gets a newer mtime from any change to its entries.)
    m_racy_from_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(
                         (std::chrono::system_clock::now() - k_racy_folder_margin)
                             .time_since_epoch())
                         .count();
    m_frames.push_back(Frame{"", Ignored::no});
    try {
      walk("", Range{m_tracked.begin(), m_tracked.end()});
    } catch (...) {
      if (m_root_fd >= 0) ::close(m_root_fd);
      throw;
    }
    if (m_root_fd >= 0) ::close(m_root_fd);
    std::sort(m_found.begin(), m_found.end(),
              [](const SourceEntry& a, const SourceEntry& b) { return a.path < b.path; });
    std::sort(m_learnt.folders.begin(), m_learnt.folders.end(),
              [](const FolderStamp& a, const FolderStamp& b) { return a.path < b.path; });
    return std::move(m_found);
  }

private:
  enum class Ignored : std::uint8_t { unknown, no, yes };
  /// A directory being walked: its path with a trailing '/' ("" for the root), and whether it
  /// is ignored (asked only when an untracked file turns up below it).
  struct Frame {
    std::string path;
    Ignored ignored;
  };
  /// The index paths under the folder being walked (a folder's tracked files are adjacent in
  /// the sorted index), so that each lookup searches a few entries rather than all.
  using Iterator = std::vector<std::string_view>::const_iterator;
  struct Range {
    Iterator begin, end;
  };

  /// One folder's entries: names packed in one string, so that a file costs no allocation.
  struct Child {
    std::uint32_t offset, length;
    unsigned char type;
  };

  /// `relative` is "" or ends with '/'; `tracked` holds the index paths that start with it.
  void walk(const std::string& relative, Range tracked) {
    // Folders with tracked files are stat'ed before they are read, for the untracked cache.
    std::optional<FileStat> stamp;
    if (tracked.begin != tracked.end && m_root_fd >= 0) {
      struct stat info {};
      if (::fstatat(m_root_fd, relative.empty() ? "." : relative.c_str(), &info,
                    AT_SYMLINK_NOFOLLOW) == 0 &&
          S_ISDIR(info.st_mode)) {
        stamp = file_stat_of(info);
        if (m_known != nullptr) {
          const FileStat* known = m_known->find(relative);
          if (known != nullptr && *known == *stamp) {
            m_learnt.folders.push_back(FolderStamp{relative, *stamp});
            walk_unchanged(relative, tracked);
            return;
          }
        }
      }
    }
    std::vector<Child> children;
    std::string names;
    {
      // getdents64 straight into a buffer (for_each_folder_entry): on a machine where a system
      // call costs microseconds, opendir's fstat per folder is measurable for 1,000 folders.
      const std::string path = m_prefix + relative;
      const int fd =
          ::openat(m_root_fd >= 0 ? m_root_fd : AT_FDCWD, path.empty() ? "." : path.c_str(),
                   O_RDONLY | O_DIRECTORY | O_CLOEXEC);
      if (fd < 0) return;  // unreadable or vanished: git skips it too
      for_each_folder_entry(fd, m_buffer.data(), m_buffer.size(), [&](const dirent64& item, std::string_view name) {
        children.push_back(Child{static_cast<std::uint32_t>(names.size()),
                                 static_cast<std::uint32_t>(name.size()), item.d_type});
        names += name;
      });
      ::close(fd);
    }
    // Whether every entry is a tracked file or a folder with tracked files (or one that is
    // never listed: .git, .kasava, special files).
    bool only_tracked = true;
    std::string path;
    for (const Child& child : children) {
      // Over budget: the caller hands this untracked tree to status, stop walking it.
      if (m_region_lookups && *m_region_lookups > m_lookup_budget) return;
      path.assign(relative);
      path.append(names, child.offset, child.length);
      unsigned char type = child.type;
      if (type == DT_UNKNOWN) {
        struct stat info {};
        if (::lstat((m_root + "/" + path).c_str(), &info) != 0) continue;
        type = S_ISDIR(info.st_mode)   ? DT_DIR
               : S_ISREG(info.st_mode) ? DT_REG
               : S_ISLNK(info.st_mode) ? DT_LNK
                                       : DT_UNKNOWN;
      }
      if (type == DT_DIR) {
        if (!enter(path, tracked)) only_tracked = false;
      } else if ((type == DT_REG || type == DT_LNK) &&
                 !std::binary_search(tracked.begin, tracked.end, std::string_view(path))) {
        only_tracked = false;
        consider_file(path);
      }
    }
    if (stamp && only_tracked && stamp->mtime_ns < m_racy_from_ns) {
      m_learnt.folders.push_back(FolderStamp{relative, *stamp});
    }
  }

  /// A folder the untracked cache vouches for: its entries are the tracked files and folders
  /// in `tracked`, so only the folders are walked, without reading this one.
  void walk_unchanged(const std::string& relative, Range tracked) {
    std::string path;
    for (Iterator at = tracked.begin; at != tracked.end;) {
      const std::string_view rest = at->substr(relative.size());
      const std::size_t slash = rest.find('/');
      if (slash == std::string_view::npos) {  // a file (or submodule) of this folder
        ++at;
        continue;
      }
      path.assign(relative);
      path.append(rest.substr(0, slash));
      at = enter_tracked(path, Range{at, tracked.end});
    }
  }

  /// Walks the folder `path` (no trailing '/') whose tracked paths start at `tracked.begin`,
  /// unless it is a submodule or never listed; returns the end of its tracked paths. Both
  /// walks enter folders with tracked files here.
  Iterator enter_tracked(std::string path, Range tracked) {
    path += '0';
    const Iterator below_end = std::lower_bound(tracked.begin, tracked.end, std::string_view(path));
    path.pop_back();
    if (std::binary_search(m_gitlinks.begin(), m_gitlinks.end(), std::string_view(path))) {
      return below_end;  // a submodule: listed from the index, never entered
    }
    const std::string_view name = std::string_view(path).substr(path.rfind('/') + 1);
    if (name == ".git" || name == ".kasava") return below_end;  // never walked, as in walk()
    path += '/';
    m_frames.push_back(Frame{path, Ignored::unknown});
    walk(path, Range{tracked.begin, below_end});
    m_frames.pop_back();
    return below_end;
  }

  /// Walks the folder `path` (no trailing '/') found in a folder whose tracked paths are
  /// `parent`; true when it is a submodule or holds tracked files.
  bool enter(std::string path, Range parent) {
    if (std::binary_search(m_gitlinks.begin(), m_gitlinks.end(), std::string_view(path)))
      return true;  // a submodule: listed from the index, never entered
    // Index paths under "dir/" sort from "dir/" up to "dir0" ('0' follows '/').
    path += '0';
    const Iterator below_end = std::lower_bound(parent.begin, parent.end, std::string_view(path));
    path.back() = '/';
    const Iterator below = std::lower_bound(parent.begin, below_end, std::string_view(path));
    if (below != below_end) {
      path.pop_back();
      enter_tracked(std::move(path), Range{below, below_end});
      return true;
    }
    // Untracked: decide before entering, so that an ignored build or node_modules folder costs
    // one lookup, not a walk.
    if (ancestors_ignored() || is_ignored(path)) return false;
    struct stat info {};
    if (::lstat((m_root + "/" + path + ".git").c_str(), &info) == 0) {
      // Its own repository: like a submodule, not ours to enter (git status shows it as "dir/").
      SourceEntry entry;
      path.pop_back();
      entry.path = std::move(path);
      entry.kind = EntryKind::submodule;
      m_found.push_back(std::move(entry));
      return false;
    }
    if (m_region_lookups) {  // inside a larger untracked folder: its budget counts
      m_frames.push_back(Frame{path, Ignored::no});
      walk(path, Range{below, below});
      m_frames.pop_back();
      return false;
    }
    // The top of an untracked tree: walk it with lookups up to a budget, else ask status.
    const std::size_t found_before = m_found.size();
    std::size_t lookups = 0;
    m_region_lookups = &lookups;
    m_frames.push_back(Frame{path, Ignored::no});
    walk(path, Range{below, below});
    m_frames.pop_back();
    m_region_lookups = nullptr;
    if (lookups > m_lookup_budget) {
      m_found.resize(found_before);
      untracked_by_status(path);
    }
    return false;
  }

  /// libgit2's status of one untracked folder (`prefix` ends with '/'): its untracked files
  /// that are not ignored, and folders holding their own repository as "dir/".
  void untracked_by_status(const std::string& prefix) {
    git_status_options options;
    git_status_options_init(&options, GIT_STATUS_OPTIONS_VERSION);
    options.show = GIT_STATUS_SHOW_WORKDIR_ONLY;
    options.flags = GIT_STATUS_OPT_INCLUDE_UNTRACKED | GIT_STATUS_OPT_RECURSE_UNTRACKED_DIRS |
                    GIT_STATUS_OPT_EXCLUDE_SUBMODULES | GIT_STATUS_OPT_DISABLE_PATHSPEC_MATCH;
    char* pathspec[] = {const_cast<char*>(prefix.c_str())};
    options.pathspec = {pathspec, 1};
    git_status_list* raw_status = nullptr;
    if (git_status_list_new(&raw_status, m_repository, &options) < 0) {
      throw std::runtime_error("reading the status of '" + prefix + "': " + last_git_error());
    }
    const StatusListHandle status_list(raw_status);
    const std::size_t count = git_status_list_entrycount(status_list.get());
    for (std::size_t i = 0; i < count; ++i) {
      const git_status_entry* status = git_status_byindex(status_list.get(), i);
      const char* raw_path = status ? status_path(*status) : nullptr;
      if (raw_path == nullptr || !(status->status & GIT_STATUS_WT_NEW)) continue;
      std::string path = raw_path;
      // The pathspec is a list of paths here, but keep to the folder whatever libgit2 does.
      if (path.compare(0, prefix.size(), prefix) != 0 || is_excluded_path(path)) continue;
      SourceEntry entry;
      if (path.back() == '/') {
        path.pop_back();
        entry.kind = EntryKind::submodule;
      } else if (!describe_from_disk(m_root + "/" + path, entry)) {
        continue;
      }
      entry.path = std::move(path);
      m_found.push_back(std::move(entry));
    }
  }

  void consider_file(const std::string& path) {
    if (ancestors_ignored() || is_ignored(path)) return;
    SourceEntry entry;
    if (!describe_from_disk(m_root + "/" + path, entry)) return;
    entry.path = path;
    m_found.push_back(std::move(entry));
  }

  /// Whether a folder being walked is ignored; asked of libgit2 top-down, once per folder.
  /// Git never looks inside an ignored folder for untracked files, whatever its rules say
  /// about them; tracked files inside it are listed from the index all the same.
  bool ancestors_ignored() {
    for (Frame& frame : m_frames) {
      if (frame.ignored == Ignored::unknown)
        frame.ignored = is_ignored(frame.path) ? Ignored::yes : Ignored::no;
      if (frame.ignored == Ignored::yes) return true;
    }
    return false;
  }

  /// libgit2's answer for a path (a folder when it ends with '/'): .gitignore files on the
  /// way, .git/info/exclude and core.excludesFile.
  bool is_ignored(const std::string& path) {
    if (m_region_lookups) ++*m_region_lookups;
    int ignored = 0;
    if (git_ignore_path_is_ignored(&ignored, m_repository, path.c_str()) < 0) {
      throw std::runtime_error("checking whether '" + path + "' is ignored: " + last_git_error());
    }
    return ignored != 0;
  }

  git_repository* m_repository;
  std::string m_root;
  std::vector<std::string_view> m_tracked;
  std::vector<std::string_view> m_gitlinks;
  std::vector<Frame> m_frames;
  std::vector<SourceEntry> m_found;
  /// getdents64's buffer, reused by every folder (a folder's entries are copied out before its
  /// subfolders are walked).
  alignas(dirent64) std::array<char, 32768> m_buffer{};
  /// Lookups made in the untracked tree being walked, nullptr outside one.
  std::size_t* m_region_lookups = nullptr;
  /// The untracked cache to trust (nullptr: none, or one for other tracked paths), and the
  /// one this walk learns: every folder it found holding only tracked entries.
  const UntrackedCache* m_known = nullptr;
  UntrackedCache& m_learnt;
  /// Lookups an untracked tree may take before libgit2's status walks it instead.
  std::size_t m_lookup_budget;
  /// Folders whose mtime is this or later are too recent to be cached.
  std::int64_t m_racy_from_ns = 0;
  /// The root, opened with O_PATH by run(); -1 when that failed, and m_prefix is the root's
  /// path with a '/' then ("" otherwise): what goes before a relative path to open it.
  int m_root_fd = -1;
  std::string m_prefix;
};

class WorkTreeSource final : public Source {
public:
  WorkTreeSource(RepositoryHandle repository, const std::string& root)
      : m_repository(std::move(repository)), m_root(root), m_real_root(canonical_root(root)) {}

  const std::string& root() const override { return m_root; }
  bool is_git() const override { return true; }

  std::string commit_id() const override {
    std::lock_guard lock(m_mutex);
    git_oid oid;
    // Fails on an unborn HEAD (no commits yet): that is "no commit", not an error.
    if (git_reference_name_to_id(&oid, m_repository.get(), "HEAD") < 0) return {};
    return oid_to_hex(oid);
  }

  util::Result<std::vector<SourceEntry>> list() override {
    try {
      std::lock_guard lock(m_mutex);
      return list_locked();
    } catch (const std::exception& exception) {
      return util::Error{"listing '" + m_root + "': " + exception.what()};
    }
  }

  void use_untracked_cache(std::string_view text) override {
    std::lock_guard lock(m_mutex);
    m_known_cache = UntrackedCache::decode(text);
    m_known_text = text;
  }

  std::string untracked_cache() const override {
    std::lock_guard lock(m_mutex);
    if (m_learnt_cache.folders.empty()) return {};
    // Mostly what the listing was given: that text, not written again.
    if (m_learnt_cache == m_known_cache) return m_known_text;
    return m_learnt_cache.encode();
  }

  util::Result<std::string> read(SourceEntry& entry) override {
    if (entry.kind == EntryKind::submodule) return util::Error{"submodule"};
    util::Result<std::string> content = read_from_disk(m_root, m_real_root, entry.path);
    if (!content || !entry.blob_id.empty()) return content;
    try {
      entry.blob_id = entry.kind == EntryKind::symlink ? blob_id_of(*content)
                                                       : hash_for_odb(entry.path, *content);
    } catch (const std::exception& exception) {
      return util::Error{exception.what()};
    }
    return content;
  }

private:
  util::Result<std::vector<SourceEntry>> list_locked() {
    const std::string index_path = std::string(git_repository_path(m_repository.get())) + "index";
    std::optional<GitIndexFile> index = read_git_index(index_path);
    if (!index) {
      std::string error;
      index = index_from_libgit2(m_repository.get(), index_path, error);
      if (!index) return util::Error{"reading the index of '" + m_root + "': " + error};
    }
    const std::vector<GitIndexEntry>& items = index->entries;
    m_index_has_attributes = std::any_of(items.begin(), items.end(), is_attributes_entry);
    if (index->split || m_gave_attributes_index) give_libgit2_attributes(*index);

    std::vector<SourceEntry> untracked;
    TrackedFiles listing = list_tracked(m_root, items, index->mtime_ns, [&] {
      untracked = UntrackedWalk(m_repository.get(), m_root, items, m_known_cache, m_learnt_cache,
                                !index->split)
                      .run();
    });

    // Keep the listed entries, in place: with nothing dropped, nothing moves.
    std::vector<SourceEntry>& tracked = listing.entries;
    std::size_t kept = 0;
    for (std::size_t i = 0; i < items.size(); ++i) {
      SourceEntry& entry = tracked[i];
      switch (listing.outcomes[i]) {
        case Outcome::dropped:
          continue;
        case Outcome::listed:
          break;
        case Outcome::conflicted:
          if (kept > 0 && tracked[kept - 1].path == entry.path) continue;
          break;
        case Outcome::racy:
          // Modified too close to the index's writing to trust its stat data: hash to decide.
          if (std::string id = hex_of(items[i].id); current_id(entry) == id) {
            entry.blob_id = std::move(id);
            entry.stat = {};
          }
          break;
      }
      if (kept != i) tracked[kept] = std::move(entry);
      ++kept;
    }
    tracked.resize(kept);

    // Both lists are in path order (bytewise, as git sorts its index): merge them.
    if (untracked.empty()) return std::move(tracked);
    std::vector<SourceEntry> entries;
    entries.reserve(tracked.size() + untracked.size());
    std::merge(std::make_move_iterator(tracked.begin()), std::make_move_iterator(tracked.end()),
               std::make_move_iterator(untracked.begin()), std::make_move_iterator(untracked.end()),
               std::back_inserter(entries),
               [](const SourceEntry& a, const SourceEntry& b) { return a.path < b.path; });
    return entries;
  }

  static bool is_attributes_entry(const GitIndexEntry& item) {
    const std::string_view path = item.path;
    constexpr std::string_view name = ".gitattributes";
    return path.size() >= name.size() && path.substr(path.size() - name.size()) == name &&
           (path.size() == name.size() || path[path.size() - name.size() - 1] == '/');
  }

  /// libgit2 reads attributes (for clean filters) from git's index too, and cannot read a
  /// split index: it would fail, and the filters be skipped. So for a split index it is given
  /// an index in memory holding the attributes files of ours, all it reads of it here; for
  /// one that is no longer split, its own again.
  void give_libgit2_attributes(const GitIndexFile& index) {
    if (!index.split) {
      git_repository_set_index(m_repository.get(), nullptr);  // read from disk when asked
      m_gave_attributes_index = false;
      return;
    }
    git_index* raw_index = nullptr;
    if (git_index_new(&raw_index) < 0) return;
    const IndexHandle attributes(raw_index);
    for (const GitIndexEntry& item : index.entries) {
      if (item.stage != 0 || !is_attributes_entry(item)) continue;
      const std::string path(item.path);
      git_index_entry entry{};
      entry.path = path.c_str();
      entry.mode = item.mode;
      std::copy(std::begin(item.id), std::end(item.id), std::begin(entry.id.id));
      if (git_index_add(attributes.get(), &entry) < 0) return;
    }
    if (git_repository_set_index(m_repository.get(), attributes.get()) == 0) {
      m_gave_attributes_index = true;
    }
  }

  /// The id of a racily clean file's current content, "" when it cannot be read.
  std::string current_id(const SourceEntry& entry) {
    util::Result<std::string> content = read_from_disk(m_root, m_real_root, entry.path);
    if (!content) return {};
    return hash_for_odb_locked(entry.path, *content);
  }

  /// The blob id git would store for this content at this path (after clean filters).
  std::string hash_for_odb(const std::string& path, const std::string& content) {
    std::lock_guard lock(m_mutex);
    return hash_for_odb_locked(path, content);
  }

  std::string hash_for_odb_locked(const std::string& path, const std::string& content) {
    if (!filters_may_apply(path)) return blob_id_of(content);
    git_filter_list* raw_filters = nullptr;
    if (git_filter_list_load(&raw_filters, m_repository.get(), nullptr, path.c_str(),
                             GIT_FILTER_TO_ODB, GIT_FILTER_DEFAULT) < 0 ||
        raw_filters == nullptr) {
      return blob_id_of(content);
    }
    const FilterListHandle filters(raw_filters);
    Buffer filtered;
    if (git_filter_list_apply_to_buffer(filtered.get(), filters.get(), content.data(),
                                        content.size()) < 0) {
      return blob_id_of(content);
    }
    return blob_id_of(std::string_view(filtered.get()->ptr, filtered.get()->size));
  }

  /// Whether a clean filter may apply to `path`. Filters come from attributes (text, eol,
  /// ident, filter drivers) and core.autocrlf; asking libgit2 loads git's whole index the
  /// first time, since attributes may come from there (57M instructions for 10,000 files:
  /// most of a one-file refresh). Where nothing could name a filter — core.autocrlf false or
  /// unset, no attributes file in git's index, on the path's way down the work tree, in
  /// info/attributes, core.attributesFile, or the user's or the system's git folder — the
  /// content is its own clean form, as libgit2 would find.
  bool filters_may_apply(const std::string& path) {
    if (m_index_has_attributes) return true;
    if (!m_repository_filters) m_repository_filters = repository_filters_may_apply();
    if (*m_repository_filters) return true;
    struct stat info {};
    std::string folder = m_root + "/";
    for (std::size_t start = 0;;) {
      if (::lstat((folder + ".gitattributes").c_str(), &info) == 0) return true;
      const std::size_t slash = path.find('/', start);
      if (slash == std::string::npos) return false;
      folder.append(path, start, slash + 1 - start);
      start = slash + 1;
    }
  }

  /// The repository-wide sources of filters (see filters_may_apply); asked once.
  bool repository_filters_may_apply() const {
    git_config* raw_config = nullptr;
    if (git_repository_config_snapshot(&raw_config, m_repository.get()) < 0) return true;
    const ConfigHandle config(raw_config);
    git_config_entry* raw_entry = nullptr;
    if (git_config_get_entry(&raw_entry, config.get(), "core.autocrlf") == 0) {
      const ConfigEntryHandle entry(raw_entry);
      int enabled = 1;  // "input", or anything that is not a boolean: assume a filter
      if (git_config_parse_bool(&enabled, entry->value) < 0 || enabled != 0) return true;
    }
    if (git_config_get_entry(&raw_entry, config.get(), "core.attributesfile") == 0) {
      const ConfigEntryHandle entry(raw_entry);
      return true;
    }
    struct stat info {};
    const auto exists = [&](const std::string& file) { return ::stat(file.c_str(), &info) == 0; };
    if (exists(std::string(git_repository_commondir(m_repository.get())) + "info/attributes") ||
        exists(std::string(git_repository_path(m_repository.get())) + "info/attributes")) {
      return true;
    }
    // The folders libgit2 reads the user's (XDG: git/attributes) and the system's
    // (gitattributes) files from, each a list separated by ':'.
    for (const auto& [level, name] : {std::pair{GIT_CONFIG_LEVEL_XDG, "attributes"},
                                      std::pair{GIT_CONFIG_LEVEL_SYSTEM, "gitattributes"}}) {
      Buffer folders;
      if (git_libgit2_opts(GIT_OPT_GET_SEARCH_PATH, level, folders.get()) < 0) return true;
      const std::string_view list(folders.get()->ptr ? folders.get()->ptr : "", folders.get()->size);
      for (const std::string& folder : util::split(list, ':')) {
        if (!folder.empty() && exists(folder + "/" + name)) return true;
      }
    }
    return false;
  }

  RepositoryHandle m_repository;
  std::string m_root;
  std::string m_real_root;
  /// Set by each listing: whether git's index tracks a .gitattributes file.
  bool m_index_has_attributes = true;
  /// Whether libgit2 was given the attributes files of a split index (see
  /// give_libgit2_attributes).
  bool m_gave_attributes_index = false;
  std::optional<bool> m_repository_filters;
  /// The untracked cache given by use_untracked_cache(), and the one the last listing learnt.
  UntrackedCache m_known_cache;
  std::string m_known_text;
  UntrackedCache m_learnt_cache;
  // libgit2 objects must not be used from two threads at once; read() may be called from several.
  mutable std::mutex m_mutex;
};

}  // namespace

std::unique_ptr<Source> make_work_tree_source(RepositoryHandle repository,
                                              const std::string& root) {
  return std::make_unique<WorkTreeSource>(std::move(repository), root);
}

}  // namespace kasava::repo::detail
