// Finding the page's embedded files by request path, and the headers they are served with.
// The bytes themselves are in a file CMake generates (page_assets_data.cpp).
#include "web/page_assets.hpp"

#include <array>

#include "web/page_assets_data.hpp"

namespace kasava::web {

namespace {

// Scripts, styles, images and requests only from the server itself; no frames, forms or
// plugins; nothing inline (the page has none), so injected markup could not run.
constexpr std::string_view k_content_security_policy =
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; "
    "connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

constexpr std::array k_page_headers = {
    PageHeader{"Content-Security-Policy", k_content_security_policy},
    PageHeader{"X-Content-Type-Options", "nosniff"},
    PageHeader{"Referrer-Policy", "no-referrer"},
    PageHeader{"X-Frame-Options", "DENY"},
};

std::string_view trim(std::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t')) text.remove_suffix(1);
  return text;
}

} // namespace

std::optional<PageAsset> find_page_asset(std::string_view path) {
  if (const auto query = path.find('?'); query != std::string_view::npos) path = path.substr(0, query);
  if (path == "/") path = "/index.html";
  for (const auto& file : detail::embedded_files()) {
    if (file.path == path) return PageAsset{file.content_type, file.body, file.etag, "no-cache"};
  }
  return std::nullopt;
}

std::vector<std::string_view> page_asset_paths() {
  std::vector<std::string_view> paths = {"/"};
  for (const auto& file : detail::embedded_files()) paths.push_back(file.path);
  return paths;
}

std::span<const PageHeader> page_headers() { return k_page_headers; }

bool etag_matches(std::string_view if_none_match, std::string_view etag) {
  while (!if_none_match.empty()) {
    const auto comma = if_none_match.find(',');
    auto candidate = trim(if_none_match.substr(0, comma));
    if (candidate == "*") return true;
    // If-None-Match compares weakly (RFC 9110 13.1.2): W/"x" matches "x".
    if (candidate.starts_with("W/")) candidate.remove_prefix(2);
    if (!candidate.empty() && candidate == etag) return true;
    if (comma == std::string_view::npos) break;
    if_none_match.remove_prefix(comma + 1);
  }
  return false;
}

} // namespace kasava::web
