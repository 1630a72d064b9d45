// End-to-end: the global `-C PATH`, as git's: every command runs as if started in PATH, and
// relative paths in the other options are relative to PATH; a PATH that does not exist is a
// one-line error. (`-C URL` is in clone_test.cpp, beside the local remote it needs.)
#include <catch2/catch.hpp>

#include <filesystem>

#include "tests/e2e/harness.hpp"

using namespace kasava::e2e;
using kasava::util::JsonValue;

namespace fs = std::filesystem;

namespace {

// A committed sample project, and a folder outside it to run kasava from.
struct Elsewhere {
  FixtureRepo repo;
  TempDir other{"elsewhere"};
  RunOptions options;
  Elsewhere() {
    write_sample_project(repo);
    repo.commit_all("sample");
    options.cwd = other.path();
  }
  RunResult run(const std::vector<std::string>& args) const { return run_kasava(args, options); }
};

}  // namespace

TEST_CASE("kasava -C PATH: index, ask, status and verify run as if started in PATH") {
  Elsewhere here;

  const RunResult index = here.run({"-C", here.repo.root(), "index", "--json"});
  INFO(describe(index));
  REQUIRE(index.exit_code == 0);
  CHECK(parse_json_output(index.out)["root"].as_string() == here.repo.root());
  CHECK(parse_json_output(index.out)["index"].as_string() == here.repo.index_path());
  CHECK(fs::is_regular_file(here.repo.index_path()));

  const RunResult ask = here.run({"-C", here.repo.root(), "ask", "parseConfig", "--json"});
  INFO(describe(ask));
  REQUIRE(ask.exit_code == 0);
  CHECK(parse_json_output(ask.out)["results"][0]["symbol"].as_string() == "parseConfig");

  const RunResult status = here.run({"-C", here.repo.root(), "status", "--json"});
  INFO(describe(status));
  REQUIRE(status.exit_code == 0);
  const JsonValue document = parse_json_output(status.out);
  CHECK(document["index"].as_string() == here.repo.index_path());
  CHECK(document["stale_files"].get_integer() == 0);

  const RunResult verify = here.run({"-C", here.repo.root(), "verify", "--json"});
  INFO(describe(verify));
  REQUIRE(verify.exit_code == 0);
  CHECK(parse_json_output(verify.out)["source_compared"].get_bool() == true);

  // Nothing was written where kasava was started.
  CHECK(fs::is_empty(here.other.path()));
}

TEST_CASE("kasava -C PATH: a relative PATH, and a relative --index, are read from where they lead") {
  Elsewhere here;
  // Started in the repository's parent, naming it by its last component.
  RunOptions parent = here.options;
  parent.cwd = fs::path(here.repo.root()).parent_path().string();
  const std::string name = fs::path(here.repo.root()).filename().string();

  const RunResult index =
      run_kasava({"-C", name, "--index", "kept/custom.db", "index", "--json"}, parent);
  INFO(describe(index));
  REQUIRE(index.exit_code == 0);
  CHECK(parse_json_output(index.out)["index"].as_string() == here.repo.path("kept/custom.db"));
  CHECK(fs::is_regular_file(here.repo.path("kept/custom.db")));
  CHECK_FALSE(fs::exists(here.repo.index_path()));

  const RunResult status =
      here.run({"-C", here.repo.root(), "--index", "kept/custom.db", "status", "--json"});
  INFO(describe(status));
  REQUIRE(status.exit_code == 0);
  CHECK(parse_json_output(status.out)["index"].as_string() == here.repo.path("kept/custom.db"));

  const RunResult ask = here.run(
      {"-C", here.repo.root(), "--index", "kept/custom.db", "ask", "parseConfig", "--json"});
  INFO(describe(ask));
  REQUIRE(ask.exit_code == 0);
  CHECK(parse_json_output(ask.out)["results"][0]["symbol"].as_string() == "parseConfig");
}

TEST_CASE("kasava -C PATH: a folder that does not exist is a one-line error, exit 2") {
  Elsewhere here;
  const std::string missing = here.other / "no-such-folder";
  for (const char* command : {"ask", "index", "status", "verify"}) {
    std::vector<std::string> args = {"-C", missing, command};
    if (std::string(command) == "ask") args.emplace_back("parseConfig");
    const RunResult run = here.run(args);
    INFO(describe(run));
    CHECK(run.exit_code == 2);
    CHECK(run.out.empty());
    CHECK(run.err == "kasava: error: -C '" + missing + "': no such file or directory\n");
  }
  CHECK(fs::is_empty(here.other.path()));
}
