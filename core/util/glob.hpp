// Glob matching of repository paths for --path: '*' and '?' stay within one path component,
// '**' spans components, '[abc]' is a class. A pattern without '/' matches the file name in
// any folder (as ripgrep and .gitignore do); a pattern ending in '/' matches a folder prefix.
#pragma once

#include <string_view>

namespace kasava::util {

bool glob_match(std::string_view pattern, std::string_view path);

} // namespace kasava::util
