// Which files look like secrets and must never be sent to a remote embedding service:
// environment files, keys, certificates' private parts, credential stores.
#pragma once

#include <string_view>

namespace kasava::util {

/// True for `.env` and `.env.*`, `*.pem`, `*.key`, `*.p12`/`*.pfx`, `id_rsa*`/`id_ed25519*`/
/// `id_ecdsa*`/`id_dsa*`, `credentials*`, `.netrc`, `.npmrc`, `.pypirc`, and for any content
/// holding a PEM private-key header (`-----BEGIN … PRIVATE KEY-----`). Names are matched on
/// the last path component, case-insensitively. `content` may be a prefix of the file.
bool looks_like_secret(std::string_view path, std::string_view content);

}  // namespace kasava::util
