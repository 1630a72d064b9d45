// Tests of the secret-file rules (core/util/secrets.cpp).
#include <catch2/catch.hpp>

#include "core/util/secrets.hpp"

using kasava::util::looks_like_secret;

TEST_CASE("util::looks_like_secret flags secret file names") {
  for (const char* path :
       {".env", "app/.env", ".env.local", ".env.production", "certs/server.pem", "tls/server.key",
        "KEYS/Server.KEY", "home/.ssh/id_rsa", "id_rsa.pub", "id_ed25519", "credentials",
        "aws/credentials.json", "deploy/credentials.yml", "store.p12", ".netrc", ".npmrc"})
    CHECK(looks_like_secret(path, "harmless"));
}

TEST_CASE("util::looks_like_secret passes ordinary files") {
  for (const char* path :
       {"src/main.cpp", "env.cpp", "src/environment.py", "docs/keys.md", "keyboard.c", "monkey.js",
        "src/credential_store.rs", ".envrc.md", "pem_reader.go", "README"})
    CHECK(!looks_like_secret(path, "int main() { return 0; }"));
}

TEST_CASE("util::looks_like_secret flags private-key content anywhere") {
  CHECK(looks_like_secret(
      "config/deploy.txt",
      "x\n-----BEGIN RSA PRIVATE KEY-----\nMIIE...\n-----END RSA PRIVATE KEY-----\n"));
  CHECK(looks_like_secret("a.yaml", "key: |\n  -----BEGIN OPENSSH PRIVATE KEY-----\n"));
  CHECK(looks_like_secret("a.txt", "-----BEGIN ENCRYPTED PRIVATE KEY-----"));
  CHECK(looks_like_secret("a.txt", "-----BEGIN PRIVATE KEY-----"));
  CHECK(!looks_like_secret("cert.txt", "-----BEGIN CERTIFICATE-----\nMIIB\n"));
  CHECK(!looks_like_secret("pub.txt", "-----BEGIN PUBLIC KEY-----\n"));
  CHECK(!looks_like_secret("doc.md", "the string PRIVATE KEY alone is fine"));
}
