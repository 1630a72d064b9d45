// A plain directory (not inside any git repository) as a Source: every file under it, found by
// a recursive walk that never follows directory symlinks and skips `.git` and `.kasava`.
#include <algorithm>
#include <filesystem>

#include "core/repo/detail.hpp"

namespace kasava::repo::detail {

namespace fs = std::filesystem;

namespace {

class DirectorySource final : public Source {
public:
  explicit DirectorySource(const std::string& root)
      : m_root(root), m_real_root(canonical_root(root)) {}

  const std::string& root() const override { return m_root; }
  bool is_git() const override { return false; }
  std::string commit_id() const override { return {}; }

  util::Result<std::vector<SourceEntry>> list() override {
    try {
      return walk();
    } catch (const std::exception& exception) {
      return util::Error{"listing '" + m_root + "': " + exception.what()};
    }
  }

  util::Result<std::string> read(SourceEntry& entry) override {
    util::Result<std::string> content = read_from_disk(m_root, m_real_root, entry.path);
    if (content && entry.blob_id.empty()) entry.blob_id = blob_id_of(*content);
    return content;
  }

private:
  util::Result<std::vector<SourceEntry>> walk() const {
    std::vector<SourceEntry> entries;
    std::error_code error;
    // Unreadable directories are skipped like git skips them, rather than failing the listing.
    fs::recursive_directory_iterator it(m_root, fs::directory_options::skip_permission_denied,
                                        error);
    if (error) return util::Error{"listing '" + m_root + "': " + error_text(error)};
    const std::size_t prefix = m_root == "/" ? 1 : m_root.size() + 1;
    for (const fs::recursive_directory_iterator end; it != end; it.increment(error)) {
      if (error) return util::Error{"listing '" + m_root + "': " + error_text(error)};
      const fs::path& path = it->path();
      std::string relative = path.string().substr(prefix);
      const fs::file_status status = it->symlink_status(error);
      if (error) continue;  // vanished while we walked
      const std::string name = path.filename().string();
      if (name == ".git" || name == ".kasava") {
        if (fs::is_directory(status)) it.disable_recursion_pending();
        continue;
      }
      SourceEntry entry;
      if (fs::is_regular_file(status)) {
        entry.kind = EntryKind::regular;
        // One lstat gives the size and the stat data that spare reading an unchanged file.
        struct stat info {};
        if (::lstat(path.c_str(), &info) != 0) continue;  // vanished while we walked
        entry.size = static_cast<std::uint64_t>(info.st_size);
        entry.stat = file_stat_of(info);
      } else if (fs::is_symlink(status)) {
        entry.kind = EntryKind::symlink;
        // Like git, a link's size is the length of its target text.
        entry.size = fs::read_symlink(path, error).string().size();
        if (error) continue;
      } else {
        continue;  // directories are walked; fifos, sockets and devices are not files to index
      }
      entry.path = std::move(relative);
      entries.push_back(std::move(entry));
    }
    if (error) return util::Error{"listing '" + m_root + "': " + error_text(error)};
    std::sort(entries.begin(), entries.end(),
              [](const SourceEntry& a, const SourceEntry& b) { return a.path < b.path; });
    return entries;
  }

  std::string m_root;
  std::string m_real_root;
};

}  // namespace

std::unique_ptr<Source> make_directory_source(const std::string& root) {
  return std::make_unique<DirectorySource>(root);
}

}  // namespace kasava::repo::detail
