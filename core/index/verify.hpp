// `kasava verify`'s checks: the index against itself (core/store's check_index) and against
// the source it was built from (files gone, files new or changed since).
#pragma once

#include <string>
#include <vector>

#include "core/repo/source.hpp"
#include "core/store/store.hpp"
#include "core/util/result.hpp"

namespace kasava::index {

/// What verify_index() found.
struct VerifyReport {
  store::IndexCheck check;             ///< the file against itself
  std::vector<std::string> gone;       ///< in the index, no longer in the source
  std::vector<std::string> stale;      ///< in the source, not indexed or with other content
  std::size_t source_files = 0;        ///< files the source lists

  /// Damage that only a rebuild repairs.
  bool needs_rebuild() const { return !check.problems.empty(); }
  /// Nothing to report at all.
  bool clean() const {
    return check.problems.empty() && check.inconsistent_paths.empty() && gone.empty() &&
           stale.empty();
  }
};

/// Checks the index at `index_path` (which the caller has opened once with store::Store::open,
/// for its clear errors) against itself and against `source` as it is now: files whose blob id
/// git does not know (unstaged edits, untracked files, plain directories) are compared by the
/// stat data the index keeps, and read and hashed when that differs, as `kasava index` would.
util::Result<VerifyReport> verify_index(repo::Source& source, const std::string& index_path);

} // namespace kasava::index
