// End-to-end: exit codes like grep (0 found, 1 nothing found, 2 error), --min-score gating,
// errors as one `kasava: error:` line on stderr with nothing on stdout, bad command lines,
// and a closed stdout (broken pipe) ending quietly.
#include <catch2/catch.hpp>

#include "tests/e2e/harness.hpp"

using namespace kasava::e2e;
using kasava::util::JsonValue;

namespace {

struct IndexedSample {
  FixtureRepo repo;
  IndexedSample() {
    write_sample_project(repo);
    repo.commit_all("sample");
    const RunResult run = repo.kasava({"index"});
    INFO(describe(run));
    REQUIRE(run.exit_code == 0);
  }
};

// An error: exit 2, nothing on stdout, exactly one line on stderr with the prefix.
void check_one_line_error(const RunResult& run) {
  INFO(describe(run));
  CHECK(run.exit_code == 2);
  CHECK(run.out.empty());
  CHECK(lines_of(run.err).size() == 1);
  CHECK_THAT(run.err, Catch::StartsWith("kasava: error: ") && Catch::EndsWith("\n"));
}

}  // namespace

TEST_CASE("ask: no result exits 1 with empty output, --json gives \"results\":[]") {
  IndexedSample sample;
  const std::string query = "xylophone quokka zeppelin";

  const RunResult human = sample.repo.kasava({"ask", query});
  INFO(describe(human));
  CHECK(human.exit_code == 1);
  CHECK(human.out.empty());
  CHECK(human.err.empty());

  const RunResult json = sample.repo.kasava({"ask", query, "--json"});
  INFO(describe(json));
  CHECK(json.exit_code == 1);
  CHECK(json.err.empty());
  const JsonValue document = parse_json_output(json.out);
  check_ask_schema(document, query, &sample.repo);
  CHECK(document["results"].is_array());
  CHECK(document["results"].size() == 0);
}

TEST_CASE("ask: a query of punctuation only finds nothing and is not an error") {
  IndexedSample sample;
  const RunResult run = sample.repo.kasava({"ask", "?!-- ::", "--json"});
  INFO(describe(run));
  CHECK(run.exit_code == 1);
  CHECK(parse_json_output(run.out)["results"].size() == 0);
}

TEST_CASE("ask: FTS syntax in a query is taken literally, not as an operator") {
  IndexedSample sample;
  for (const char* query : {"\"parseConfig", "parseConfig OR", "NEAR(parse config)",
                            "parse* AND -config", "config:parse", "^parse"}) {
    {
      INFO("query " << query);
      const RunResult run = sample.repo.kasava({"ask", query, "--json"});
      INFO(describe(run));
      CHECK((run.exit_code == 0 || run.exit_code == 1));
      CHECK(run.err.empty());
      parse_json_output(run.out);
    }
  }
}

TEST_CASE("ask --min-score: results below the score are dropped, and nothing left exits 1") {
  IndexedSample sample;
  const std::string query = "parse the configuration file";
  const RunResult all = sample.repo.kasava({"ask", query, "--json"});
  INFO(describe(all));
  REQUIRE(all.exit_code == 0);
  const JsonValue everything = parse_json_output(all.out);
  REQUIRE(everything["results"].size() >= 2);

  // A threshold between the best and the last score keeps only results at or above it.
  const double best = everything["results"][0]["score"].as_number();
  const double last = everything["results"][everything["results"].size() - 1]["score"].as_number();
  REQUIRE(best > last);
  const double threshold = (best + last) / 2;
  const RunResult some =
      sample.repo.kasava({"ask", query, "--json", "--min-score", std::to_string(threshold)});
  INFO(describe(some));
  REQUIRE(some.exit_code == 0);
  const JsonValue kept = parse_json_output(some.out);
  CHECK(kept["results"].size() >= 1);
  CHECK(kept["results"].size() < everything["results"].size());
  for (const auto& result : kept["results"].as_array())
    CHECK(result["score"].as_number() >= threshold);

  const RunResult none = sample.repo.kasava({"ask", query, "--json", "--min-score", "0.99"});
  INFO(describe(none));
  CHECK(none.exit_code == 1);
  CHECK(parse_json_output(none.out)["results"].size() == 0);
  CHECK(none.err.empty());

  const RunResult human = sample.repo.kasava({"ask", query, "--min-score", "0.99"});
  CHECK(human.exit_code == 1);
  CHECK(human.out.empty());
}

