// Tests of the secret-file rules (core/util/secrets.cpp). The fake keys are random and are
// assembled from pieces at run time, so this file itself holds no credential shape (and a
// secret scanner, or kasava indexing its own source, does not take it for one).
#include <catch2/catch.hpp>

#include <string>

#include "core/util/secrets.hpp"

using kasava::util::looks_like_secret;
using kasava::util::secret_rule;

namespace {

// "-----BEGIN <kind>-----" and its END line, assembled.
std::string pem_begin(const std::string& kind) {
  return std::string("-----") + "BEGIN " + kind + "-----";
}
std::string pem_end(const std::string& kind) {
  return std::string("-----") + "END " + kind + "-----";
}

const std::string k_body1 = "E00NT3g1VI2Yom9sU6SmuY+B0iIskpv5wy+I5kqpGOmmWKob4tdh16heWn3tOCzV";
const std::string k_body2 = "XyMSiUTl2G3yFJgT6EdW+OMU8LAii6gS/VPIcDU733GMk7pOpxpTyG8qEj/tLo1l";
const std::string k_aws_id = std::string("AK") + "IAP4JFOAFLKMUQ8RUV";
const std::string k_aws_secret = std::string("twcLfq1sPjkFrq6Wo8jn") + "Jx/pxLcQE7//q7kmCHnB";
const std::string k_github = std::string("gh") + "p_Xq3150pbSzMw0bhm7GGTTevPxoaa9q0paXVF";
const std::string k_github_pat = std::string("github") +
                                 "_pat_VplDFkfnm9PRgDUtcK6Duq_LVmO7TCGFWmQ9EoWKzXo0cX9dLnp6QT9ii"
                                 "oS3Km3Q1XeuDG8fz7ydO6dsI8";
const std::string k_slack =
    std::string("xo") + "xb-391555534483-4303408665693-B4xjB81kDBIEJYPjIDC46NAf";
const std::string k_stripe = std::string("sk") + "_live_gddTUwh2OqtBvSveyMQXsraF";
const std::string k_google = std::string("AI") + "za4BEod_aOrjzamM-U1UOn-zkKxYdtqSsVN1F";
const std::string k_openai =
    std::string("sk") + "-proj-QDTacskbcpq5zE1TaXf7DlupWbeo8J99ES2CmUXgboKiJqzV";
const std::string k_anthropic = std::string("sk") +
                                "-ant-api03-DyKspPmSLLhEHJI1tO78E4mXQFRNE7LuuRVeSlUmJL5YiCXQ3IVt3d"
                                "9_5bBzcRjTAFRxgc6RDgUsg4G3";
const std::string k_age =
    std::string("AGE-") + "SECRET-KEY-1TJ6B39T4VEVZWMI52TPORPSGQJBF4T0S3JBUWVIBH078CX6U0VZM1Y0Z68";

}  // namespace

TEST_CASE("util::looks_like_secret flags secret file names") {
  for (const char* path : {".env",
                           "app/.env",
                           ".env.local",
                           ".env.production",
                           "config/prod.env",
                           ".envrc",
                           "certs/server.pem",
                           "tls/server.key",
                           "KEYS/Server.KEY",
                           "home/.ssh/id_rsa",
                           "id_rsa.pub",
                           "id_ed25519",
                           "credentials",
                           "aws/credentials.json",
                           "deploy/credentials.yml",
                           "deploy/aws_credentials",
                           ".git-credentials",
                           "gcp-credentials.json",
                           "store.p12",
                           ".netrc",
                           ".npmrc",
                           ".pgpass",
                           ".htpasswd",
                           "keys/server.ppk",
                           "vault.kdbx",
                           "release.jks",
                           "infra/terraform.tfstate",
                           "infra/terraform.tfstate.backup",
                           "config/secrets.yaml",
                           "config/secrets.yml",
                           "secrets.json",
                           "home/.docker/config.json"}) {
    INFO(path);
    CHECK(secret_rule(path, "harmless") == "name");
  }
}

