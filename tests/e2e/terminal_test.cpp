// End-to-end: what changes when kasava writes to a terminal — colour by default (unless
// NO_COLOR, TERM=dumb or --color never), results grouped under one heading per file, progress
// on stderr during `index` (unless --quiet) — and what never does: stdout carries results
// only, JSON and JSON Lines are never coloured.
#include <catch2/catch.hpp>

#include "tests/e2e/harness.hpp"

using namespace kasava::e2e;
using kasava::util::JsonValue;

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
    "ask: on a terminal the output is coloured by default, NO_COLOR and --color never turn it "
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

  // The same places as in a pipe, colours aside: there each names its file, here the file
  // is a heading.
  const RunResult piped = sample.repo.kasava({"ask", "parseConfig"});
  REQUIRE(piped.exit_code == 0);
  CHECK_FALSE(has_ansi_escapes(piped.out));
  CHECK_THAT(piped.out, Catch::StartsWith("internal/config/config.go:"));
  CHECK_THAT(plain.out, Catch::StartsWith("internal/config/config.go\n"));
}

TEST_CASE("ask: on a terminal results are grouped under one heading per file") {
  FixtureRepo repo;
  repo.write("src/shapes.py",
             "def area_of_circle(radius):\n    return 3.14159 * radius * radius\n\n\n"
             "def area_of_square(side):\n    return side * side\n\n\n"
             "def area_of_triangle(base, height):\n    return base * height / 2\n");
  repo.write("src/other.py", "def area_report(shapes):\n    return [s.area() for s in shapes]\n");
  repo.commit_all("shapes");
  RunOptions terminal;
  terminal.stdout_mode = StdoutMode::terminal;
  terminal.set_env("TERM", "xterm-256color");
  terminal.set_env("NO_COLOR", "1");
  const RunResult run = repo.kasava({"ask", "area of", "--limit", "10"}, terminal);
  INFO(describe(run));
  REQUIRE(run.exit_code == 0);
  const auto lines = lines_of(run.out);
  int shapes_headings = 0;
  int shapes_places = 0;
  for (const auto& line : lines) {
    if (line == "src/shapes.py") ++shapes_headings;
    if (line.find("function area_of_") != std::string::npos) ++shapes_places;
    CHECK(line.find("src/shapes.py:") == std::string::npos);  // no per-place path
  }
  CHECK(shapes_headings == 1);
  CHECK(shapes_places == 3);
  // A place under its heading: `5-6  function area_of_square  (0.42)` and numbered lines.
  CHECK_THAT(run.out, Catch::Contains("\n5-6  function area_of_square  (") &&
                          Catch::Contains("  5  def area_of_square(side):"));

  // In a pipe each place starts with its path instead.
  const RunResult piped = repo.kasava({"ask", "area of", "--limit", "10"});
  REQUIRE(piped.exit_code == 0);
  CHECK_THAT(piped.out, Catch::Contains("src/shapes.py:5-6  function area_of_square"));
}

TEST_CASE("ask: colour highlights the symbol, --color always colours a pipe, never JSON") {
  Sample sample;
  REQUIRE(sample.repo.kasava({"index"}).exit_code == 0);
  const RunResult always = sample.repo.kasava({"--color", "always", "ask", "parseConfig"});
  INFO(describe(always));
  REQUIRE(always.exit_code == 0);
  CHECK_THAT(always.out, Catch::Contains("\033[1;33mparseConfig\033[0m"));

  const RunResult json = sample.repo.kasava({"--color", "always", "ask", "parseConfig", "--json"});
  REQUIRE(json.exit_code == 0);
  CHECK_FALSE(has_ansi_escapes(json.out));
  const RunResult jsonl = sample.repo.kasava({"--color", "always", "ask", "parseConfig", "--jsonl"});
  REQUIRE(jsonl.exit_code == 0);
  CHECK_FALSE(has_ansi_escapes(jsonl.out));

  // NO_COLOR wins over CLICOLOR_FORCE; CLICOLOR_FORCE=0 forces nothing.
  RunOptions both;
  both.set_env("NO_COLOR", "1");
  both.set_env("CLICOLOR_FORCE", "1");
  CHECK_FALSE(has_ansi_escapes(sample.repo.kasava({"ask", "parseConfig"}, both).out));
  RunOptions zero;
  zero.set_env("CLICOLOR_FORCE", "0");
  CHECK_FALSE(has_ansi_escapes(sample.repo.kasava({"ask", "parseConfig"}, zero).out));
}

TEST_CASE("ask --jsonl: one result object per line, the same results as --json") {
  Sample sample;
  REQUIRE(sample.repo.kasava({"index"}).exit_code == 0);
  const RunResult jsonl = sample.repo.kasava({"ask", "configuration file", "--jsonl"});
  INFO(describe(jsonl));
  REQUIRE(jsonl.exit_code == 0);
  const RunResult json = sample.repo.kasava({"ask", "configuration file", "--json"});
  REQUIRE(json.exit_code == 0);
  const JsonValue document = parse_json_output(json.out);
  const auto lines = lines_of(jsonl.out);
  REQUIRE(lines.size() == document["results"].size());
  for (std::size_t i = 0; i < lines.size(); ++i) {
    auto line = kasava::util::parse_json(lines[i]);
    REQUIRE(line.ok());
    CHECK(*line == document["results"][i]);
  }
  const RunResult none = sample.repo.kasava({"ask", "xylophone quokka zeppelin", "--jsonl"});
  CHECK(none.exit_code == 1);
  CHECK(none.out.empty());
  const RunResult both = sample.repo.kasava({"ask", "x", "--json", "--jsonl"});
  CHECK(both.exit_code == 2);
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
    "index: progress on stderr only when it is a terminal, never with --quiet, stdout keeps the "
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

TEST_CASE("help: usage lines name the program, and every command has examples") {
  const RunResult top = run_kasava({"--help"});
  REQUIRE(top.exit_code == 0);
  CHECK_THAT(top.out, Catch::Contains("Usage: kasava [OPTIONS] SUBCOMMAND") &&
                          Catch::Contains("Examples:") && Catch::Contains("mcp"));
  for (const std::string command : {"index", "ask", "status", "mcp"}) {
    INFO(command);
    const RunResult help = run_kasava({"help", command});
    REQUIRE(help.exit_code == 0);
    CHECK_THAT(help.out, Catch::Contains("Usage: kasava " + command + " [OPTIONS]") &&
                             Catch::Contains("Examples:\n  kasava"));
    const RunResult dashed = run_kasava({command, "--help"});
    REQUIRE(dashed.exit_code == 0);
    CHECK(dashed.out == help.out);
  }
}
