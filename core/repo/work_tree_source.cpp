// A git working tree as git sees it: tracked files (from the index) plus untracked files that
// are not ignored, with their current contents.
//
// Why it is fast: one git_status call (index against work tree, which libgit2 answers from the
// stat data cached in the index) tells which tracked files changed. Every other tracked file
// takes its blob id straight from the index, so a no-change refresh reads no file content.
// Changed and untracked files get blob_id "" and read() hashes what it reads, applying the
// repository's clean filters (CRLF, ident) like `git hash-object` so that an edit that is
// reverted gets its index id back.
#include <sys/stat.h>
#include <algorithm>
#include <mutex>
#include <unordered_map>

#include "core/repo/detail.hpp"

namespace kasava::repo::detail {

namespace {

constexpr unsigned int k_changed_flags = GIT_STATUS_WT_MODIFIED | GIT_STATUS_WT_TYPECHANGE |
                                         GIT_STATUS_WT_RENAMED | GIT_STATUS_WT_UNREADABLE |
                                         GIT_STATUS_CONFLICTED;

/// Fills kind and size from the file on disk; false when it is gone or not a file or link.
bool describe_from_disk(const std::string& full_path, SourceEntry& entry) {
  struct stat info {};
  if (::lstat(full_path.c_str(), &info) != 0) return false;
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

const char* status_path(const git_status_entry& status) {
  const git_diff_delta* delta =
      status.index_to_workdir ? status.index_to_workdir : status.head_to_index;
  if (delta == nullptr) return nullptr;
  return delta->new_file.path ? delta->new_file.path : delta->old_file.path;
}

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
    git_status_options options;
    git_status_options_init(&options, GIT_STATUS_OPTIONS_VERSION);
    options.show = GIT_STATUS_SHOW_WORKDIR_ONLY;
    // Submodules are never entered, so asking for their status would only cost time.
    options.flags = GIT_STATUS_OPT_INCLUDE_UNTRACKED | GIT_STATUS_OPT_RECURSE_UNTRACKED_DIRS |
                    GIT_STATUS_OPT_EXCLUDE_SUBMODULES;
    git_status_list* raw_status = nullptr;
    if (git_status_list_new(&raw_status, m_repository.get(), &options) < 0) {
      return util::Error{"reading the status of '" + m_root + "': " + last_git_error()};
    }
    const StatusListHandle status_list(raw_status);

    std::unordered_map<std::string, unsigned int> changes;
    std::vector<std::string> untracked;
    const std::size_t status_count = git_status_list_entrycount(status_list.get());
    for (std::size_t i = 0; i < status_count; ++i) {
      const git_status_entry* status = git_status_byindex(status_list.get(), i);
      const char* path = status ? status_path(*status) : nullptr;
      if (path == nullptr) continue;
      if (status->status & GIT_STATUS_WT_NEW) {
        untracked.emplace_back(path);
      } else {
        changes[path] |= static_cast<unsigned int>(status->status);
      }
    }

    // The same index object status just refreshed from disk.
    git_index* raw_index = nullptr;
    if (git_repository_index(&raw_index, m_repository.get()) < 0) {
      return util::Error{"reading the index of '" + m_root + "': " + last_git_error()};
    }
    const IndexHandle index(raw_index);

    std::vector<SourceEntry> entries;
    const std::size_t index_count = git_index_entrycount(index.get());
    entries.reserve(index_count + untracked.size());
    for (std::size_t i = 0; i < index_count; ++i) {
      const git_index_entry* item = git_index_get_byindex(index.get(), i);
      if (item == nullptr || is_excluded_path(item->path)) continue;
      // A sparse checkout leaves skip-worktree files off disk: they are not part of the tree.
      if (item->flags_extended & GIT_INDEX_ENTRY_SKIP_WORKTREE) continue;
      const bool conflicted = git_index_entry_stage(item) != 0;
      // A conflict has up to three stages of one path, adjacent in the index: list it once.
      if (conflicted && !entries.empty() && entries.back().path == item->path) continue;

      unsigned int flags = 0;
      if (!changes.empty()) {
        if (const auto found = changes.find(item->path); found != changes.end())
          flags = found->second;
      }
      if (flags & GIT_STATUS_WT_DELETED) continue;

      SourceEntry entry;
      entry.path = item->path;
      if (item->mode == GIT_FILEMODE_COMMIT) {
        entry.kind = EntryKind::submodule;
      } else if (conflicted || (flags & k_changed_flags) ||
                 (item->flags_extended & GIT_INDEX_ENTRY_INTENT_TO_ADD)) {
        if (!describe_from_disk(m_root + "/" + entry.path, entry)) continue;
      } else if (item->mode == GIT_FILEMODE_LINK) {
        // The index holds the id of the link text; read() hashes the target's content instead,
        // so the id changes when the target does.
        entry.kind = EntryKind::symlink;
        entry.size = item->file_size;
      } else {
        entry.kind = EntryKind::regular;
        entry.size = item->file_size;
        entry.blob_id = oid_to_hex(item->id);
      }
      entries.push_back(std::move(entry));
    }

    for (std::string& path : untracked) {
      SourceEntry entry;
      if (!path.empty() && path.back() == '/') {
        // Status reports an untracked directory holding its own repository as "dir/": like a
        // submodule, it is not ours to enter.
        path.pop_back();
        entry.kind = EntryKind::submodule;
      } else if (!describe_from_disk(m_root + "/" + path, entry)) {
        continue;
      }
      if (is_excluded_path(path)) continue;
      entry.path = std::move(path);
      entries.push_back(std::move(entry));
    }

    std::sort(entries.begin(), entries.end(),
              [](const SourceEntry& a, const SourceEntry& b) { return a.path < b.path; });
    return entries;
  }

  /// The blob id git would store for this content at this path (after clean filters).
  std::string hash_for_odb(const std::string& path, const std::string& content) {
    std::lock_guard lock(m_mutex);
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

  RepositoryHandle m_repository;
  std::string m_root;
  std::string m_real_root;
  // libgit2 objects must not be used from two threads at once; read() may be called from several.
  mutable std::mutex m_mutex;
};

}  // namespace

std::unique_ptr<Source> make_work_tree_source(RepositoryHandle repository,
                                              const std::string& root) {
  return std::make_unique<WorkTreeSource>(std::move(repository), root);
}

}  // namespace kasava::repo::detail
