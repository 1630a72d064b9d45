// Whether a file of a repository is one an index run would index, and its content if so: what
// `kasava mcp`'s read_file_range may serve (what is never stored is never served).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "core/repo/source.hpp"
#include "core/util/result.hpp"

namespace kasava::index {

/// The content of `path` (relative to source.root(), '/' separators; "./" and "//" allowed) as
/// run_index would read it, when run_index would index it: listed by the source (a tracked
/// file, or an untracked one git does not ignore; never under `.git/` or `.kasava/`), a
/// regular file or a symlink to one inside the root, at most `max_file_size` bytes, and not
/// skipped by skip_reason_for_content (secret, binary, generated, minified). Otherwise an
/// error saying why, with the path quoted. Lists the whole source: costs what a refresh's
/// listing costs.
util::Result<std::string> read_indexable_file(repo::Source& source, std::string_view path,
                                              std::uint64_t max_file_size);

} // namespace kasava::index
