// open_source(): decides whether a path is a git working tree, a bare repository or a plain
// directory and builds the matching Source; also find_work_tree() and blob_id_of().
#include "core/repo/source.hpp"

#include <filesystem>

#include "core/repo/detail.hpp"
#include "core/repo/git_handles.hpp"
#include "core/util/files.hpp"

namespace kasava::repo {

namespace fs = std::filesystem;

util::Result<std::unique_ptr<Source>> open_source(const std::string& path,
                                                  const OpenOptions& options) {
  try {
    std::error_code error;
    const fs::file_status status = fs::status(path, error);
    if (status.type() == fs::file_type::not_found) {
      return util::Error{"'" + path + "': no such file or directory"};
    }
    if (error) return util::Error{"'" + path + "': " + detail::error_text(error)};
    if (!fs::is_directory(status)) return util::Error{"'" + path + "': not a directory"};

    const std::string absolute = util::absolute_path(path);
    detail::RepositoryHandle repository;
    const int code = detail::open_repository(absolute, repository);
    if (code == GIT_ENOTFOUND) {
      if (options.revision) {
        return util::Error{"'" + path + "' is not a git repository: --rev needs one"};
      }
      return detail::make_directory_source(absolute);
    }
    if (code < 0) {
      return util::Error{"opening repository '" + path + "': " + detail::last_git_error()};
    }

    const bool bare = git_repository_is_bare(repository.get()) != 0;
    std::string root = bare ? std::string(git_repository_path(repository.get()))
                            : detail::work_tree_of(repository.get());
    if (root.size() > 1 && root.back() == '/') root.pop_back();

    if (options.revision)
      return detail::make_revision_source(std::move(repository), root, *options.revision);
    if (bare) {
      return util::Error{"'" + path +
                         "' is a bare repository: use --rev to choose a commit to index"};
    }
    return detail::make_work_tree_source(std::move(repository), root);
  } catch (const std::exception& exception) {
    return util::Error{"opening '" + path + "': " + exception.what()};
  }
}

std::optional<std::string> find_work_tree(const std::string& path) {
  detail::RepositoryHandle repository;
  if (detail::open_repository(util::absolute_path(path), repository) < 0) return std::nullopt;
  std::string root = detail::work_tree_of(repository.get());
  if (root.empty()) return std::nullopt;
  return root;
}

std::optional<std::string> common_git_dir(const std::string& path) {
  detail::RepositoryHandle repository;
  if (detail::open_repository(util::absolute_path(path), repository) < 0) return std::nullopt;
  const char* common = git_repository_commondir(repository.get());
  if (common == nullptr || *common == '\0') return std::nullopt;
  std::string dir = common;
  if (dir.size() > 1 && dir.back() == '/') dir.pop_back();
  return dir;
}

std::optional<std::string> remote_url(const std::string& path, const std::string& name) {
  detail::RepositoryHandle repository;
  if (detail::open_repository(util::absolute_path(path), repository) < 0) return std::nullopt;
  git_remote* remote = nullptr;
  if (git_remote_lookup(&remote, repository.get(), name.c_str()) < 0) return std::nullopt;
  const char* url = git_remote_url(remote);
  std::optional<std::string> result;
  if (url != nullptr && *url != '\0') result = redact_url(url);
  git_remote_free(remote);
  return result;
}

std::string blob_id_of(std::string_view content) {
  detail::ensure_libgit2();
  git_oid oid;
  if (git_odb_hash(&oid, content.data(), content.size(), GIT_OBJECT_BLOB) < 0) return {};
  return detail::oid_to_hex(oid);
}

}  // namespace kasava::repo
