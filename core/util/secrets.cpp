// The secret-file rules (see secrets.hpp).
#include "core/util/secrets.hpp"

#include <string>

#include "core/util/strings.hpp"

namespace kasava::util {
namespace {

bool has_private_key_header(std::string_view content) {
  static constexpr std::string_view begin = "-----BEGIN ";
  for (std::size_t at = content.find(begin); at != std::string_view::npos;
       at = content.find(begin, at + 1)) {
    // "-----BEGIN RSA PRIVATE KEY-----", "-----BEGIN OPENSSH PRIVATE KEY-----",
    // "-----BEGIN ENCRYPTED PRIVATE KEY-----", "-----BEGIN PGP PRIVATE KEY BLOCK-----"…
    const std::size_t line_end = content.find('\n', at);
    const std::string_view line =
        content.substr(at, line_end == std::string_view::npos ? 200 : line_end - at);
    if (line.find("PRIVATE KEY") != std::string_view::npos) return true;
  }
  return false;
}

}  // namespace

bool looks_like_secret(std::string_view path, std::string_view content) {
  const std::size_t slash = path.find_last_of("/\\");
  const std::string name =
      util::to_lower(slash == std::string_view::npos ? path : path.substr(slash + 1));
  if (name == ".env" || util::starts_with(name, ".env.")) return true;
  for (std::string_view suffix : {".pem", ".key", ".p12", ".pfx", ".keystore", ".jks"})
    if (util::ends_with(name, suffix)) return true;
  for (std::string_view prefix : {"id_rsa", "id_dsa", "id_ecdsa", "id_ed25519", "credentials"})
    if (util::starts_with(name, prefix)) return true;
  for (std::string_view exact : {".netrc", "_netrc", ".npmrc", ".pypirc", ".pgpass"})
    if (name == exact) return true;
  return has_private_key_header(content);
}

}  // namespace kasava::util
