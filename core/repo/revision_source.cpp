// The tree of one commit (`kasava index --rev REV`) as a Source: ids come from the tree, sizes
// from object headers, content from the object database; the work tree is never looked at.
// list_changed() skips the folders whose tree id an earlier listing saw: a tree id is the hash
// of the folder's whole content, so the same id means the same files, ids and sizes below.
#include <algorithm>
#include <mutex>
#include <stdexcept>

#include "core/repo/detail.hpp"

namespace kasava::repo::detail {

namespace {

/// Appends the file (or submodule) of one tree entry under `path`. False with `error` set when
/// its object header cannot be read. Trees and other objects are not files: ignored.
bool add_file(git_odb* odb, const git_tree_entry* item, std::string path,
              std::vector<SourceEntry>& entries, std::string& error) {
  const git_object_t type = git_tree_entry_type(item);
  SourceEntry entry;
  entry.path = std::move(path);
  if (type == GIT_OBJECT_COMMIT) {
    entry.kind = EntryKind::submodule;
    entries.push_back(std::move(entry));
    return true;
  }
  if (type != GIT_OBJECT_BLOB) return true;

  entry.kind =
      git_tree_entry_filemode(item) == GIT_FILEMODE_LINK ? EntryKind::symlink : EntryKind::regular;
  const git_oid* id = git_tree_entry_id(item);
  entry.blob_id = oid_to_hex(*id);
  std::size_t size = 0;
  git_object_t object_type = GIT_OBJECT_INVALID;
  // Only the header: the size without inflating the blob.
  if (git_odb_read_header(&size, &object_type, odb, id) < 0) {
    error = "reading object " + entry.blob_id + " of '" + entry.path + "': " + last_git_error();
    return false;
  }
  entry.size = size;
  entries.push_back(std::move(entry));
  return true;
}

/// State shared with the git_tree_walk callback, which is C and must not throw.
struct WalkContext {
  git_odb* odb = nullptr;
  std::vector<SourceEntry>* entries = nullptr;
  std::string error;
};

int walk_entry(const char* parent, const git_tree_entry* item, void* payload) {
  auto& context = *static_cast<WalkContext*>(payload);
  try {
    const std::string name = git_tree_entry_name(item);
    if (name == ".git" || name == ".kasava") return 1;  // positive: skip this subtree
    if (git_tree_entry_type(item) == GIT_OBJECT_TREE) return 0;
    return add_file(context.odb, item, std::string(parent) + name, *context.entries, context.error)
               ? 0
               : -1;
  } catch (const std::exception& exception) {
    context.error = exception.what();
    return -1;
  }
}

/// list_changed()'s walk: one folder, entered only when its tree id is not the known one.
class ChangedTreeWalk {
public:
  ChangedTreeWalk(git_repository* repository, git_odb* odb,
                  const std::vector<std::pair<std::string, std::string>>& known)
      : m_repository(repository), m_odb(odb), m_known(known) {
    std::sort(m_known.begin(), m_known.end());
  }

  TreeListing run(const git_tree* root) {
    walk(root, "");
    const auto by_path = [](const SourceEntry& a, const SourceEntry& b) { return a.path < b.path; };
    std::sort(m_listing.entries.begin(), m_listing.entries.end(), by_path);
    std::sort(m_listing.unchanged.begin(), m_listing.unchanged.end());
    std::sort(m_listing.trees.begin(), m_listing.trees.end());
    return std::move(m_listing);
  }

private:
  void walk(const git_tree* tree, const std::string& path) {
    std::string id = oid_to_hex(*git_tree_id(tree));
    const auto known =
        std::lower_bound(m_known.begin(), m_known.end(), path,
                         [](const auto& pair, const std::string& key) { return pair.first < key; });
    const bool same = known != m_known.end() && known->first == path && known->second == id;
    m_listing.trees.emplace_back(path, std::move(id));
    if (same) {
      m_listing.unchanged.push_back(path);
      return;
    }
    const std::size_t count = git_tree_entrycount(tree);
    for (std::size_t i = 0; i < count; ++i) {
      const git_tree_entry* item = git_tree_entry_byindex(tree, i);
      const std::string name = git_tree_entry_name(item);
      if (name == ".git" || name == ".kasava") continue;
      std::string child = path.empty() ? name : path + "/" + name;
      if (git_tree_entry_type(item) != GIT_OBJECT_TREE) {
        std::string error;
        if (!add_file(m_odb, item, std::move(child), m_listing.entries, error))
          throw std::runtime_error(error);
        continue;
      }
      git_tree* raw_subtree = nullptr;
      if (git_tree_lookup(&raw_subtree, m_repository, git_tree_entry_id(item)) < 0) {
        throw std::runtime_error("reading tree '" + child + "': " + last_git_error());
      }
      const TreeHandle subtree(raw_subtree);
      walk(subtree.get(), child);
    }
  }

  git_repository* m_repository;
  git_odb* m_odb;
  std::vector<std::pair<std::string, std::string>> m_known;
  TreeListing m_listing;
};

class RevisionSource final : public Source {
public:
  RevisionSource(RepositoryHandle repository, const std::string& root, const std::string& revision,
                 CommitHandle commit, TreeHandle tree, OdbHandle odb)
      : m_repository(std::move(repository)),
        m_root(root),
        m_revision(revision),
        m_commit_id(oid_to_hex(*git_commit_id(commit.get()))),
        m_commit(std::move(commit)),
        m_tree(std::move(tree)),
        m_odb(std::move(odb)) {}