TEST_CASE("util::looks_like_secret passes ordinary files") {
  for (const char* path :
       {"src/main.cpp", "env.cpp", "src/environment.py", "docs/keys.md", "keyboard.c", "monkey.js",
        "src/credential_store.rs", ".envrc.md", "pem_reader.go", "README",
        "google/auth/credentials.py", "schemas/CallCredentials.yaml", "app/secrets.py",
        "docker/config.json", "env/setup.sh", "src/secret_rule.hpp"}) {
    INFO(path);
    CHECK(!looks_like_secret(path, "int main() { return 0; }"));
  }
}

TEST_CASE("util::secret_rule finds private keys in every common container") {
  const std::string rsa = pem_begin("RSA PRIVATE KEY") + "\n" + k_body1 + "\n" + k_body2 + "\n" +
                          pem_end("RSA PRIVATE KEY") + "\n";
  CHECK(secret_rule("config/deploy.txt", "x\n" + rsa) == "private key");
  CHECK(secret_rule("a.yaml", "key: |\n  " + pem_begin("OPENSSH PRIVATE KEY") + "\n  " + k_body1 +
                                  "\n") == "private key");
  CHECK(secret_rule("a.txt", pem_begin("PRIVATE KEY") + "\r\n" + k_body1) == "private key");
  CHECK(secret_rule("a.txt", pem_begin("EC PRIVATE KEY") + "\nMIIEow\n" +
                                 pem_end("EC PRIVATE KEY")) == "private key");
  // Encrypted PEM with its header lines; PGP with an armour header and a blank line.
  CHECK(secret_rule("k.txt", pem_begin("RSA PRIVATE KEY") +
                                 "\nProc-Type: 4,ENCRYPTED\nDEK-Info: AES-128-CBC,ABC\n\n" +
                                 k_body1) == "private key");
  CHECK(secret_rule("k.asc", pem_begin("PGP PRIVATE KEY BLOCK") + "\nVersion: GnuPG v2\n\n" +
                                 k_body2) == "private key");
  CHECK(secret_rule("k.txt", pem_begin("ENCRYPTED PRIVATE KEY") + "\n" + k_body2) == "private key");
  // In source: a JSON service-account file, Go concatenation, a Python string.
  CHECK(secret_rule("sa.json", "{\"private_key\": \"" + pem_begin("PRIVATE KEY") + "\\n" + k_body1 +
                                   "\\n\"}") == "private key");
  CHECK(secret_rule("k.go", "var key = \"" + pem_begin("RSA PRIVATE KEY") + "\\n\" +\n\t\"" +
                                k_body1 + "\\n\"") == "private key");
  CHECK(secret_rule("k.py", "KEY = '''" + pem_begin("PRIVATE KEY") + "\n" + k_body2 + "\n'''") ==
        "private key");
  // PuTTY, at the start of a line.
  CHECK(secret_rule("k.txt", std::string("PuTTY-User-Key-") +
                                 "File-3: ssh-ed25519\nEncryption: none\n") == "private key");
}

TEST_CASE("util::secret_rule passes key headers without a key") {
  // Code that reads or writes keys names the header without holding one.
  CHECK(secret_rule("pem.py", "if line == '" + pem_begin("RSA PRIVATE KEY") +
                                  "':\n    found = True\n") == "");
  CHECK(secret_rule("pem.go",
                    "const h = \"" + pem_begin("PRIVATE KEY") + "\\n\" + body + \"\\n\"\n") == "");
  CHECK(secret_rule("doc.md", "A key starts with `" + pem_begin("OPENSSH PRIVATE KEY") + "`.\n") ==
        "");
  CHECK(secret_rule("cert.txt", pem_begin("CERTIFICATE") + "\n" + k_body1 + "\n") == "");
  CHECK(secret_rule("pub.txt", pem_begin("PUBLIC KEY") + "\n" + k_body1 + "\n") == "");
  CHECK(secret_rule("doc.md", "the string PRIVATE KEY alone is fine") == "");
  CHECK(secret_rule("ppk.py",
                    std::string("if header.startswith('PuTTY-User-") + "Key-File-'):\n") == "");
}

