// Where the index of a repository lives: <root>/.kasava/index.db, found from any folder below
// the root by walking up, and kept out of git through .git/info/exclude.
#pragma once

#include <optional>
#include <string>

namespace kasava::index {

/// <root>/.kasava/index.db
std::string default_index_path(const std::string& root);

/// The nearest `.kasava/index.db` in `start` or one of its parents.
std::optional<std::string> find_index_upward(const std::string& start);

/// Adds `.kasava/` to the repository's info/exclude once (the common git directory, so
/// linked worktrees are covered), so the index never shows up in `git status`. Does nothing
/// outside a git repository; failures are ignored (not fatal).
void exclude_from_git(const std::string& root);

} // namespace kasava::index
