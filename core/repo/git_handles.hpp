// Private to core/repo: RAII handles for libgit2 objects, one-time library initialisation and
// the text of libgit2's last error. Nothing outside core/repo may include this (it pulls in
// git2.h).
#pragma once

#include <memory>
#include <string>

#include <git2.h>
#include <git2/sys/repository.h>

#include "core/repo/certificates.hpp"

namespace kasava::repo::detail {

/// Calls git_libgit2_init() exactly once per process (thread-safe). Every entry point of the
/// module calls it first. The library is never shut down: sources may live in statics, and
/// freeing libgit2 state before them would be worse than leaving it to process exit.
void ensure_libgit2();

/// The message of libgit2's last error on this thread, or `fallback` when there is none.
std::string last_git_error(const char* fallback = "unknown error");

/// 40 hex characters of an object id.
std::string oid_to_hex(const git_oid& oid);

/// A deleter calling one libgit2 free function, so each handle is a plain unique_ptr.
template <auto Free>
struct GitDeleter {
  template <typename T>
  void operator()(T* object) const noexcept {
    Free(object);
  }
};

template <typename T, auto Free>
using GitHandle = std::unique_ptr<T, GitDeleter<Free>>;

using RepositoryHandle = GitHandle<git_repository, git_repository_free>;
using IndexHandle = GitHandle<git_index, git_index_free>;
using StatusListHandle = GitHandle<git_status_list, git_status_list_free>;
using ObjectHandle = GitHandle<git_object, git_object_free>;
using CommitHandle = GitHandle<git_commit, git_commit_free>;
using TreeHandle = GitHandle<git_tree, git_tree_free>;
using TreeEntryHandle = GitHandle<git_tree_entry, git_tree_entry_free>;
using BlobHandle = GitHandle<git_blob, git_blob_free>;
using OdbHandle = GitHandle<git_odb, git_odb_free>;
using OdbObjectHandle = GitHandle<git_odb_object, git_odb_object_free>;
using FilterListHandle = GitHandle<git_filter_list, git_filter_list_free>;
using RemoteHandle = GitHandle<git_remote, git_remote_free>;
using ReferenceHandle = GitHandle<git_reference, git_reference_free>;
using ConfigHandle = GitHandle<git_config, git_config_free>;
using ConfigEntryHandle = GitHandle<git_config_entry, git_config_entry_free>;

/// A git_buf that libgit2 fills and this object disposes of.
class Buffer {
public:
  Buffer() = default;
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;
  ~Buffer() { git_buf_dispose(&m_buf); }

  git_buf* get() { return &m_buf; }
  std::string str() const { return m_buf.ptr ? std::string(m_buf.ptr, m_buf.size) : std::string(); }

private:
  git_buf m_buf = GIT_BUF_INIT;
};

/// Opens the repository containing `path` (searching upward). Returns libgit2's error code
/// (GIT_ENOTFOUND when there is none) and leaves `out` empty on failure.
int open_repository(const std::string& path, RepositoryHandle& out);

/// The work tree root of an open repository without a trailing '/', "" when it is bare.
std::string work_tree_of(git_repository* repository);

}  // namespace kasava::repo::detail
