// update_history(): the indexing step of the history field (history.hpp).
#include "core/index/history.hpp"

namespace kasava::index {

util::Result<HistoryUpdate> update_history(const repo::Source& source, store::Store& store,
                                           const repo::HistoryLimits& limits) {
  HistoryUpdate update;
  const std::string tip = source.is_git() ? source.commit_id() : std::string();
  const std::string known = store.meta("history_tip").value_or("");
  if (tip == known) return update;
  repo::HistoryWalk walk;
  if (!tip.empty()) {
    auto read = repo::read_history(source.root(), tip, known, limits);
    if (!read) return read.error();
    walk = std::move(*read);
  }
  std::vector<store::HistoryCommitRecord> records;
  records.reserve(walk.commits.size());
  for (repo::HistoryCommit& commit : walk.commits) {
    records.push_back(store::HistoryCommitRecord{std::move(commit.text), std::move(commit.paths)});
  }
  store.begin();
  try {
    store.put_history(records, walk.from_scratch, tip, static_cast<std::int64_t>(walk.walked));
    store.commit();
  } catch (...) {
    try {
      store.rollback();
    } catch (...) {  // already failing; the first error is the one to report
    }
    throw;
  }
  update.commits_read = walk.walked;
  update.rebuilt = walk.from_scratch;
  return update;
}

}  // namespace kasava::index
