// End-to-end: small holes found in review (issue 17) — input checked at the command line
// (blank queries, NaN scores, a zero size limit), what a repository may not decide (a remote
// model for its code), what file names and contents may not do to a terminal, and what a
// failure leaves behind or says (a failed clone, an unwritable repository).
#include <catch2/catch.hpp>

#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "tests/e2e/harness.hpp"

using namespace kasava::e2e;
using kasava::util::JsonValue;

namespace fs = std::filesystem;

namespace {

void check_usage_error(const RunResult& run, const std::string& expected) {
  INFO(describe(run));
  CHECK(run.exit_code == 2);
  CHECK(run.out.empty());
  CHECK(lines_of(run.err).size() == 1);
  CHECK_THAT(run.err, Catch::StartsWith("kasava: error: "));
  CHECK_THAT(run.err, Catch::Contains(expected));
}

bool has_byte(const std::string& text, const std::string& bytes) {
  return text.find(bytes) != std::string::npos;
}

}  // namespace

TEST_CASE("ask: an empty or blank query is a usage error, exit 2 with a message") {
  FixtureRepo repo;  // with an index: the query is refused, not searched (and found nothing)
  repo.write("src/app.py", "def handler():\n    return 1\n");
  REQUIRE(repo.kasava({"index"}).exit_code == 0);
  check_usage_error(repo.kasava({"ask", ""}), "query: the question is empty");
  check_usage_error(repo.kasava({"ask", "  \t "}), "query: the question is empty");
}

TEST_CASE("ask: --min-score nan and inf are refused like any value out of 0-1") {
  TempDir empty("min-score");
  RunOptions options;
  options.cwd = empty.path();
  for (const char* value : {"nan", "NaN", "inf", "-inf", "1e999", "1.5", "-0.1", "abc"}) {
    INFO(value);
    check_usage_error(run_kasava({"ask", "x", "--min-score", value}, options),
                      "--min-score: value '" + std::string(value) + "' is not a number from 0 to 1");
  }
  // The bounds themselves are fine: the error is about the missing index, not the score.
  const RunResult one = run_kasava({"ask", "x", "--min-score", "1"}, options);
  CHECK_THAT(one.err, Catch::Contains("kasava index"));
}

TEST_CASE("index: --max-file-size 0 says what is expected, without a 309-digit number") {
  TempDir empty("max-size");
  RunOptions options;
  options.cwd = empty.path();
  for (const char* value : {"0", "-1", "x"}) {
    INFO(value);
    const RunResult run = run_kasava({"index", "--max-file-size", value}, options);
    check_usage_error(run, "--max-file-size: value '" + std::string(value) +
                               "' is not a positive whole number of bytes");
    CHECK(run.err.size() < 160);
  }
}

TEST_CASE("ask: control characters of file names and code are shown escaped, not sent to the terminal") {
  FixtureRepo repo;
  const std::string name = "evil\x1b]0;pwned\x07\x1b[2J.py";
  repo.write(name, "def zebra_handler():\n"
                   "    \"\"\"Handle zebras.\"\"\"\n"
                   "    print(\"\x1b[2J\x1b]0;owned\x07 and \xc2\x9b" "31m\")\n"
                   "    return 1\r\x1b[Kfake\n");
  REQUIRE(repo.kasava({"index"}).exit_code == 0);

  const RunResult piped = repo.kasava({"ask", "zebra handler"});
  INFO(describe(piped));
  REQUIRE(piped.exit_code == 0);
  CHECK_FALSE(has_byte(piped.out, "\x1b"));
  CHECK_FALSE(has_byte(piped.out, "\x07"));
  CHECK_FALSE(has_byte(piped.out, "\xc2\x9b"));
  CHECK_FALSE(has_byte(piped.out, "\r"));
  CHECK(has_byte(piped.out, "evil\\x1b]0;pwned\\x07\\x1b[2J.py:1-4"));
  CHECK(has_byte(piped.out, "print(\"\\x1b[2J\\x1b]0;owned\\x07 and \\u009b31m\")"));
  CHECK(has_byte(piped.out, "return 1\\r\\x1b[Kfake"));

  // On a terminal kasava's own colours are there, the file's sequences are not.
  RunOptions terminal;
  terminal.stdout_mode = StdoutMode::terminal;
  const RunResult shown = repo.kasava({"ask", "zebra handler"}, terminal);
  INFO(describe(shown));
  REQUIRE(shown.exit_code == 0);
  CHECK(has_ansi_escapes(shown.out));
  CHECK_FALSE(has_byte(shown.out, "\x1b]0;"));
  CHECK_FALSE(has_byte(shown.out, "\x1b[2J"));
  CHECK_FALSE(has_byte(shown.out, "\x07"));
  CHECK(has_byte(shown.out, "evil\\x1b]0;pwned\\x07\\x1b[2J.py"));

  // JSON escapes in its own way and keeps the name as it is.
  const RunResult json = repo.kasava({"ask", "zebra handler", "--json"});
  REQUIRE(json.exit_code == 0);
  CHECK(parse_json_output(json.out)["results"][std::size_t{0}]["path"].as_string() == name);

  // Errors that quote a path escape it too.
  const RunResult missing = repo.kasava({"index", "/nonexistent/\x1b[2Jx\x1b]0;t\x07"});
  CHECK(missing.exit_code == 2);
  CHECK_FALSE(has_byte(missing.err, "\x1b"));
  CHECK_FALSE(has_byte(missing.err, "\x07"));
  CHECK(has_byte(missing.err, "'/nonexistent/\\x1b[2Jx\\x1b]0;t\\x07'"));
  CHECK(lines_of(missing.err).size() == 1);
}