TEST_CASE("util::secret_rule finds an AWS key pair, not an id alone or the documented example") {
  CHECK(secret_rule("app/settings.py", "AWS_ACCESS_KEY_ID = '" + k_aws_id +
                                           "'\nAWS_SECRET_ACCESS_KEY = '" + k_aws_secret + "'\n") ==
        "aws key");
  CHECK(secret_rule("deploy/env.sh", "export A=" + k_aws_id + " B=" + k_aws_secret) == "aws key");
  CHECK(secret_rule("a.py", "ID = '" + k_aws_id + "'\n") == "");     // an id is not a key
  CHECK(secret_rule("a.py", "S = '" + k_aws_secret + "'\n") == "");  // nor a lone string
  CHECK(secret_rule("a.py", std::string("id = 'AKIA") +
                                "IOSFODNN7EXAMPLE'\nkey = 'wJalrXUtnFEMI/K7MDENG/" +
                                "bPxRfiCYEXAMPLEKEY'\n") == "");
  CHECK(secret_rule("a.py", std::string("id = 'AKIA") + "XXXXXXXXXXXXXXXX'\nkey = '" +
                                std::string(40, 'x') + "'\n") == "");
}

TEST_CASE("util::secret_rule finds provider tokens, not their placeholders") {
  CHECK(secret_rule("ci.py", "TOKEN = \"" + k_github + "\"") == "github token");
  CHECK(secret_rule("ci.py", "TOKEN = \"" + k_github_pat + "\"") == "github token");
  CHECK(secret_rule("bot.js", "const t = '" + k_slack + "';") == "slack token");
  CHECK(secret_rule("pay.rb", "Stripe.api_key = '" + k_stripe + "'") == "stripe key");
  CHECK(secret_rule("maps.ts", "const key = \"" + k_google + "\";") == "google api key");
  CHECK(secret_rule("llm.py", "client = OpenAI(api_key=\"" + k_openai + "\")") == "openai key");
  CHECK(secret_rule("llm.py", "key = \"" + k_anthropic + "\"") == "anthropic key");
  CHECK(secret_rule("keys.txt", "# created: 2024\n" + k_age + "\n") == "age key");

  for (const std::string& text :
       {std::string("TOKEN = 'gh") + "p_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx'",
        std::string("TOKEN = 'gh") + "p_your_token_here'",
        std::string("slack: xo") + "xb-your-bot-token",
        std::string("key = 'sk") + "_live_XXXXXXXXXXXXXXXXXXXXXXXX'",
        std::string("key = 'sk") + "-...'",
        std::string("OPENAI_API_KEY=sk") + "-your-key-here-0123456789abcdefghij",
        std::string("model = 'task-force-of-many-words-without-digits-at-all'"),
        std::string("desk-") + "proj-QDTacskbcpq5zE1TaXf7DlupWbeo8J99ES2CmUXgboKiJqzV",
        std::string("key = \"AI") + "zaSyXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXX\"",
        std::string("os.environ['GITHUB_TOKEN']"),
        std::string("token = ${{ secrets.GITHUB_TOKEN }}")}) {
    INFO(text);
    CHECK(secret_rule("a.py", text) == "");
  }
}

TEST_CASE("util::secret_rule finds passwords in connection strings, not placeholders") {
  CHECK(secret_rule("db.py",
                    "DB = 'postgres://app:Zq8vLr2mTx"
                    "@db.internal:5432/app'") == "url password");
  CHECK(secret_rule("settings.go",
                    "url := \"mongodb+srv://svc:k7Pq9rXw2"
                    "@cluster0.mongodb.net\"") == "url password");
  CHECK(secret_rule("cfg.rb",
                    "REDIS = \"redis://:N8s2kdLq0w"
                    "@cache:6379/0\"") == "url password");
  for (const char* text :
       {"postgres://user:password@localhost/db", "mysql://root:changeme@db/app",
        "postgres://app:${DB_PASSWORD}@db/app", "amqp://guest:guest@rabbit:5672/",
        "http://localhost:8080/path", "https://user:pass@example.com", "http://a:b@host",
        "ftp://joe:p4ssw0rd@ftp.host", "postgres://app:%(password)s@db", "redis://u:****@h",
        "postgres://<user>:<password>@<host>/db", "http://john.doe:xxxxxxxx@proxy:3128"}) {
    INFO(text);
    CHECK(secret_rule("a.py", text) == "");
  }
}

