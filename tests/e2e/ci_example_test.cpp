// End-to-end: the CI recipes of examples/ (GitHub Actions and GitLab CI) work as written — their
// kasava steps are cut out of the YAML and run with bash on a fixture repository: index a
// commit, answers as JSON, the --min-score gate in both directions, the index file answering
// without the source tree, and identical output for identical inputs; their publish steps put
// the default branch's index into a real PostgreSQL store under the CI's repository and branch
// names. Also `cmake --install` into a temporary prefix, as the CI recipes install kasava.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/util/files.hpp"
#include "tests/e2e/harness.hpp"
#include "tests/support/postgres_server.hpp"

using namespace kasava::e2e;
using kasava::util::JsonValue;

namespace fs = std::filesystem;

namespace {

/// The lines between `# --- <part>` and `# --- end of <part> ---` of an example file, without
/// the YAML indentation.
std::string kasava_steps(const std::string& example, const std::string& part = "kasava steps") {
  const auto text = kasava::util::read_file(std::string(KASAVA_SOURCE_DIR) + "/examples/" + example);
  REQUIRE(text.ok());
  std::string script;
  bool inside = false;
  std::size_t indent = std::string::npos;
  for (const auto& line : lines_of(*text)) {
    const auto start = line.find_first_not_of(' ');
    const std::string body = start == std::string::npos ? "" : line.substr(start);
    if (body.rfind("# --- " + part, 0) == 0) {
      inside = true;
      indent = start;
      continue;
    }
    if (body.rfind("# --- end of " + part, 0) == 0) break;
    if (inside) script += (line.size() > indent ? line.substr(indent) : body) + "\n";
  }
  REQUIRE(inside);
  REQUIRE_THAT(script, Catch::Contains("kasava "));
  return script;
}

/// Runs a CI script in `cwd` with kasava on PATH and the commit in the CI's variables.
RunResult run_ci_script(const std::string& script, const std::string& cwd, const std::string& sha,
                        RunOptions options = {}) {
  options.cwd = cwd;
  const std::string bin_dir = fs::path(KASAVA_BINARY).parent_path().string();
  const char* path = std::getenv("PATH");
  options.set_env("PATH", bin_dir + ":" + (path != nullptr ? path : "/usr/bin:/bin"));
  options.set_env("GITHUB_SHA", sha);
  options.set_env("CI_COMMIT_SHA", sha);
  options.timeout = std::chrono::seconds(90);
  return run_program("bash", {"-c", "set -euo pipefail\n" + script}, options);
}

std::string read_text(const std::string& path) {
  auto text = kasava::util::read_file(path);
  INFO(path);
  REQUIRE(text.ok());
  return *text;
}

}  // namespace

TEST_CASE("ci examples: the kasava steps of both workflows run on a fixture repository") {
  for (const std::string example : {"github-actions.yml", "gitlab-ci.yml"}) {
    INFO(example);
    FixtureRepo repo;
    write_sample_project(repo);
    const std::string sha = repo.commit_all("sample");
    const std::string script = kasava_steps(example);

    const RunResult run = run_ci_script(script, repo.root(), sha);
    INFO(describe(run));
    REQUIRE(run.exit_code == 0);

    const JsonValue answers = parse_json_output(repo.read("kasava-answers.json"));
    check_ask_schema(answers, "where is the configuration file read", &repo);
    REQUIRE(answers["results"].size() >= 1);
    CHECK(answers["results"][std::size_t{0}]["path"] == JsonValue("internal/config/config.go"));

    const JsonValue gate = parse_json_output(repo.read("kasava-gate.json"));
    REQUIRE(gate["results"].size() >= 1);
    CHECK(gate["results"][std::size_t{0}]["path"] == JsonValue("web/src/retry.ts"));
    for (const auto& result : gate["results"].as_array()) CHECK(result["score"].as_number() >= 0.3);

    const JsonValue status = parse_json_output(repo.read("kasava-status.json"));
    CHECK(status["commit"] == JsonValue(sha));
    CHECK(repo.read("kasava-forbidden.jsonl").empty());
    const auto jsonl = lines_of(repo.read("kasava-answers.jsonl"));
    CHECK_FALSE(jsonl.empty());
    for (const auto& line : jsonl) CHECK(kasava::util::parse_json(line).ok());
  }
}

