// The search page's files (web/index.html, app.js, style.css, favicon.svg), compiled into
// the binary at build time (web/CMakeLists.txt), as `kasava serve` answers for them.
#pragma once

#include <optional>
#include <span>
#include <string_view>
#include <vector>

namespace kasava::web {

/// One file of the page, as the server sends it.
struct PageAsset {
  std::string_view content_type;  ///< e.g. "text/javascript; charset=utf-8"
  std::string_view body;          ///< the bytes, embedded in the binary (static storage)
  std::string_view etag;          ///< a strong ETag, quoted: a hash of the bytes
  std::string_view cache_control; ///< revalidate every time: the names carry no version
};

/// A header every page response carries (a strict policy is possible because the page has
/// no inline script or style).
struct PageHeader {
  std::string_view name;
  std::string_view value;
};

/// The asset a GET of `path` names ("/" is index.html; a query string is ignored), or none.
std::optional<PageAsset> find_page_asset(std::string_view path);

/// Every path find_page_asset answers ("/" first), for a server's route table.
std::vector<std::string_view> page_asset_paths();

/// Headers for every page response: Content-Security-Policy, X-Content-Type-Options,
/// Referrer-Policy, X-Frame-Options.
std::span<const PageHeader> page_headers();

/// Whether an If-None-Match header value names `etag` (a list, weak forms and "*"
/// included), so the server may answer 304 without a body.
bool etag_matches(std::string_view if_none_match, std::string_view etag);

} // namespace kasava::web
