// Secrets recognised by name and by content: environment files, credential files, PuTTY keys
// and source files holding cloud keys or tokens are skipped as "secret" — never stored, so never
// found by `ask`, never in the index file — while ordinary code next to them is indexed. The fake
// keys are random and assembled at run time, so this source holds no credential shape itself.
#include <filesystem>
#include <fstream>
#include <sstream>

#include "harness.hpp"

namespace kasava::e2e {
namespace {

using util::JsonValue;

const std::string k_aws_id = std::string("AK") + "IAP4JFOAFLKMUQ8RUV";
const std::string k_aws_secret = std::string("twcLfq1sPjkFrq6Wo8jn") + "Jx/pxLcQE7//q7kmCHnB";
const std::string k_github = std::string("gh") + "p_Xq3150pbSzMw0bhm7GGTTevPxoaa9q0paXVF";
const std::string k_stripe = std::string("sk") + "_live_gddTUwh2OqtBvSveyMQXsraF";
const std::string k_db_password = "Zq8vLr2mTxKw41";
const std::string k_ppk_line = "E00NT3g1VI2Yom9sU6SmuY+B0iIskpv5wy+I5kqpGOmmWKob4tdh16heWn3tOCzV";
// In the ordinary file: a token of no credential shape, which `ask` must find.
const std::string k_control = "marmalade_control_Q7mZ2xR9vL4t";

std::string all_bytes_under(const std::string& folder) {
  std::string bytes;
  std::error_code error;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(folder, error)) {
    if (!entry.is_regular_file(error)) continue;
    std::ifstream file(entry.path(), std::ios::binary);
    std::stringstream text;
    text << file.rdbuf();
    bytes += text.str();
  }
  return bytes;
}

void write_project(const FixtureRepo& repo) {
  repo.write("config/prod.env",
             "DATABASE_URL=postgres://app:" + k_db_password + "@db.internal:5432/app\n");
  repo.write("deploy/aws_credentials", "[default]\naws_access_key_id = " + k_aws_id +
                                           "\naws_secret_access_key = " + k_aws_secret + "\n");
  repo.write("config/secrets.yaml", "payments:\n  stripe_key: " + k_stripe + "\n");
  repo.write(".envrc", "export GITHUB_TOKEN=" + k_github + "\n");
  repo.write("keys/deploy.ppk",
             std::string("PuTTY-User-Key-") +
                 "File-3: ssh-ed25519\nEncryption: none\nComment: deploy\n"
                 "Public-Lines: 1\nAAAAC3NzaC1lZDI1NTE5AAAAIB\nPrivate-Lines: 1\n" +
                 k_ppk_line + "\n");
  // Found by content: source holding a key pair and a token, a config file with a password.
  repo.write("src/uploader.py",
             "import boto3\n\n"
             "def upload_archive_to_bucket(path):\n"
             "    \"\"\"Upload the nightly archive to the backup bucket.\"\"\"\n"
             "    client = boto3.client('s3', aws_access_key_id='" +
                 k_aws_id +
                 "',\n"
                 "                          aws_secret_access_key='" +
                 k_aws_secret +
                 "')\n"
                 "    client.upload_file(path, 'backups', path)\n\n"
                 "GITHUB_TOKEN = '" +
                 k_github + "'\n");
  repo.write("config/database.yaml",
             "database:\n  host: db.internal\n  user: app\n  password: " + k_db_password + "\n");
  // Ordinary files beside them: indexed.
  repo.write("src/marmalade.py",
             "def compute_marmalade_ratio(oranges, sugar):\n"
             "    \"\"\"Ratio of oranges to sugar in the marmalade recipe.\"\"\"\n"
             "    marker = '" +
                 k_control +
                 "'\n"
                 "    return oranges / sugar\n");
  repo.write("config/app.yaml", "database:\n  password: ${DB_PASSWORD}\n  pool: 5\n");
}

}  // namespace

TEST_CASE("secrets: files holding credentials are skipped by name and by content") {
  FixtureRepo repo;
  write_project(repo);
  repo.commit_all("project");

  const RunResult indexed = repo.kasava({"index", "--json"});
  INFO(describe(indexed));
  REQUIRE(indexed.exit_code == 0);
  const JsonValue summary = parse_json_output(indexed.out);
  CHECK(summary["skipped_by_reason"]["secret"].get_integer().value_or(0) == 7);

  const std::vector<std::string> secret_paths = {
      "config/prod.env", "deploy/aws_credentials", "config/secrets.yaml", ".envrc",
      "keys/deploy.ppk", "src/uploader.py",        "config/database.yaml"};
  const std::vector<std::string> secret_values = {k_aws_id, k_aws_secret,  k_github,
                                                  k_stripe, k_db_password, k_ppk_line};

  // The ordinary files are found; no answer names a secret file or shows a secret value, even
  // asked for the value itself.
  const RunResult control = repo.kasava({"ask", "marmalade oranges sugar ratio", "--json"});
  INFO(describe(control));
  REQUIRE(control.exit_code == 0);
  const auto control_paths = result_paths(parse_json_output(control.out));
  CHECK(std::find(control_paths.begin(), control_paths.end(), "src/marmalade.py") !=
        control_paths.end());
  std::vector<std::string> queries = {"upload archive to backup bucket",
                                      "aws access key",
                                      "github token",
                                      "database password",
                                      "stripe payments",
                                      "PuTTY deploy key",
                                      "postgres database url"};
  queries.insert(queries.end(), secret_values.begin(), secret_values.end());
  for (const std::string& query : queries) {
    const RunResult ask = repo.kasava({"ask", query, "--json", "--limit", "50"});
    INFO(query);
    INFO(describe(ask));
    REQUIRE((ask.exit_code == 0 || ask.exit_code == 1));
    for (const std::string& path : result_paths(parse_json_output(ask.out))) {
      CHECK(std::find(secret_paths.begin(), secret_paths.end(), path) == secret_paths.end());
    }
    // The results, not the echo of the query.
    const std::size_t results = ask.out.find("\"results\"");
    REQUIRE(results != std::string::npos);
    for (const std::string& value : secret_values)
      CHECK(ask.out.find(value, results) == std::string::npos);
  }

  // Asked for a token of the ordinary file, `ask` finds it: so asking for a secret value, as
  // above, would have found its file had it been indexed.
  const RunResult token = repo.kasava({"ask", k_control, "--json"});
  INFO(describe(token));
  REQUIRE(token.exit_code == 0);
  const auto token_paths = result_paths(parse_json_output(token.out));
  REQUIRE(!token_paths.empty());
  CHECK(token_paths.front() == "src/marmalade.py");

  // No byte of the index holds a secret value (chunk text is compressed, so this catches
  // what is stored raw: paths, symbols, signatures, FTS terms; `ask` above covers the text).
  const std::string bytes = all_bytes_under(repo.path(".kasava"));
  for (const std::string& value : secret_values) {
    INFO(value);
    CHECK(bytes.find(value) == std::string::npos);
  }
}

}  // namespace kasava::e2e