TEST_CASE("ci examples: the publish steps of both workflows put the default branch into the "
          "team's store under the CI's names", "[store]") {
  using kasava::test_support::PostgresServer;
  PostgresServer& server = PostgresServer::shared();
  const std::string database = server.create_database("ci_example");
  const std::string uri = server.uri(database);
  for (const std::string example : {"github-actions.yml", "gitlab-ci.yml"}) {
    INFO(example);
    FixtureRepo repo;
    write_sample_project(repo);
    const std::string sha = repo.commit_all("sample");
    const std::string name = example == "github-actions.yml" ? "acme/from-github" : "acme/from-gitlab";
    RunOptions options;
    options.set_env("KASAVA_STORE", uri);
    options.set_env("GITHUB_REPOSITORY", name).set_env("GITHUB_REF_NAME", "trunk");
    options.set_env("CI_PROJECT_PATH", name).set_env("CI_COMMIT_BRANCH", "trunk");
    const RunResult run = run_ci_script(kasava_steps(example, "kasava publish steps"), repo.root(), sha, options);
    INFO(describe(run));
    REQUIRE(run.exit_code == 0);
    CHECK(run.out.find(server.password()) == std::string::npos);
    CHECK(run.err.find(server.password()) == std::string::npos);
  }
  FixtureRepo anywhere;
  const RunResult status = anywhere.kasava({"status", "--store", uri, "--json"});
  INFO(describe(status));
  REQUIRE(status.exit_code == 0);
  const JsonValue document = parse_json_output(status.out);
  const JsonValue& refs = document["refs"];
  REQUIRE(refs.size() == 2);
  for (std::size_t i = 0; i < refs.size(); ++i) {
    CHECK(refs[i]["ref"] == JsonValue("trunk"));
    CHECK(refs[i]["commit"].as_string().size() == 40);
  }
  CHECK(refs[std::size_t{0}]["repository"] == JsonValue("acme/from-github"));
  CHECK(refs[std::size_t{1}]["repository"] == JsonValue("acme/from-gitlab"));
}

TEST_CASE("index: --name and --ref without a store are refused before anything is indexed") {
  FixtureRepo repo;
  write_sample_project(repo);
  repo.commit_all("sample");
  const RunResult run = repo.kasava({"index", "--ref", "main"});
  INFO(describe(run));
  CHECK(run.exit_code == 2);
  CHECK(lines_of(run.err).size() == 1);
  CHECK(run.err.find("no store is named") != std::string::npos);
  CHECK_FALSE(fs::exists(fs::path(repo.root()) / ".kasava" / "index.db"));
}

TEST_CASE("ci examples: the reverse gate fails the job when the forbidden code is there") {
  FixtureRepo repo;
  write_sample_project(repo);
  repo.write("src/legacy/auth.py",
             "import hashlib\n\n\ndef md5_password_hash(password):\n"
             "    \"\"\"MD5 password hashing for the legacy login.\"\"\"\n"
             "    return hashlib.md5(password.encode()).hexdigest()\n");
  const std::string sha = repo.commit_all("legacy");
  const RunResult run = run_ci_script(kasava_steps("github-actions.yml"), repo.root(), sha);
  INFO(describe(run));
  CHECK(run.exit_code == 1);
  CHECK_THAT(run.err, Catch::Contains("md5 password hashing is back") &&
                          Catch::Contains("src/legacy/auth.py"));
}

TEST_CASE("ci examples: the index alone answers, and identical inputs give identical output") {
  FixtureRepo repo;
  write_sample_project(repo);
  const std::string sha = repo.commit_all("sample");
  const std::string script = kasava_steps("gitlab-ci.yml");
  REQUIRE(run_ci_script(script, repo.root(), sha).exit_code == 0);

  // A second checkout of the same commit elsewhere (another CI runner): byte-identical answers.
  TempDir other("ci-clone");
  const std::string clone = other / "repo";
  REQUIRE(run_program("git", {"clone", "-q", repo.root(), clone}).exit_code == 0);
  const RunResult again = run_ci_script(script, clone, sha);
  INFO(describe(again));
  REQUIRE(again.exit_code == 0);
  for (const char* file : {"kasava-answers.json", "kasava-gate.json", "kasava-answers.jsonl"}) {
    INFO(file);
    CHECK(read_text(clone + "/" + file) == repo.read(file));
  }

  // The artifact in a folder of its own, the source tree gone: the same answers.
  TempDir artifact("ci-artifact");
  fs::copy_file(repo.path("kasava-index.db"), artifact / "index.db");
  fs::remove_all(clone);
  RunOptions in_artifact;
  in_artifact.cwd = artifact.path();
  const RunResult alone =
      run_kasava({"--index", artifact / "index.db", "ask", "configuration", "--jsonl"}, in_artifact);
  INFO(describe(alone));
  REQUIRE(alone.exit_code == 0);
  CHECK(alone.out == repo.read("kasava-answers.jsonl"));
  CHECK(alone.err.empty());
}

TEST_CASE("install: cmake --install puts the binary, man page and completions under the prefix") {
  const std::string build_dir = fs::path(KASAVA_BINARY).parent_path().string();
  TempDir prefix("prefix");
  const RunResult install = run_program("cmake", {"--install", build_dir, "--prefix", prefix.path()});
  INFO(describe(install));
  REQUIRE(install.exit_code == 0);
  for (const char* file : {"bin/kasava", "share/man/man1/kasava.1",
                           "share/bash-completion/completions/kasava",
                           "share/zsh/site-functions/_kasava",
                           "share/fish/vendor_completions.d/kasava.fish"}) {
    INFO(file);
    CHECK(fs::is_regular_file(prefix / file));
  }
  const RunResult version = run_program(prefix / "bin/kasava", {"--version"});
  CHECK(version.exit_code == 0);
  CHECK_THAT(version.out, Catch::StartsWith("kasava "));
  CHECK(read_text(prefix / "share/man/man1/kasava.1") ==
        read_text(std::string(KASAVA_SOURCE_DIR) + "/man/kasava.1"));
}
