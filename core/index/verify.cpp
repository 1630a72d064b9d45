// verify_index(): the index checked against itself and against its source (see verify.hpp).
#include "core/index/verify.hpp"

#include <map>

namespace kasava::index {

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
  std::map<std::string, const repo::SourceEntry*> by_path;
  for (const auto& entry : *listed) by_path.emplace(entry.path, &entry);

  for (const auto& [path, state] : states) {
    if (by_path.count(path) == 0) report.gone.push_back(path);
  }
  for (const auto& [path, entry] : by_path) {
    const auto found = states.find(path);
    if (found == states.end()) {
      report.stale.push_back(path);
    } else if (!entry->blob_id.empty() && !found->second.blob_id.empty() &&
               entry->blob_id != found->second.blob_id) {
      report.stale.push_back(path);
    }
  }
  return report;
}

} // namespace kasava::index
