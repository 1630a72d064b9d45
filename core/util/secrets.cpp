// The secret-file rules (see secrets.hpp). Content is scanned once for the pairs of bytes
// that start an anchor ("--" of "-----BEGIN ", "AK" of "AKIA", "gh" of "ghp_", ":/" of "://",
// …), one bit test a byte; only at an anchor is the shape around it checked. No regex engine:
// this runs on every file an index reads.
#include "core/util/secrets.hpp"

#include <algorithm>
#include <array>
#include <cstdint>
#include <string>

#include "core/util/strings.hpp"

namespace kasava::util {
namespace {

bool is_digit(char c) {
  return c >= '0' && c <= '9';
}
bool is_upper(char c) {
  return c >= 'A' && c <= 'Z';
}
bool is_lower(char c) {
  return c >= 'a' && c <= 'z';
}
bool is_alnum(char c) {
  return is_digit(c) || is_upper(c) || is_lower(c);
}
bool is_upper_alnum(char c) {
  return is_digit(c) || is_upper(c);
}
// Characters of provider tokens: letters, digits, '_' and '-'.
bool is_token_char(char c) {
  return is_alnum(c) || c == '_' || c == '-';
}
bool is_base64_char(char c) {
  return is_alnum(c) || c == '+' || c == '/';
}

char lower(char c) {
  return is_upper(c) ? static_cast<char>(c - 'A' + 'a') : c;
}

bool has_at(std::string_view text, std::size_t at, std::string_view what) {
  return text.size() - at >= what.size() && text.compare(at, what.size(), what) == 0;
}

// Length of the run of `pred` characters starting at `at`.
template <typename Pred>
std::size_t run_from(std::string_view text, std::size_t at, Pred pred) {
  std::size_t end = at;
  while (end < text.size() && pred(text[end])) ++end;
  return end - at;
}

// A value written as a stand-in for a secret rather than a secret: documentation, tests,
// templates. Checked on the lower-cased value.
bool has_placeholder_word(std::string_view value) {
  const std::string low = to_lower(value);
  for (std::string_view word :
       {"example",   "xxxx",   "****",        "....",     "your",     "dummy",
        "fake",      "sample", "placeholder", "redacted", "changeme", "change_me",
        "change-me", "test",   "hunter2",     "secret",   "passw",    "p4ssw0rd",
        "replace",   "insert", "environ",     "getenv",   "12345",    "abcdef"}) {
    if (low.find(word) != std::string::npos) return true;
  }
  return false;
}

// Whether every character is the same one (`xxxxxxxx`, `00000000`).
bool is_one_char(std::string_view value) {
  return value.find_first_not_of(value.front()) == std::string_view::npos;
}

std::size_t distinct_chars(std::string_view value) {
  std::array<bool, 256> seen{};
  std::size_t count = 0;
  for (char c : value) {
    auto& slot = seen[static_cast<unsigned char>(c)];
    if (!slot) ++count;
    slot = true;
  }
  return count;
}

// The body of a generated token: letters and digits mixed, many different characters, no
// placeholder word. A random 20+ character token fails this with negligible probability.
bool looks_random(std::string_view body) {
  bool digit = false, letter = false;
  for (char c : body) {
    digit = digit || is_digit(c);
    letter = letter || is_upper(c) || is_lower(c);
  }
  return digit && letter && distinct_chars(body) >= 10 && !has_placeholder_word(body);
}

bool boundary_before(std::string_view text, std::size_t at) {
  return at == 0 || !is_alnum(text[at - 1]);
}

bool is_pem_body_char(char c) {
  return is_base64_char(c) || c == '=';
}

// "-----BEGIN … PRIVATE KEY-----" at `at`, followed by a key body: a base64 line of 40 or more
// characters (what every real key has; as PEM text, in a string literal, or after the `\n`
// escapes of a JSON service-account file), or a short one closed by "-----END" on the next
// line. The header alone is not enough: code that parses keys names it in string constants.
bool private_key_at(std::string_view text, std::size_t at) {
  const std::string_view header = text.substr(at, 100);
  const std::size_t name = header.find("PRIVATE KEY");
  if (name == std::string_view::npos || header.substr(0, name).find('\n') != std::string_view::npos)
    return false;
  const std::size_t close = header.find("-----", name);
  if (close == std::string_view::npos) return false;
  std::size_t i = at + close + 5;
  // Quotes, escapes, concatenation and PEM header lines ("Proc-Type: …", "Version: …").
  for (int lines = 0; i < text.size() && lines < 8;) {
    const char c = text[i];
    if (c == '\n') {
      ++lines;
      ++i;
    } else if (c == ' ' || c == '\t' || c == '\r' || c == '"' || c == '\'' || c == '`' ||
               c == '+') {
      ++i;
    } else if (c == '\\' && i + 1 < text.size() && text[i + 1] == 'n') {
      ++lines;
      i += 2;
    } else {
      const std::size_t word = run_from(text, i, [](char w) { return is_alnum(w) || w == '-'; });
      if (word == 0 || i + word >= text.size() || text[i + word] != ':') break;
      const std::size_t end = text.find('\n', i);
      if (end == std::string_view::npos) return false;
      i = end;
    }
  }
  const std::size_t body = run_from(text, i, is_pem_body_char);
  if (body >= 40) return looks_random(text.substr(i, body));
  if (body == 0) return false;
  std::size_t after = i + body;
  while (after < text.size() &&
         (text[after] == ' ' || text[after] == '\t' || text[after] == '\r' || text[after] == '\n'))
    ++after;
  return text.find('\n', i) < after && has_at(text, after, "-----END ");
}

// AKIA/ASIA + 16 of [A-Z0-9], then a 40-character secret access key within 1 KiB either side.
bool aws_key_pair_at(std::string_view text, std::size_t at) {
  if (!boundary_before(text, at)) return false;
  const std::size_t body = run_from(text, at + 4, is_upper_alnum);
  if (body != 16 || (at + 20 < text.size() && is_alnum(text[at + 20]))) return false;
  if (text.substr(at, 20).find("EXAMPLE") != std::string_view::npos) return false;
  const std::size_t from = at > 1024 ? at - 1024 : 0;
  const std::string_view window = text.substr(from, at + 20 + 1024 - from);
  for (std::size_t i = 0; i < window.size();) {
    const std::size_t run = run_from(window, i, is_base64_char);
    if (run == 0) {
      ++i;
      continue;
    }
    const std::string_view candidate = window.substr(i, run);
    const bool bounded = i + run >= window.size() || window[i + run] != '=';
    bool upper = false, low = false;
    for (char c : candidate) {
      upper = upper || is_upper(c);
      low = low || is_lower(c);
    }
    if (run == 40 && bounded && upper && low && looks_random(candidate)) return true;
    i += run;
  }
  return false;
}

// `prefix` already matched at `at`; a body of at least `min` token characters follows.
bool token_at(std::string_view text, std::size_t at, std::size_t prefix, std::size_t min,
              bool (*pred)(char) = is_token_char) {
  if (!boundary_before(text, at)) return false;
  const std::size_t body = run_from(text, at + prefix, pred);
  return body >= min && looks_random(text.substr(at + prefix, body));
}

// "scheme://user:password@host" where the password is not a placeholder.
bool url_password_at(std::string_view text, std::size_t at) {
  std::size_t scheme = 0;
  while (scheme < at && scheme < 20) {
    const char c = text[at - scheme - 1];
    if (!is_alnum(c) && c != '+' && c != '-' && c != '.') break;
    ++scheme;
  }
  if (scheme < 2 || !is_lower(lower(text[at - scheme]))) return false;
  const auto user_char = [](char c) {
    return c > ' ' && c != ':' && c != '/' && c != '@' && c != '"' && c != '\'' && c != '<' &&
           c != '>' && c != '{' && c != '}' && c != '$' && c != '`' && c != '\\';
  };
  const std::size_t user_at = at + 3;
  const std::size_t user = run_from(text, user_at, user_char);
  // The user may be empty (`redis://:password@host`).
  if (user_at + user >= text.size() || text[user_at + user] != ':') return false;
  const std::size_t password_at = user_at + user + 1;
  const std::size_t password = run_from(text, password_at, [](char c) {
    return c > ' ' && c != '@' && c != '/' && c != '"' && c != '\'' && c != '<' && c != '>' &&
           c != '`' && c != '\\';
  });
  const std::size_t host_at = password_at + password;
  if (password < 6 || host_at + 1 >= text.size() || text[host_at] != '@' ||
      !(is_alnum(text[host_at + 1]) || text[host_at + 1] == '[')) {
    return false;
  }
  const std::string_view value = text.substr(password_at, password);
  if (value.find_first_of("${}%*[]()") != std::string_view::npos) return false;  // templates
  return !is_one_char(value) && !has_placeholder_word(value) && value != text.substr(user_at, user);
}

// The extension of a file name (after its last dot, not a leading one), lower-cased.
std::string_view extension_of(std::string_view name) {
  const std::size_t dot = name.find_last_of('.');
  return dot == std::string_view::npos || dot == 0 ? std::string_view{} : name.substr(dot + 1);
}

bool is_config_extension(std::string_view ext) {
  for (std::string_view config :
       {"yaml", "yml", "toml", "ini", "cfg", "conf", "properties", "json", "env", "tfvars"})
    if (ext == config) return true;
  return false;
}

// `key = value` / `key: value` / `"key": "value"` on one line of a config file, with a key
// naming a password, secret, token or API key and a literal that is not a placeholder.
bool config_line_has_secret(std::string_view line) {
  line = trim(line);
  if (line.starts_with("- ")) line = trim(line.substr(2));
  if (line.starts_with("export ")) line = trim(line.substr(7));
  if (!line.empty() && (line.front() == '"' || line.front() == '\'')) line.remove_prefix(1);
  const std::size_t key_size =
      run_from(line, 0, [](char c) { return is_alnum(c) || c == '_' || c == '-' || c == '.'; });
  if (key_size == 0) return false;
  const std::string key = to_lower(line.substr(0, key_size));
  std::size_t at = key_size;
  if (at < line.size() && (line[at] == '"' || line[at] == '\'')) ++at;
  while (at < line.size() && (line[at] == ' ' || line[at] == '\t')) ++at;
  if (at >= line.size() || (line[at] != '=' && line[at] != ':')) return false;
  ++at;
  while (at < line.size() && (line[at] == ' ' || line[at] == '\t')) ++at;
  if (at >= line.size()) return false;

  bool password_key = false;
  for (std::string_view word : {"password", "passwd", "passphrase"})
    password_key = password_key || key.ends_with(word);
  bool token_key = false;
  for (std::string_view word :
       {"secret", "token", "apikey", "api_key", "api-key", "accesskey", "access_key", "secretkey",
        "secret_key", "privatekey", "private_key", "secret-key", "access-key", "private-key"})
    token_key = token_key || key.ends_with(word);
  if (!password_key && !token_key) return false;

  std::string_view value;
  const char quote = line[at];
  if (quote == '"' || quote == '\'') {
    const std::size_t close = line.find(quote, at + 1);
    if (close == std::string_view::npos) return false;
    value = line.substr(at + 1, close - at - 1);
  } else {
    value =
        line.substr(at, run_from(line, at, [](char c) {
                      return c != ' ' && c != '\t' && c != '#' && c != ',' && c != ';' && c != '\r';
                    }));
  }
  // Templates, references, YAML tags and anchors, block scalars, masked values.
  if (value.empty() || value.find_first_of(" \t<>") != std::string_view::npos ||
      std::string_view("$%{[(!&*@|>").find(value.front()) != std::string_view::npos ||
      value.find("${") != std::string_view::npos || value.find("{{") != std::string_view::npos ||
      value.find("%(") != std::string_view::npos || value.find("$(") != std::string_view::npos ||
      is_one_char(value) || has_placeholder_word(value)) {
    return false;
  }
  for (std::string_view word : {"none", "null", "nil", "true", "false", "required", "optional"})
    if (to_lower(value) == word) return false;
  if (password_key) return value.size() >= 6;
  // Tokens are written in a token alphabet; a JSON path or an expression is not one.
  for (char c : value)
    if (!is_alnum(c) && std::string_view("-_+/=.~:").find(c) == std::string_view::npos)
      return false;
  return value.size() >= 16 && looks_random(value);
}

bool config_has_secret(std::string_view content) {
  for (std::size_t start = 0; start < content.size();) {
    std::size_t end = content.find('\n', start);
    if (end == std::string_view::npos) end = content.size();
    if (config_line_has_secret(content.substr(start, end - start))) return true;
    start = end + 1;
  }
  return false;
}

std::string_view name_rule(std::string_view path) {
  const std::size_t slash = path.find_last_of("/\\");
  const std::string name =
      to_lower(slash == std::string_view::npos ? path : path.substr(slash + 1));
  if (name == ".env" || name.starts_with(".env.") || name.ends_with(".env")) return "name";
  for (std::string_view suffix : {".pem", ".key", ".p12", ".pfx", ".keystore", ".jks", ".ppk",
                                  ".kdbx", ".tfstate", ".tfstate.backup"})
    if (name.ends_with(suffix)) return "name";
  for (std::string_view prefix : {"id_rsa", "id_dsa", "id_ecdsa", "id_ed25519"})
    if (name.starts_with(prefix)) return "name";
  for (std::string_view exact : {".envrc", ".netrc", "_netrc", ".npmrc", ".pypirc", ".pgpass",
                                 ".htpasswd", ".s3cfg", ".dockercfg"})
    if (name == exact) return "name";
  const std::string_view ext = extension_of(name);
  const bool data_ext =
      ext.empty() || is_config_extension(ext) || ext == "xml" || ext == "txt" || ext == "csv";
  // "credentials" as a word of the name: `aws_credentials`, `.git-credentials`,
  // `credentials.json`, not the schema `CallCredentials.yaml`.
  const std::size_t credentials = name.find("credentials");
  const bool credentials_word =
      credentials != std::string::npos &&
      (credentials == 0 ||
       std::string_view("._-").find(name[credentials - 1]) != std::string_view::npos);
  if (data_ext && (credentials_word || name.starts_with("secrets.") || name == "secrets"))
    return "name";
  const std::string low_path = to_lower(path);
  if (low_path == ".docker/config.json" || low_path.ends_with("/.docker/config.json"))
    return "name";
  return {};
}

}  // namespace

std::string_view secret_rule(std::string_view path, std::string_view content) {
  if (const std::string_view rule = name_rule(path); !rule.empty()) return rule;
  // Pairs of bytes that may start an anchor, as a bit set of 64 Ki bits (8 KiB, in L1): the
  // loop costs one load and one bit test a byte, and few pairs of real text are anchors.
  static const std::array<std::uint64_t, 1024> k_anchor_pairs = [] {
    std::array<std::uint64_t, 1024> bits{};
    for (std::string_view pair :
         {"--", "Pu", "AK", "AS", "AI", "AG", "gh", "b_", "xo", "sk", "rk", ":/"}) {
      const unsigned key =
          static_cast<unsigned char>(pair[0]) << 8 | static_cast<unsigned char>(pair[1]);
      bits[key >> 6] |= std::uint64_t{1} << (key & 63);
    }
    return bits;
  }();
  const std::size_t size = content.size();
  const auto* bytes = reinterpret_cast<const unsigned char*>(content.data());
  for (std::size_t i = 0; i + 1 < size; ++i) {
    const unsigned key = static_cast<unsigned>(bytes[i]) << 8 | bytes[i + 1];
    if ((k_anchor_pairs[key >> 6] >> (key & 63) & 1) == 0) continue;
    switch (content[i]) {
      case '-':
        if (has_at(content, i, "-----BEGIN ") && private_key_at(content, i)) return "private key";
        break;
      case 'P':
        if (has_at(content, i, "PuTTY-User-Key-File-") && (i == 0 || content[i - 1] == '\n'))
          return "private key";
        break;
      case 'A':
        if ((has_at(content, i, "AKIA") || has_at(content, i, "ASIA")) &&
            aws_key_pair_at(content, i))
          return "aws key";
        if (has_at(content, i, "AIza") && token_at(content, i, 4, 35) &&
            run_from(content, i + 4, is_token_char) == 35)
          return "google api key";
        if (has_at(content, i, "AGE-SECRET-KEY-1") && token_at(content, i, 16, 58, is_upper_alnum))
          return "age key";
        break;
      case 'g':
        if (i + 4 <= size && content[i + 1] == 'h' && content[i + 3] == '_' &&
            std::string_view("pousr").find(content[i + 2]) != std::string_view::npos &&
            token_at(content, i, 4, 36, is_alnum))
          return "github token";
        break;
      case 'b':  // "github_pat_", found by its rarer pair "b_"
        if (i >= 5 && has_at(content, i - 5, "github_pat_") && token_at(content, i - 5, 11, 50))
          return "github token";
        break;
      case 'x':
        if (i + 5 <= size && content[i + 1] == 'o' && content[i + 2] == 'x' &&
            content[i + 4] == '-' &&
            std::string_view("baprs").find(content[i + 3]) != std::string_view::npos &&
            token_at(content, i, 5, 20))
          return "slack token";
        break;
      case 's':
      case 'r':
        if (i + 8 <= size && content[i + 1] == 'k' && has_at(content, i + 2, "_live_") &&
            token_at(content, i, 8, 20, is_alnum))
          return "stripe key";
        if (content[i] == 's' && has_at(content, i, "sk-") && token_at(content, i, 3, 32))
          return has_at(content, i, "sk-ant-") ? "anthropic key" : "openai key";
        break;
      case ':':
        if (i >= 2 && has_at(content, i, "://") && url_password_at(content, i))
          return "url password";
        break;
      default:
        break;
    }
  }
  const std::size_t slash = path.find_last_of("/\\");
  const std::string name =
      to_lower(slash == std::string_view::npos ? path : path.substr(slash + 1));
  if (is_config_extension(extension_of(name)) && config_has_secret(content))
    return "config password";
  return {};
}

bool looks_like_secret(std::string_view path, std::string_view content) {
  return !secret_rule(path, content).empty();
}

std::string redact_credentials(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  const auto is_space = [](char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; };
  std::size_t i = 0;
  while (i < text.size()) {
    // scheme://user:password@host — the authority ends at '/', '?', '#' or a space.
    if (text.compare(i, 3, "://") == 0) {
      out += "://";
      i += 3;
      std::size_t end = i;
      while (end < text.size() && text[end] != '/' && text[end] != '?' && text[end] != '#' &&
             !is_space(text[end])) {
        ++end;
      }
      const std::string_view authority = text.substr(i, end - i);
      const std::size_t at = authority.rfind('@');
      const std::size_t colon = at == std::string_view::npos ? at : authority.substr(0, at).find(':');
      if (colon != std::string_view::npos) {
        out.append(authority.substr(0, colon + 1));
        out += "***";
        out.append(authority.substr(at));
      } else {
        out.append(authority);
      }
      i = end;
      continue;
    }
    // password=value, password = 'quoted value', ?password=value&…
    if (text.size() - i >= 8 && to_lower(text.substr(i, 8)) == "password") {
      std::size_t j = i + 8;
      while (j < text.size() && is_space(text[j])) ++j;
      if (j < text.size() && text[j] == '=') {
        ++j;
        while (j < text.size() && is_space(text[j])) ++j;
        out.append(text.substr(i, j - i));
        out += "***";
        if (j < text.size() && text[j] == '\'') {
          ++j;
          while (j < text.size() && text[j] != '\'') j += text[j] == '\\' ? 2 : 1;
          i = std::min(j + 1, text.size());
        } else {
          while (j < text.size() && !is_space(text[j]) && text[j] != '&' && text[j] != ';') ++j;
          i = j;
        }
        continue;
      }
    }
    out += text[i++];
  }
  return out;
}

}  // namespace kasava::util
