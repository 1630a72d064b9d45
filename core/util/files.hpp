// File-system helpers that return results instead of throwing.
#pragma once

#include <string>
#include <string_view>

#include "core/util/result.hpp"

namespace kasava::util {

/// The whole content of a file. Errors read "reading 'path': <reason>".
Result<std::string> read_file(const std::string& path);

/// Writes content to path via a temporary file and rename, so readers never see half a file.
Status write_file_atomic(const std::string& path, std::string_view content);

/// The user's cache directory for kasava: $XDG_CACHE_HOME/kasava or ~/.cache/kasava; with
/// neither variable set, $TMPDIR/kasava-<uid> (or /tmp/kasava-<uid>), created 0700. Throws
/// util::Failure when that folder cannot be made, or is not a folder of this user's that
/// only they can write to.
std::string cache_directory();

/// Absolute, lexically normalised form of path (no symlink resolution).
std::string absolute_path(const std::string& path);

} // namespace kasava::util
