// HistoryStep: the indexing step of the history field (history.hpp).
#include "core/index/history.hpp"

namespace kasava::index {

HistoryStep::HistoryStep(const repo::Source& source, const store::Store& store,
                         const repo::HistoryLimits& limits) {
  m_tip = source.is_git() ? source.commit_id() : std::string();
  std::string known = store.meta("history_tip").value_or("");
  m_current = m_tip == known;
  if (m_current || m_tip.empty()) return;
  m_reading = std::async(std::launch::async, [root = source.root(), tip = m_tip,
                                              known = std::move(known), limits] {
    return repo::read_history(root, tip, known, limits);
  });
}

HistoryStep::~HistoryStep() {
  if (m_reading && m_reading->valid()) m_reading->wait();
}

util::Result<HistoryUpdate> HistoryStep::finish(store::Store& store) {
  HistoryUpdate update;
  if (m_current) return update;
  repo::HistoryWalk walk;  // no commit: an empty history replaces what was stored
  if (m_reading) {
    auto read = m_reading->get();
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
    store.put_history(records, walk.from_scratch, m_tip, static_cast<std::int64_t>(walk.walked));
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
