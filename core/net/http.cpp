// Helpers of the HTTP interface: header lookup, failure names, URLs and secrets in messages.
#include "core/net/http.hpp"

#include "core/util/strings.hpp"

namespace kasava::net {

std::optional<std::string> HttpResponse::header(std::string_view name) const {
  const std::string wanted = util::to_lower(name);
  std::optional<std::string> found;
  for (const Header& h : headers)
    if (util::to_lower(h.name) == wanted) found = h.value;
  return found;
}

const char* failure_kind_name(FailureKind kind) {
  switch (kind) {
    case FailureKind::none:
      return "none";
    case FailureKind::connect:
      return "connect";
    case FailureKind::timeout:
      return "timeout";
    case FailureKind::reset:
      return "reset";
    case FailureKind::cancelled:
      return "cancelled";
    case FailureKind::too_large:
      return "too_large";
    case FailureKind::circuit_open:
      return "circuit_open";
    case FailureKind::other:
      return "other";
  }
  return "other";
}

std::string display_url(std::string_view url) {
  const std::size_t scheme = url.find("://");
  if (scheme == std::string_view::npos) return std::string(url);
  const std::size_t host_start = scheme + 3;
  const std::size_t host_end = url.find_first_of("/?#", host_start);
  const std::string_view authority =
      url.substr(host_start, host_end == std::string_view::npos ? url.npos : host_end - host_start);
  const std::size_t at = authority.rfind('@');
  if (at == std::string_view::npos) return std::string(url);
  std::string out(url.substr(0, host_start));
  out += authority.substr(at + 1);
  if (host_end != std::string_view::npos) out += url.substr(host_end);
  return out;
}

std::string redact(std::string text, const std::vector<std::string>& secrets) {
  for (const std::string& secret : secrets) {
    if (secret.size() < 4) continue;
    for (std::size_t at = text.find(secret); at != std::string::npos; at = text.find(secret, at)) {
      text.replace(at, secret.size(), "[redacted]");
      at += 10;
    }
  }
  return text;
}

std::vector<std::string> secret_header_values(const std::vector<Header>& headers) {
  std::vector<std::string> values;
  for (const Header& h : headers) {
    const std::string name = util::to_lower(h.name);
    const bool secret = name == "authorization" || name == "proxy-authorization" ||
                        name.find("key") != std::string::npos ||
                        name.find("token") != std::string::npos ||
                        name.find("secret") != std::string::npos;
    if (!secret) continue;
    values.push_back(h.value);
    // "Bearer sk-…": the credential alone may be echoed by a server.
    const std::size_t space = h.value.find(' ');
    if (space != std::string::npos)
      values.push_back(std::string(util::trim(h.value.substr(space))));
  }
  return values;
}

}  // namespace kasava::net
