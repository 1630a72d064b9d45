// Private to core/repo: the three Source implementations' factories and the disk helpers they
// share (exclusion of .git/.kasava, reading a file or a symlink that must stay inside the root).
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <system_error>

#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/repo/git_handles.hpp"
#include "core/repo/source.hpp"

namespace kasava::repo::detail {

/// True when a '/'-separated relative path has a `.git` or `.kasava` component: never listed.
bool is_excluded_path(std::string_view relative);

/// The stat data the index compares to tell an unchanged file (see SourceEntry::stat).
inline FileStat file_stat_of(const struct stat& info) {
  constexpr std::int64_t k_ns = 1000000000;
  return FileStat{static_cast<std::int64_t>(info.st_mtim.tv_sec) * k_ns + info.st_mtim.tv_nsec,
                  static_cast<std::int64_t>(info.st_ctim.tv_sec) * k_ns + info.st_ctim.tv_nsec,
                  static_cast<std::uint64_t>(info.st_ino)};
}

/// Gives `each` every entry of the open folder `fd` but ".", "..", ".git" and ".kasava"
/// (its name and d_type), read with getdents64 into `buffer` (32 KiB or so): opendir() would
/// add an fstat per folder. Stops at the end or at an error, keeping what was read, as
/// readdir does.
template <typename Each>
void for_each_folder_entry(int fd, char* buffer, std::size_t size, Each&& each) {
  for (;;) {
    const ssize_t filled = ::getdents64(fd, buffer, size);
    if (filled <= 0) return;
    for (ssize_t at = 0; at < filled;) {
      const auto* item = reinterpret_cast<const dirent64*>(buffer + at);
      at += item->d_reclen;
      const std::string_view name = item->d_name;
      if (name == "." || name == ".." || name == ".git" || name == ".kasava") continue;
      each(*item, name);
    }
  }
}

/// A system error's message in our style (lower-case first letter).
std::string error_text(const std::error_code& error);
std::string errno_text(int error_number);

/// The root with symlinks resolved, so that symlink targets can be compared with it.
std::string canonical_root(const std::string& root);

/// The content of `relative` under `root`. A symlink is followed only when its final target is
/// a regular file inside `real_root`; otherwise the error says why ("symlink leaves the
/// repository", "symlink loop", "dangling symlink", …). Errors carry no path: callers report
/// them as `path: reason`.
util::Result<std::string> read_from_disk(const std::string& root, const std::string& real_root,
                                         const std::string& relative);

/// A plain directory (no git): see directory_source.cpp.
std::unique_ptr<Source> make_directory_source(const std::string& root);

/// A git working tree as git sees it: see work_tree_source.cpp.
std::unique_ptr<Source> make_work_tree_source(RepositoryHandle repository, const std::string& root);

/// The tree of one commit of a git repository: see revision_source.cpp. Fails on an unknown
/// revision or an empty repository.
util::Result<std::unique_ptr<Source>> make_revision_source(RepositoryHandle repository,
                                                           const std::string& root,
                                                           const std::string& revision);

}  // namespace kasava::repo::detail
