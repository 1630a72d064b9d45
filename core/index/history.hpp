// The indexing step of the history field: after a run has written the files, the commits new
// since the last run (core/repo/history.hpp) are added to each changed path's history
// (core/store/history.hpp). Called once, at the end of run_index.
#pragma once

#include <cstddef>
#include <functional>
#include <string>

#include "core/repo/history.hpp"
#include "core/repo/source.hpp"
#include "core/store/store.hpp"

namespace kasava::index {

/// What update_history() did.
struct HistoryUpdate {
  std::size_t commits_read = 0;  ///< commits walked this run (0: the history was current)
  bool rebuilt = false;          ///< the history was read from scratch
};

/// Brings the index's history to the source's commit: nothing for a plain directory or a
/// repository without commits (any history stored is dropped), nothing when the stored tip is
/// that commit, the new commits when it descends from the stored tip, else the newest
/// `limits.max_commits` from scratch. One transaction. A failure to read the history is
/// returned as an error for the caller to report as a warning: the files are indexed anyway.
/// The bound is on the commits one run reads, not on what the index keeps: refreshed along a
/// branch, an index keeps commits older than the newest max_commits (each path still keeps at
/// most store::k_history_per_path lines), so it may hold more history than a fresh index of
/// the same commit of a repository with more commits than the bound.
util::Result<HistoryUpdate> update_history(const repo::Source& source, store::Store& store,
                                           const repo::HistoryLimits& limits = {});

}  // namespace kasava::index
