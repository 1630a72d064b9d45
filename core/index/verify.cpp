// verify_index(): the index checked against itself and against its source (see verify.hpp).
#include "core/index/verify.hpp"

#include <set>
#include <string_view>

#include "core/index/indexer.hpp"

namespace kasava::index {
namespace {

// Whether the content the index holds for `entry` is the one in the source now, decided as
// the indexer decides it: by blob id when git knows it, else by the stat data the index keeps
// (the same file, unchanged), else by reading and hashing the file as it is on disk — an
// unstaged edit is in the work tree, not in git's index. A file too large to index that is
// remembered as such is unchanged; so is one that cannot be read and is remembered as skipped.
bool same_content(repo::Source& source, repo::SourceEntry& entry, const store::FileState& state,
                  std::uint64_t max_file_size) {
  if (entry.blob_id.empty() && entry.kind == repo::EntryKind::regular &&
      entry.stat.mtime_ns != 0 && state.mtime_ns == entry.stat.mtime_ns &&
      state.ctime_ns == entry.stat.ctime_ns && state.inode == entry.stat.inode &&
      state.size == entry.size) {
    return true;
  }
  if (entry.blob_id.empty()) {
    if (entry.size > max_file_size) return state.skip_reason == "too large";
    if (!source.read(entry)) return !state.skip_reason.empty();
  }
  return entry.blob_id == state.blob_id;
}

} // namespace

util::Result<VerifyReport> verify_index(repo::Source& source, const std::string& index_path) {
  VerifyReport report;
  auto check = store::check_index(index_path);
  if (!check) return check.error();
  report.check = std::move(check).value();
  if (report.needs_rebuild()) return report;  // rows cannot be trusted; a rebuild redoes all

  auto store = store::Store::open(index_path, store::OpenMode::read_only);
  if (!store) return store.error();
  const auto states = (*store)->file_states();

  auto listed = source.list();
  if (!listed) return listed.error();
  report.source_files = listed->size();
  std::set<std::string_view> listed_paths;
  for (const auto& entry : *listed) listed_paths.insert(entry.path);
  for (const auto& [path, state] : states) {
    if (listed_paths.count(path) == 0) report.gone.push_back(path);
  }
  std::uint64_t max_file_size = IndexOptions{}.max_file_size;
  if (const auto stored = (*store)->meta("max_file_size")) {
    try {
      max_file_size = std::stoull(*stored);
    } catch (const std::exception&) {  // unreadable setting: keep the default
    }
  }
  for (auto& entry : *listed) {
    if (entry.kind == repo::EntryKind::submodule) continue;  // never indexed
    const auto found = states.find(entry.path);
    if (found == states.end()) {
      report.stale.push_back(entry.path);
    } else if (!same_content(source, entry, found->second, max_file_size)) {
      report.stale.push_back(entry.path);
    }
  }
  return report;
}

} // namespace kasava::index
