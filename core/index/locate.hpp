// Where the index of a repository lives: <root>/.kasava/index.db, found from any folder below
// the root by walking up, and kept out of git through .git/info/exclude; and which folder an
// index belongs to, decided from where it lies, never from what the file says.
#pragma once

#include <optional>
#include <string>

namespace kasava::index {

/// <root>/.kasava/index.db
std::string default_index_path(const std::string& root);

/// The nearest `.kasava/index.db` in `start` or one of its parents.
std::optional<std::string> find_index_upward(const std::string& start);

/// `<dir>` for an index path `<dir>/.kasava/index.db` (the folder whose index it is), nullopt
/// for any other path. Lexical: the folder is not checked.
std::optional<std::string> folder_of_index(const std::string& index_path);

/// Whether two paths name the same existing folder (same device and inode: symlinks and
/// spellings do not matter). False when either does not exist or is not a folder.
bool same_folder(const std::string& a, const std::string& b);

/// Adds `.kasava/` to the repository's info/exclude once (the common git directory, so
/// linked worktrees are covered), so the index never shows up in `git status`. Does nothing
/// outside a git repository; failures are ignored (not fatal).
void exclude_from_git(const std::string& root);

} // namespace kasava::index
