// See auth.hpp.
#include "core/serve/auth.hpp"

#include <algorithm>

#include "core/util/glob.hpp"
#include "core/util/strings.hpp"

namespace kasava::serve {

namespace {

constexpr std::size_t k_min_token_length = 16;

std::vector<std::string> words_of(std::string_view line) {
  std::vector<std::string> words;
  std::size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) ++i;
    std::size_t end = i;
    while (end < line.size() && line[end] != ' ' && line[end] != '\t') ++end;
    if (end > i) words.emplace_back(line.substr(i, end - i));
    i = end;
  }
  return words;
}

} // namespace

bool Token::allows(std::string_view name) const {
  if (repositories.empty()) return true;
  return std::any_of(repositories.begin(), repositories.end(),
                     [&](const std::string& glob) { return util::glob_match(glob, name); });
}

util::Result<std::vector<Token>> parse_token_file(std::string_view text) {
  std::vector<Token> tokens;
  std::size_t line_number = 0;
  for (const auto& raw : util::split(text, '\n')) {
    ++line_number;
    std::string_view line = raw;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    const std::string_view trimmed = util::trim(line);
    if (trimmed.empty() || trimmed[0] == '#') continue;
    auto words = words_of(trimmed);
    const std::string where = "line " + std::to_string(line_number);
    Token token;
    token.secret = words[0];
    if (token.secret.size() < k_min_token_length) {
      return util::Error{where + ": the token is shorter than 16 characters"};
    }
    for (const char c : token.secret) {
      if (c <= ' ' || c > '~') return util::Error{where + ": the token has characters other than printable ASCII"};
    }
    for (const auto& other : tokens) {
      if (other.secret == token.secret) return util::Error{where + ": the same token is on an earlier line"};
    }
    token.repositories.assign(words.begin() + 1, words.end());
    tokens.push_back(std::move(token));
  }
  if (tokens.empty()) return util::Error{"no token in it (one per line, optionally followed by repository globs)"};
  return tokens;
}

bool constant_time_equals(std::string_view a, std::string_view b) {
  // Every byte of the longer string is looked at, whatever matches.
  const std::size_t length = std::max(a.size(), b.size());
  unsigned char difference = a.size() == b.size() ? 0 : 1;
  for (std::size_t i = 0; i < length; ++i) {
    const unsigned char x = i < a.size() ? static_cast<unsigned char>(a[i]) : 0;
    const unsigned char y = i < b.size() ? static_cast<unsigned char>(b[i]) : 0;
    difference |= static_cast<unsigned char>(x ^ y);
  }
  return difference == 0;
}

const Token* find_token(const std::vector<Token>& tokens, std::string_view authorization) {
  constexpr std::string_view k_scheme = "bearer ";
  if (authorization.size() <= k_scheme.size() ||
      util::to_lower(authorization.substr(0, k_scheme.size())) != k_scheme) {
    return nullptr;
  }
  const std::string_view given = util::trim(authorization.substr(k_scheme.size()));
  const Token* found = nullptr;
  for (const auto& token : tokens) {  // no early exit: the time says nothing about which
    if (constant_time_equals(token.secret, given) && found == nullptr) found = &token;
  }
  return found;
}

HostRule host_rule_for(const std::string& listen_host, bool loopback, int port,
                       const std::vector<std::string>& allowed) {
  HostRule rule;
  rule.port = port;
  if (!loopback && allowed.empty()) return rule;
  if (loopback) rule.names = {"localhost", "127.0.0.1", "[::1]"};
  const std::string own = listen_host.find(':') != std::string::npos ? "[" + listen_host + "]" : listen_host;
  std::vector<std::string> more = allowed;
  // A wildcard address is no name a client uses.
  if (listen_host != "0.0.0.0" && listen_host != "::") more.push_back(own);
  for (const auto& name : more) {
    const std::string lower = util::to_lower(name);
    if (std::find(rule.names.begin(), rule.names.end(), lower) == rule.names.end()) rule.names.push_back(lower);
  }
  return rule;
}

bool host_allowed(const HostRule& rule, const std::optional<std::string>& host) {
  if (rule.names.empty()) return true;
  if (!host) return false;
  const std::string value = util::to_lower(util::trim(*host));
  std::string name = value;
  // A port after the name (after the closing bracket for IPv6).
  const std::size_t colon = value.rfind(':');
  const std::size_t bracket = value.rfind(']');
  if (colon != std::string::npos && (bracket == std::string::npos || colon > bracket)) {
    name = value.substr(0, colon);
    if (value.substr(colon + 1) != std::to_string(rule.port)) return false;
  }
  return std::find(rule.names.begin(), rule.names.end(), name) != rule.names.end();
}

bool origin_allowed(const std::optional<std::string>& origin, const std::optional<std::string>& host) {
  if (!origin) return true;
  if (!host) return false;
  return util::to_lower(util::trim(*origin)) == "http://" + util::to_lower(util::trim(*host));
}

std::string repository_name(const std::optional<std::string>& origin_url, const std::string& folder) {
  if (origin_url) {
    std::string url = *origin_url;
    while (!url.empty() && url.back() == '/') url.pop_back();
    if (url.size() > 4 && url.compare(url.size() - 4, 4, ".git") == 0) url.resize(url.size() - 4);
    // The last two components, split at '/' (and at ':' for scp-like user@host:owner/name).
    const std::size_t last = url.find_last_of("/:");
    if (last != std::string::npos && last > 0) {
      const std::size_t before = url.find_last_of("/:", last - 1);
      const std::string owner = url.substr(before == std::string::npos ? 0 : before + 1,
                                           last - (before == std::string::npos ? 0 : before + 1));
      const std::string name = url.substr(last + 1);
      if (!owner.empty() && !name.empty() && owner.find('@') == std::string::npos) return owner + "/" + name;
      if (!name.empty()) return name;
    }
  }
  std::string name = folder;
  while (name.size() > 1 && name.back() == '/') name.pop_back();
  const std::size_t slash = name.rfind('/');
  return slash == std::string::npos ? name : name.substr(slash + 1);
}

} // namespace kasava::serve