  const std::string& root() const override { return m_root; }
  bool is_git() const override { return true; }
  std::string commit_id() const override { return m_commit_id; }

  util::Result<std::vector<SourceEntry>> list() override {
    try {
      std::lock_guard lock(m_mutex);
      std::vector<SourceEntry> entries;
      WalkContext context{m_odb.get(), &entries, {}};
      if (git_tree_walk(m_tree.get(), GIT_TREEWALK_PRE, walk_entry, &context) < 0) {
        if (context.error.empty()) context.error = last_git_error();
        return util::Error{"listing revision '" + m_revision + "': " + context.error};
      }
      // Tree order already matches path order ("a/" sorts as if followed by '/'); make sure.
      std::sort(entries.begin(), entries.end(),
                [](const SourceEntry& a, const SourceEntry& b) { return a.path < b.path; });
      return entries;
    } catch (const std::exception& exception) {
      return util::Error{"listing revision '" + m_revision + "': " + exception.what()};
    }
  }

  std::optional<util::Result<TreeListing>> list_changed(
      const std::vector<std::pair<std::string, std::string>>& known) override {
    try {
      std::lock_guard lock(m_mutex);
      return util::Result<TreeListing>(
          ChangedTreeWalk(m_repository.get(), m_odb.get(), known).run(m_tree.get()));
    } catch (const std::exception& exception) {
      return util::Result<TreeListing>(
          util::Error{"listing revision '" + m_revision + "': " + exception.what()});
    }
  }

  util::Result<std::string> read(SourceEntry& entry) override {
    // A link's blob is its target text, not file content, and the target may not be in the tree.
    if (entry.kind == EntryKind::symlink) return util::Error{"symlink"};
    if (entry.kind == EntryKind::submodule) return util::Error{"submodule"};
    try {
      std::lock_guard lock(m_mutex);
      git_oid id;
      if (entry.blob_id.empty()) {
        git_tree_entry* raw_item = nullptr;
        if (git_tree_entry_bypath(&raw_item, m_tree.get(), entry.path.c_str()) < 0) {
          return util::Error{"not in revision '" + m_revision + "'"};
        }
        const TreeEntryHandle item(raw_item);
        git_oid_cpy(&id, git_tree_entry_id(item.get()));
        entry.blob_id = oid_to_hex(id);
      } else if (git_oid_fromstr(&id, entry.blob_id.c_str()) < 0) {
        return util::Error{"invalid blob id '" + entry.blob_id + "'"};
      }
      git_blob* raw_blob = nullptr;
      if (git_blob_lookup(&raw_blob, m_repository.get(), &id) < 0) {
        return util::Error{"reading blob " + entry.blob_id + ": " + last_git_error()};
      }
      const BlobHandle blob(raw_blob);
      const auto* data = static_cast<const char*>(git_blob_rawcontent(blob.get()));
      return std::string(data, static_cast<std::size_t>(git_blob_rawsize(blob.get())));
    } catch (const std::exception& exception) {
      return util::Error{exception.what()};
    }
  }

private:
  RepositoryHandle m_repository;
  std::string m_root;
  std::string m_revision;
  std::string m_commit_id;
  CommitHandle m_commit;
  TreeHandle m_tree;
  OdbHandle m_odb;
  // libgit2 objects must not be used from two threads at once; read() may be called from several.
  mutable std::mutex m_mutex;
};

}  // namespace

util::Result<std::unique_ptr<Source>> make_revision_source(RepositoryHandle repository,
                                                           const std::string& root,
                                                           const std::string& revision) {
  git_repository* repo = repository.get();
  if (git_repository_is_empty(repo) == 1) {
    return util::Error{"unknown revision '" + revision + "': the repository has no commits"};
  }
  git_object* raw_object = nullptr;
  const int code = git_revparse_single(&raw_object, repo, revision.c_str());
  if (code == GIT_ENOTFOUND || code == GIT_EINVALIDSPEC) {
    return util::Error{"unknown revision '" + revision + "'"};
  }
  if (code == GIT_EAMBIGUOUS) return util::Error{"ambiguous revision '" + revision + "'"};
  if (code < 0) return util::Error{"resolving revision '" + revision + "': " + last_git_error()};
  const ObjectHandle object(raw_object);

  git_object* raw_commit = nullptr;
  if (git_object_peel(&raw_commit, object.get(), GIT_OBJECT_COMMIT) < 0) {
    return util::Error{"revision '" + revision + "' is not a commit"};
  }
  CommitHandle commit(reinterpret_cast<git_commit*>(raw_commit));

  git_tree* raw_tree = nullptr;
  if (git_commit_tree(&raw_tree, commit.get()) < 0) {
    return util::Error{"reading the tree of revision '" + revision + "': " + last_git_error()};
  }
  TreeHandle tree(raw_tree);

  git_odb* raw_odb = nullptr;
  if (git_repository_odb(&raw_odb, repo) < 0) {
    return util::Error{"opening the object database of '" + root + "': " + last_git_error()};
  }
  OdbHandle odb(raw_odb);

  return std::unique_ptr<Source>(std::make_unique<RevisionSource>(
      std::move(repository), root, revision, std::move(commit), std::move(tree), std::move(odb)));
}

}  // namespace kasava::repo::detail
