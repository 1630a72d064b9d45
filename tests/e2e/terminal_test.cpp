// End-to-end: what changes when kasava writes to a terminal — colour by default (unless
// NO_COLOR or --color never), progress on stderr during `index` (unless --quiet) — and what
// never does: stdout carries results only.
#include <catch2/catch.hpp>

#include "tests/e2e/harness.hpp"

using namespace kasava::e2e;

namespace {

struct Sample {
  FixtureRepo repo;
  Sample() {
    write_sample_project(repo);
    repo.commit_all("sample");
  }
};

}  // namespace

TEST_CASE(
    "ask: on a terminal the output is coloured by default; NO_COLOR and --color never turn it "
    "off") {
  Sample sample;
  REQUIRE(sample.repo.kasava({"index"}).exit_code == 0);
  RunOptions terminal;
  terminal.stdout_mode = StdoutMode::terminal;
  terminal.set_env("TERM", "xterm-256color");

  const RunResult coloured = sample.repo.kasava({"ask", "parseConfig"}, terminal);
  INFO(describe(coloured));
  REQUIRE(coloured.exit_code == 0);
  CHECK(has_ansi_escapes(coloured.out));
  CHECK_THAT(coloured.out, Catch::Contains("internal/config/config.go"));

  RunOptions no_color = terminal;
  no_color.set_env("NO_COLOR", "1");
  const RunResult plain = sample.repo.kasava({"ask", "parseConfig"}, no_color);
  INFO(describe(plain));
  REQUIRE(plain.exit_code == 0);
  CHECK_FALSE(has_ansi_escapes(plain.out));

  const RunResult never = sample.repo.kasava({"--color", "never", "ask", "parseConfig"}, terminal);
  REQUIRE(never.exit_code == 0);
  CHECK_FALSE(has_ansi_escapes(never.out));

  RunOptions dumb = terminal;
  dumb.set_env("TERM", "dumb");
  const RunResult dumb_run = sample.repo.kasava({"ask", "parseConfig"}, dumb);
  REQUIRE(dumb_run.exit_code == 0);
  CHECK_FALSE(has_ansi_escapes(dumb_run.out));

  // The text is the same as in a pipe, colours aside.
  const RunResult piped = sample.repo.kasava({"ask", "parseConfig"});
  REQUIRE(piped.exit_code == 0);
  CHECK(plain.out == piped.out);
}

TEST_CASE("ask: CLICOLOR_FORCE colours the output in a pipe") {
  Sample sample;
  REQUIRE(sample.repo.kasava({"index"}).exit_code == 0);
  RunOptions forced;
  forced.set_env("CLICOLOR_FORCE", "1");
  const RunResult run = sample.repo.kasava({"ask", "parseConfig"}, forced);
  INFO(describe(run));
  REQUIRE(run.exit_code == 0);
  CHECK(has_ansi_escapes(run.out));
}

TEST_CASE(
    "index: progress on stderr only when it is a terminal, never with --quiet; stdout keeps the "
    "summary") {
  Sample sample;
  RunOptions terminal_err;
  terminal_err.stderr_terminal = true;
  const RunResult run = sample.repo.kasava({"index"}, terminal_err);
  INFO(describe(run));
  REQUIRE(run.exit_code == 0);
  CHECK_THAT(run.err, Catch::Contains("indexing: ") && Catch::Contains(" files"));
  // The summary alone on stdout, without progress.
  CHECK(lines_of(run.out).size() == 1);
  CHECK(run.out.find("indexing:") == std::string::npos);
  CHECK_FALSE(has_ansi_escapes(run.out));

  sample.repo.append("src/cli.py", "# edit\n");
  const RunResult quiet = sample.repo.kasava({"--quiet", "index"}, terminal_err);
  INFO(describe(quiet));
  REQUIRE(quiet.exit_code == 0);
  CHECK(quiet.err.empty());

  // In a pipe, no progress at all.
  sample.repo.append("src/cli.py", "# again\n");
  const RunResult piped = sample.repo.kasava({"index"});
  REQUIRE(piped.exit_code == 0);
  CHECK(piped.err.empty());
}

TEST_CASE("ask: on a terminal, the refresh before the search does not leave progress on stdout") {
  Sample sample;
  RunOptions both;
  both.stdout_mode = StdoutMode::terminal;
  both.stderr_terminal = true;
  const RunResult run = sample.repo.kasava({"ask", "parseConfig", "--json"}, both);
  INFO(describe(run));
  REQUIRE(run.exit_code == 0);
  // JSON is never coloured and stdout holds only the document.
  parse_json_output(run.out);
}
