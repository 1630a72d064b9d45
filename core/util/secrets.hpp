// Which files look like secrets and must never be stored, served or sent to a remote model:
// environment and credential files by name, and any file whose content holds a well-known
// credential shape (private keys, cloud and provider keys, passwords in URLs and config).
#pragma once

#include <string>
#include <string_view>

namespace kasava::util {

/// The rule that makes a file look like a secret, or "" when none does. Rules (names are
/// matched on the last path component, case-insensitively):
/// - "name": `.env`, `.env.*`, `*.env`, `.envrc`, `*.pem`, `*.key`, `*.p12`/`*.pfx`,
///   `*.keystore`/`*.jks`, `*.ppk`, `*.kdbx`, `*.tfstate*`, `id_rsa*`/`id_ed25519*`/`id_ecdsa*`/
///   `id_dsa*`, `.netrc`, `.npmrc`, `.pypirc`, `.pgpass`, `.htpasswd`, `.s3cfg`, `.dockercfg`,
///   `.docker/config.json`, and `credentials` as a word of the name (`aws_credentials`,
///   `.git-credentials`, not `CallCredentials.yaml`) or `secrets.*`, either without an
///   extension or with a config or data one (`.json`, `.yaml`, `.ini`, `.csv`, … — not
///   `credentials.py`, which is code, checked by content like any other);
/// - "private key": a PEM `-----BEGIN … PRIVATE KEY-----` line (RSA, EC, DSA, OPENSSH, PKCS#8,
///   ENCRYPTED, PGP … PRIVATE KEY BLOCK) followed by a key body (not a bare header, which code
///   that parses keys holds), or a PuTTY key (`PuTTY-User-Key-File-N:` at a line start);
/// - "aws key": an access key id (`AKIA`/`ASIA` + 16) with a 40-character secret within 1 KiB;
///   "github token", "slack token", "stripe key", "google api key", "openai key",
///   "anthropic key", "age key": the providers' token shapes, with a random-looking body;
/// - "url password": `scheme://user:password@host` with a real-looking password;
/// - "config password": in config files (`.yaml`, `.toml`, `.ini`, `.cfg`, `.conf`,
///   `.properties`, `.json`, `.tfvars`), `password|passwd|secret|token|api_key… = literal`.
/// Placeholders never count: `xxx`, `changeme`, `<password>`, `${VAR}`, `{{ var }}`, values
/// holding "example", "your", "dummy", "fake", "sample", "placeholder", "redacted", "test".
/// `content` may be a prefix of the file. One pass over the content for anchor bytes.
std::string_view secret_rule(std::string_view path, std::string_view content);

/// `!secret_rule(path, content).empty()`.
bool looks_like_secret(std::string_view path, std::string_view content);

/// `text` with the passwords of connection strings and URLs replaced by "***": the password of
/// `scheme://user:password@host` and the value of every `password=…` (libpq's key=value form,
/// quoted or not, and a URI's `?password=` parameter; any case, `PGPASSWORD=` too). For
/// messages that may quote what the user typed (a mistyped option's value, a bad argument).
std::string redact_credentials(std::string_view text);

}  // namespace kasava::util
