// Who may use `kasava serve`: bearer tokens read from a token file, each optionally limited
// to repositories by globs, compared in constant time; and the Host and Origin checks that
// keep web pages elsewhere (cross-site requests, rebound DNS names) from driving a server
// that listens on this machine.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/util/result.hpp"

namespace kasava::serve {

/// One line of a token file: the token and the repository globs it is limited to (none:
/// every repository).
struct Token {
  std::string secret;
  std::vector<std::string> repositories;

  /// Whether this token may see the repository named `name` (owner/name or a folder name).
  bool allows(std::string_view name) const;
};

/// Parses a token file: one token per line, optionally followed by repository globs
/// separated by spaces; blank lines and lines starting with '#' are skipped. Errors name
/// the line (never the token): too short a token (under 16 characters), one with
/// characters outside printable ASCII, a token given twice, or no token at all.
util::Result<std::vector<Token>> parse_token_file(std::string_view text);

/// The token an `Authorization: Bearer <token>` header value carries, among `tokens`
/// (compared in constant time, every token checked), or null.
const Token* find_token(const std::vector<Token>& tokens, std::string_view authorization);

/// Whether two strings are equal, in time that depends on their lengths only.
bool constant_time_equals(std::string_view a, std::string_view b);

/// The host names a request's Host header may carry (without port), with the port the
/// server listens on.
struct HostRule {
  std::vector<std::string> names;  ///< lower-case; bracketed for IPv6 ("[::1]"); empty: any
  int port = 0;
};

/// The Host names a server listening on `listen_host` accepts: for a loopback address,
/// localhost, 127.0.0.1, [::1] and the address itself; for any other address, any name
/// (requests must then carry a token, which a page elsewhere does not have) unless names are
/// configured (`allowed`, e.g. the server's DNS name): then those and the address itself.
/// Configured names are accepted on loopback too.
HostRule host_rule_for(const std::string& listen_host, bool loopback, int port,
                       const std::vector<std::string>& allowed = {});

/// Whether a Host header value is acceptable: a name of the rule, with the rule's port or
/// none. A missing Host (HTTP/1.0) is acceptable only when any name is.
bool host_allowed(const HostRule& rule, const std::optional<std::string>& host);

/// Whether an Origin header value is acceptable: absent, or http://<host> for the request's
/// own Host header (same origin).
bool origin_allowed(const std::optional<std::string>& origin, const std::optional<std::string>& host);

/// The name a local index's repository goes by: the owner/name of its origin remote's URL
/// (https://host/owner/name.git, git@host:owner/name, …), else the folder's name.
std::string repository_name(const std::optional<std::string>& origin_url, const std::string& folder);

} // namespace kasava::serve
