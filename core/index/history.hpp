// The indexing step of the history field: the commits new since the last run
// (core/repo/history.hpp) are read while run_index indexes the files, and added to each
// changed path's history (core/store/history.hpp) after the files are written.
#pragma once

#include <cstddef>
#include <future>
#include <optional>
#include <string>

#include "core/repo/history.hpp"
#include "core/repo/source.hpp"
#include "core/store/store.hpp"

namespace kasava::index {

/// What the history step did.
struct HistoryUpdate {
  std::size_t commits_read = 0;  ///< commits walked this run (0: the history was current)
  bool rebuilt = false;          ///< the history was read from scratch
};

/// Brings the index's history to the source's commit, in two halves so that the reading (a
/// single thread of libgit2 work: ~0.6 s of CPU for 4,000 commits of redis) overlaps the
/// indexing of the files instead of following it. Nothing for a plain directory or a
/// repository without commits (any history stored is dropped), nothing when the stored tip is
/// that commit, the new commits when it descends from the stored tip, else the newest
/// `limits.max_commits` from scratch.
///
/// The bound is on the commits a run reads, not on what the index keeps: refreshed along a
/// branch, an index keeps commits older than the newest max_commits (each path still keeps at
/// most store::k_history_per_path lines), so it may hold more history than a fresh index of
/// the same commit of a repository with more commits than the bound.
class HistoryStep {
public:
  /// Starts reading, on a thread of its own, what the index lacks. Reads the source's root
  /// and commit and the store's meta here, on the calling thread.
  HistoryStep(const repo::Source& source, const store::Store& store,
              const repo::HistoryLimits& limits = {});
  /// Waits for the reading, if it was not finished.
  ~HistoryStep();
  HistoryStep(const HistoryStep&) = delete;
  HistoryStep& operator=(const HistoryStep&) = delete;

  /// Waits for the reading and writes it in one transaction. A failure to read the history is
  /// returned as an error for the caller to report as a warning (the files are indexed
  /// anyway); a failure to write it throws like any store write.
  util::Result<HistoryUpdate> finish(store::Store& store);

private:
  std::string m_tip;
  bool m_current = false;  // the stored tip is the source's commit: nothing to do
  std::optional<std::future<util::Result<repo::HistoryWalk>>> m_reading;
};

}  // namespace kasava::index
