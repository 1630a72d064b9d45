// The embedded bytes of the page's files, defined in the page_assets_data.cpp that
// web/embed_assets.cmake generates at build time; read through page_assets.hpp.
#pragma once

#include <span>
#include <string_view>

namespace kasava::web::detail {

/// One file of web/ as compiled in.
struct EmbeddedFile {
  std::string_view path;          ///< "/index.html"
  std::string_view content_type;  ///< from the file's extension
  std::string_view etag;          ///< quoted, a prefix of the file's SHA-256
  std::string_view body;
};

/// Every embedded file.
std::span<const EmbeddedFile> embedded_files();

} // namespace kasava::web::detail
