// History as documentation: the subjects (and first body lines) of the commits that touched
// each file, read from libgit2 for the index's history field. Only core/repo reads commits;
// the indexer stores what this returns (core/index/history.cpp, core/store/history.cpp).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "core/util/result.hpp"

namespace kasava::repo {

/// How much of the history one walk reads.
struct HistoryLimits {
  /// The newest commits walked from the tip, merges included: the cost bound of a walk, and the
  /// window of a first index or a rebuild. A count rather than a time window because the cost
  /// is per commit (one tree comparison each), whatever the project's pace.
  std::size_t max_commits = 4000;
  /// A commit that changed more files than this (a reformat, a licence header, a vendored
  /// import) says little of any one of them: its text is kept for none.
  std::size_t max_paths_per_commit = 200;
  /// Lines of a message's body kept after its subject (commit_text). None by default: on the
  /// commit set's httpx queries (50, each at its parent) BM25 over the files' histories found
  /// the right file with MRR 0.429 from subjects alone and 0.338 with two body lines, which
  /// also doubled the field's size.
  std::size_t body_lines = 0;
};

/// One non-merge commit of the walk.
struct HistoryCommit {
  std::string id;                  ///< 40 hex
  std::string text;                ///< commit_text() of its message; may be ""
  std::vector<std::string> paths;  ///< files added or modified against its first parent, sorted
};

/// What read_history() found, newest commit first.
struct HistoryWalk {
  std::vector<HistoryCommit> commits;
  /// True when the result replaces what an index holds rather than adding to it: there was no
  /// known tip, the known tip is not an ancestor of the tip (an older commit checked out, another
  /// branch), or more than max_commits commits are new since it.
  bool from_scratch = true;
  std::size_t walked = 0;  ///< commits walked, merges and skipped ones included
};

/// Reads the history of commit `tip` of the repository containing `path` (a work tree or a git
/// directory): the newest `limits.max_commits` commits reachable from it, newest first,
/// skipping merges, each with the files it changed against its first parent (trees compared
/// by id: an unchanged folder is not read; no rename detection, so a renamed file's history
/// starts at the rename). When `known_tip` (the tip of the last walk) is an ancestor of `tip`,
/// only the commits new since it are read. A commit whose parent is missing (a shallow clone's
/// boundary) ends the walk there. Errors: no repository, unknown tip.
util::Result<HistoryWalk> read_history(const std::string& path, const std::string& tip,
                                       const std::string& known_tip, const HistoryLimits& limits);

/// The text kept of a commit message: its subject and up to `body_lines` further lines of its
/// body (trailers such as `Signed-off-by:` skipped), joined by " ; ", with control characters
/// turned into spaces, runs of spaces collapsed and each line cut to 200 bytes (at a UTF-8
/// boundary). Commit text is untrusted: a line that util::secret_rule finds a secret in is
/// dropped, and when the message as a whole holds one no single line shows (a key pair across
/// lines), nothing is kept.
std::string commit_text(std::string_view message, std::size_t body_lines = 0);

}  // namespace kasava::repo