TEST_CASE("ask --min-score outside 0..1 and --limit 0 are errors") {
  IndexedSample sample;
  check_one_line_error(sample.repo.kasava({"ask", "parse", "--min-score", "1.5"}));
  check_one_line_error(sample.repo.kasava({"ask", "parse", "--min-score", "-0.1"}));
  check_one_line_error(sample.repo.kasava({"ask", "parse", "--limit", "0"}));
  check_one_line_error(sample.repo.kasava({"ask", "parse", "--limit", "many"}));
}

TEST_CASE("command line: unknown flags, commands, an invalid --mode or a missing query exit 2") {
  IndexedSample sample;
  const RunResult flag = sample.repo.kasava({"ask", "parse", "--no-such-flag"});
  check_one_line_error(flag);
  CHECK_THAT(flag.err, Catch::Contains("--no-such-flag"));

  const RunResult mode = sample.repo.kasava({"ask", "parse", "--mode", "fuzzy"});
  check_one_line_error(mode);
  CHECK_THAT(mode.err, Catch::Contains("fuzzy"));

  const RunResult color = sample.repo.kasava({"--color", "sometimes", "ask", "parse"});
  check_one_line_error(color);
  CHECK_THAT(color.err, Catch::Contains("sometimes"));

  const RunResult command = sample.repo.kasava({"serach", "parse"});
  check_one_line_error(command);
  CHECK_THAT(command.err, Catch::Contains("serach"));

  check_one_line_error(sample.repo.kasava({"ask"}));
  check_one_line_error(sample.repo.kasava({}));
  check_one_line_error(sample.repo.kasava({"index", "--max-file-size", "0"}));
}

TEST_CASE("command line: --help and --version print to stdout and exit 0, anywhere") {
  TempDir empty("help");
  RunOptions options;
  options.cwd = empty.path();
  for (const std::vector<std::string>& args : {std::vector<std::string>{"--help"},
                                               {"ask", "--help"},
                                               {"index", "--help"},
                                               {"status", "--help"}}) {
    {
      INFO("kasava " << args.front() << " " << args.back());
      const RunResult run = run_kasava(args, options);
      INFO(describe(run));
      CHECK(run.exit_code == 0);
      CHECK_THAT(run.out, Catch::Contains("Usage") || Catch::Contains("usage"));
      CHECK(run.err.empty());
    }
  }
  const RunResult version = run_kasava({"--version"}, options);
  INFO(describe(version));
  CHECK(version.exit_code == 0);
  CHECK_THAT(version.out, Catch::StartsWith("kasava "));
}

TEST_CASE("ask: a closed stdout (broken pipe) ends quietly, not by a signal") {
  IndexedSample sample;
  RunOptions closed;
  closed.stdout_mode = StdoutMode::closed_pipe;
  for (const std::vector<std::string>& args : {std::vector<std::string>{"ask", "parse config"},
                                               {"ask", "the", "--limit", "500", "--json"},
                                               {"status"},
                                               {"index", "--json"}}) {
    {
      INFO("kasava " << args[0] << " " << args.back());
      const RunResult run = sample.repo.kasava(args, closed);
      INFO(describe(run));
      CHECK(run.signal == 0);
      CHECK(run.exit_code == 0);
      CHECK(run.err.empty());
    }
  }
}

TEST_CASE("ask: stdout closed after the first byte of a large output (| head -c1) ends quietly") {
  FixtureRepo repo;
  std::string many;
  for (int i = 0; i < 400; ++i) {
    many += "def needle_handler_" + std::to_string(i) +
            "(request):\n    \"\"\"Handles needle request " + std::to_string(i) +
            " and logs it with enough words to make the snippet long.\"\"\"\n" +
            "    return request.respond(" + std::to_string(i) +
            ", 'needle haystack payload')\n\n\n";
  }
  repo.write("handlers.py", many);
  repo.commit_all("many");
  REQUIRE(repo.kasava({"index"}).exit_code == 0);

  // More than a pipe holds (64 KiB), so the write is still going when the reader leaves.
  const RunResult full = repo.kasava({"ask", "needle", "--limit", "400", "--json"});
  REQUIRE(full.exit_code == 0);
  REQUIRE(full.out.size() > 128 * 1024);

  RunOptions head;
  head.stdout_mode = StdoutMode::first_byte_pipe;
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"ask", "needle", "--limit", "400", "--json"},
        {"ask", "needle", "--limit", "400"}}) {
    INFO("kasava " << args[0] << " " << args.back());
    const RunResult run = repo.kasava(args, head);
    INFO(describe(run));
    CHECK(run.signal == 0);
    CHECK(run.exit_code == 0);
    CHECK(run.err.empty());
  }
}