TEST_CASE("util::secret_rule finds password and token assignments in config files") {
  CHECK(secret_rule("config/db.yaml", "database:\n  host: db\n  password: Zq8vLr2mTx\n") ==
        "config password");
  CHECK(secret_rule("app.toml", "[db]\npassword = \"Zq8vLr2mTx!\"\n") == "config password");
  CHECK(secret_rule("app.ini", "[auth]\nclient_secret = 9f8Kq2LmZx7Rt4Vb1Nc6\n") ==
        "config password");
  CHECK(secret_rule("app.json", "{\n  \"apiKey\": \"9f8Kq2LmZx7Rt4Vb1Nc6\"\n}\n") ==
        "config password");
  CHECK(secret_rule("app.properties", "spring.datasource.password=Zq8vLr2mTx\n") ==
        "config password");
  CHECK(secret_rule("app.conf", "  - auth_token: 'a8F3kL0pQ9zX2cV7bN4m'\n") == "config password");
  // The same line in source code is not a config rule: code is checked for key shapes only.
  CHECK(secret_rule("app.py", "password = \"Zq8vLr2mTx\"\n") == "");
  for (const char* text : {"password: changeme",
                           "password: \"\"",
                           "password: ${DB_PASSWORD}",
                           "password: <password>",
                           "password: \"{{ .Values.db.password }}\"",
                           "password: !vault |",
                           "password: null",
                           "password: *default_password",
                           "password = %(db_pass)s",
                           "password: xxxxxxxx",
                           "password: your-password",
                           "password: abc",
                           "password_min_length: 12",
                           "secret_name: prod-db-credentials",
                           "token: short1",
                           "max_token: 4096",
                           "\"eos_token\": \"</s>\"",
                           "\"pad_token\": \"[PAD]\"",
                           "\"output_token\": \"StreamDescription.Shards[-1].ShardId\"",
                           "token: ${{ secrets.GITHUB_TOKEN }}",
                           "api_key: $(cat /run/secrets/key)",
                           "secretKeyRef: {name: db, key: password}",
                           "password: example-password-123"}) {
    INFO(text);
    CHECK(secret_rule("values.yaml", text) == "");
  }
}

TEST_CASE("util::redact_credentials hides the passwords of URLs and connection strings") {
  using kasava::util::redact_credentials;
  CHECK(redact_credentials("not expected: postgresql://ci:hunter2x@db.example.com:5432/kasava --store") ==
        "not expected: postgresql://ci:***@db.example.com:5432/kasava --store");
  CHECK(redact_credentials("https://user:p%40ss@host/path?x=1") == "https://user:***@host/path?x=1");
  CHECK(redact_credentials("host=db password=hunter2x dbname=k") == "host=db password=*** dbname=k");
  CHECK(redact_credentials("host=db password = 'two words\\' here' user=ci") == "host=db password = *** user=ci");
  CHECK(redact_credentials("postgresql://db/k?sslmode=require&password=hunter2x&user=ci") ==
        "postgresql://db/k?sslmode=require&password=***&user=ci");
  CHECK(redact_credentials("PGPASSWORD=hunter2x kasava") == "PGPASSWORD=*** kasava");
  // Nothing to hide: unchanged.
  CHECK(redact_credentials("postgresql://ci@db/kasava and https://example.com/a:b") ==
        "postgresql://ci@db/kasava and https://example.com/a:b");
  CHECK(redact_credentials("the password is required") == "the password is required");
  CHECK(redact_credentials("password=") == "password=***");
}
