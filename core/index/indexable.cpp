// read_indexable_file: see indexable.hpp. It asks the same questions as run_index, through the
// same code (Source::list for tracked and ignored files, Source::read for symlinks and git's
// filters, skip_reason_for_content for the rest), so the two cannot disagree.
#include "core/index/indexable.hpp"

#include <algorithm>
#include <filesystem>

#include "core/index/indexer.hpp"
#include "core/util/strings.hpp"

namespace kasava::index {

util::Result<std::string> read_indexable_file(repo::Source& source, std::string_view path,
                                              std::uint64_t max_file_size) {
  auto not_indexed = [&](const std::string& why) {
    return util::Error{util::quoted(path) + ": kasava does not index it (" + why + ")"};
  };
  const std::string relative =
      std::filesystem::path(std::string(path)).lexically_normal().generic_string();
  auto listed = source.list();
  if (!listed) {
    return util::Error{"listing " + util::quoted(source.root()) + ": " + listed.error().message};
  }
  auto& entries = *listed;
  const auto entry =
      std::lower_bound(entries.begin(), entries.end(), relative,
                       [](const repo::SourceEntry& listed_entry, const std::string& key) {
                         return listed_entry.path < key;
                       });
  if (entry == entries.end() || entry->path != relative) {
    return not_indexed("ignored by git, not in the repository, or not a file");
  }
  if (entry->kind == repo::EntryKind::submodule) return not_indexed("a submodule");
  const std::string too_large =
      "larger than the index's limit of " + std::to_string(max_file_size) + " bytes";
  if (entry->size > max_file_size) return not_indexed(too_large);
  auto content = source.read(*entry);
  if (!content) return util::Error{util::quoted(path) + ": " + content.error().message};
  // A symlink's listed size is that of its target's name: the content is what counts.
  if (content->size() > max_file_size) return not_indexed(too_large);
  if (const std::string reason = skip_reason_for_content(relative, *content); !reason.empty()) {
    return not_indexed(reason);
  }
  return std::move(content).value();
}

} // namespace kasava::index
