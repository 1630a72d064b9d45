// The index's history field: per path, the text of the newest commits that touched it (see
// core/repo/history.hpp for what a commit's text is), in an FTS5 table of one row per path,
// for ranking files by BM25 over their history. Store's methods for it are declared in
// store.hpp and defined in history.cpp.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace kasava::store {

/// One commit to add to the history: its text and the files it changed.
struct HistoryCommitRecord {
  std::string text;                ///< one line, no control characters
  std::vector<std::string> paths;  ///< repository-relative, '/' separators
};

/// A file whose history matches a query, and its BM25 score (higher is better, > 0).
struct HistoryHit {
  std::string path;
  double score = 0.0;
};

/// What the history holds, for `kasava status`.
struct HistoryExtent {
  std::string tip;          ///< meta "history_tip": the commit the history was read from; "" = none
  std::int64_t commits = 0; ///< meta "history_commits": commits read into it (merges included)
  std::int64_t paths = 0;   ///< paths with a history row
};

/// Each path keeps the text of at most this many commits, the newest: one file that every
/// commit touches (a changelog, a version file) must not make the field grow with the history.
/// Measured with bench/history_signal.py (5 tuning repositories, 50 queries each): MRR 0.386
/// with 32, 0.419 with 128, 0.423 with no cap to speak of (1,024); on redis the field adds
/// 3.7%, 5.1% and 5.7% to the index.
inline constexpr std::size_t k_history_per_path = 128;

}  // namespace kasava::store