TEST_CASE("ask: a file name with a newline keeps path:line output one place per line") {
  FixtureRepo repo;
  repo.write("two\nlines.py", "def quokka_counter():\n    \"\"\"Count quokkas.\"\"\"\n    return 2\n");
  REQUIRE(repo.kasava({"index"}).exit_code == 0);
  const RunResult run = repo.kasava({"ask", "quokka counter"});
  INFO(describe(run));
  REQUIRE(run.exit_code == 0);
  const auto lines = lines_of(run.out);
  REQUIRE_FALSE(lines.empty());
  CHECK_THAT(lines[0], Catch::StartsWith("two\\nlines.py:1-3"));
  for (const auto& line : lines) CHECK_FALSE(line.rfind("lines.py:", 0) == 0);
}

TEST_CASE("settings: a repository's config may not choose a remote model for its code") {
  FixtureRepo repo;
  repo.write("src/app.py", "def handler():\n    return 1\n");
  repo.write(".kasava/config", "model = openai:from-repo\nallow_repository_models = true\n");
  TempDir home("home");
  fs::create_directories(home / "kasava");
  RunOptions env;
  env.set_env("XDG_CONFIG_HOME", home.path());
  const auto model_of = [&](const RunResult& run) {
    INFO(describe(run));
    REQUIRE(run.exit_code == 0);
    return parse_json_output(run.out)["model"].as_string();
  };

  // Refused with a warning (the repository cannot allow itself either): the built-in model.
  const RunResult refused = repo.kasava({"index", "--dry-run", "--json"}, env);
  CHECK(model_of(refused).find("from-repo") == std::string::npos);
  CHECK(has_byte(refused.err, "ignoring model 'openai:from-repo' in '" + repo.path(".kasava/config") +
                                  ":1': a repository's config may not send its code to a remote model"));
  CHECK(has_byte(refused.err, "ignoring 'allow_repository_models'"));

  // The user's own choice applies instead.
  std::ofstream(home / "kasava/config") << "model = openai:from-user\n";
  CHECK_THAT(model_of(repo.kasava({"index", "--dry-run", "--json"}, env)),
             Catch::StartsWith("openai:from-user"));

  // The user may allow it: in their config, in the environment, or by choosing the same model.
  std::ofstream(home / "kasava/config") << "allow_repository_models = true\n";
  CHECK_THAT(model_of(repo.kasava({"index", "--dry-run", "--json"}, env)),
             Catch::StartsWith("openai:from-repo"));
  std::ofstream(home / "kasava/config") << "model = openai:from-repo\n";
  const RunResult same = repo.kasava({"index", "--dry-run", "--json"}, env);
  CHECK_THAT(model_of(same), Catch::StartsWith("openai:from-repo"));
  CHECK_FALSE(has_byte(same.err, "ignoring model"));
  std::ofstream(home / "kasava/config") << "";
  RunOptions allowed = env;
  allowed.set_env("KASAVA_ALLOW_REPOSITORY_MODELS", "1");
  CHECK_THAT(model_of(repo.kasava({"index", "--dry-run", "--json"}, allowed)),
             Catch::StartsWith("openai:from-repo"));

  // A local model file is the repository's to choose; a chat model for --answer is not.
  repo.write(".kasava/config", "model = builtin\nanswer_model = anthropic:from-repo\n");
  REQUIRE(repo.kasava({"index"}, env).exit_code == 0);
  const RunResult status = repo.kasava({"status", "--json"}, env);
  INFO(describe(status));
  REQUIRE(status.exit_code == 0);
  const JsonValue settings = parse_json_output(status.out)["settings"];
  CHECK(settings["model"]["origin"].as_string() == "repository config");
  CHECK(settings["answer_model"]["origin"].as_string() == "unset");
  CHECK(has_byte(status.err, "ignoring answer_model 'anthropic:from-repo'"));
}

TEST_CASE("index URL: a failed clone leaves no folders in the cache") {
  TempDir cache("failed-clone");
  RunOptions options;
  options.cwd = cache.path();
  options.set_env("XDG_CACHE_HOME", cache.path());
  const RunResult run = run_kasava({"index", "file:///nonexistent/kasava-e2e/project.git"}, options);
  INFO(describe(run));
  CHECK(run.exit_code == 2);
  CHECK_THAT(run.err, Catch::Contains("cloning"));
  CHECK(fs::is_empty(cache.path()));
}

TEST_CASE("index: a repository the user cannot write to names the folder it could not create") {
  TempDir parent("unwritable");
  const std::string root = parent / "repo";
  fs::create_directories(root);
  std::ofstream(root + "/app.py") << "def handler():\n    return 1\n";
  // Others (the unprivileged user below) may read and enter, nobody but root may write.
  fs::permissions(parent.path(), fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec |
                                     fs::perms::others_read | fs::perms::others_exec);
  fs::permissions(root, fs::perms::owner_read | fs::perms::owner_exec | fs::perms::group_read |
                            fs::perms::group_exec | fs::perms::others_read | fs::perms::others_exec);
  RunOptions options;
  options.cwd = root;
  // Permissions do not stop root: as root (CI), run kasava as the user nobody.
  const RunResult run =
      ::geteuid() == 0
          ? run_program("setpriv", {"--reuid=65534", "--regid=65534", "--clear-groups", KASAVA_BINARY,
                                    "index", root},
                        options)
          : run_kasava({"index", root}, options);
  fs::permissions(root, fs::perms::owner_all);
  INFO(describe(run));
  CHECK(run.exit_code == 2);
  CHECK(run.err == "kasava: error: creating folder '" + root + "/.kasava': Permission denied\n");
}
