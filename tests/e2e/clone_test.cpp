// End-to-end: `kasava index URL` clones into $XDG_CACHE_HOME/kasava/repos/<host>/<path>,
// indexes the clone, and fetches it again on later runs; served here by a local bare repository.
#include <catch2/catch.hpp>

#include <filesystem>

#include "tests/e2e/harness.hpp"

using namespace kasava::e2e;
using kasava::util::JsonValue;

namespace fs = std::filesystem;

namespace {

// A source repository with the sample project and a bare clone of it to serve as the remote.
struct Remote {
  FixtureRepo source;
  TempDir served{"remote"};
  std::string bare_path;
  std::string url;
  Remote() {
    write_sample_project(source);
    source.commit_all("sample");
    bare_path = served / "project.git";
    source.git({"clone", "-q", "--bare", source.root(), bare_path});
    url = "file://" + bare_path;
  }
  // Commits a new file in the source and pushes it to the bare repository.
  void push_file(const std::string& path, const std::string& content) const {
    source.write(path, content);
    source.commit_all("more");
    source.git({"push", "-q", bare_path, "HEAD:main"});
  }
};

}  // namespace

TEST_CASE("index URL: clones a file:// repository into the cache and indexes it there") {
  Remote remote;
  TempDir cache("cache");
  TempDir cwd("cwd");
  RunOptions options;
  options.cwd = cwd.path();
  options.set_env("XDG_CACHE_HOME", cache.path());

  const RunResult run = run_kasava({"index", remote.url, "--json"}, options);
  INFO(describe(run));
  REQUIRE(run.exit_code == 0);
  const JsonValue summary = parse_json_output(run.out);
  const std::string clone =
      cache.path() + "/kasava/repos/local" + remote.served.path() + "/project";
  CHECK(summary["root"].as_string() == clone);
  CHECK(summary["index"].as_string() == clone + "/.kasava/index.db");
  CHECK(summary["files"].get_integer() == static_cast<std::int64_t>(sample_file_count()));
  CHECK(fs::is_regular_file(clone + "/.kasava/index.db"));
  CHECK(fs::is_regular_file(clone + "/internal/config/config.go"));
  // Nothing was written where the command ran, nor into the remote.
  CHECK(fs::is_empty(cwd.path()));
  CHECK_FALSE(fs::exists(remote.bare_path + "/.kasava"));

  const RunResult ask =
      run_kasava({"--index", clone + "/.kasava/index.db", "ask", "parseConfig", "--json"}, options);
  INFO(describe(ask));
  REQUIRE(ask.exit_code == 0);
  const JsonValue document = parse_json_output(ask.out);
  CHECK(document["results"][0]["symbol"].as_string() == "parseConfig");
  CHECK(document["results"][0]["path"].as_string() == "internal/config/config.go");
}

TEST_CASE("index URL: a later run fetches new commits and indexes only what changed") {
  Remote remote;
  TempDir cache("cache");
  RunOptions options;
  options.cwd = cache.path();
  options.set_env("XDG_CACHE_HOME", cache.path());
  REQUIRE(run_kasava({"index", remote.url}, options).exit_code == 0);

  remote.push_file("src/fetched.py",
                   "def fetched_after_clone():\n    \"\"\"Arrived by fetch.\"\"\"\n    return 1\n");
  const RunResult again = run_kasava({"index", remote.url, "--json"}, options);
  INFO(describe(again));
  REQUIRE(again.exit_code == 0);
  const JsonValue summary = parse_json_output(again.out);
  CHECK(summary["parsed"].get_integer() == 1);
  CHECK(summary["unchanged"].get_integer() == static_cast<std::int64_t>(sample_file_count()));
  const std::string head = remote.source.git({"rev-parse", "HEAD"});
  CHECK(summary["commit"].as_string() + "\n" == head);

  const std::string index = summary["index"].as_string();
  const RunResult ask =
      run_kasava({"--index", index, "ask", "fetched_after_clone", "--json"}, options);
  INFO(describe(ask));
  REQUIRE(ask.exit_code == 0);
  CHECK(parse_json_output(ask.out)["results"][0]["path"].as_string() == "src/fetched.py");
}

TEST_CASE("index URL: a bare repository given as a path needs --rev, and works with it") {
  Remote remote;
  TempDir cwd("cwd");
  RunOptions options;
  options.cwd = cwd.path();
  TempDir elsewhere("index");
  const std::string index = elsewhere / "bare.db";

  const RunResult without = run_kasava({"--index", index, "index", remote.bare_path}, options);
  INFO(describe(without));
  CHECK(without.exit_code == 2);
  CHECK(without.out.empty());
  CHECK_THAT(without.err, Catch::StartsWith("kasava: error: ") && Catch::Contains("--rev"));

  const RunResult with =
      run_kasava({"--index", index, "index", remote.bare_path, "--rev", "main", "--json"}, options);
  INFO(describe(with));
  REQUIRE(with.exit_code == 0);
  CHECK(parse_json_output(with.out)["files"].get_integer() ==
        static_cast<std::int64_t>(sample_file_count()));
  const RunResult ask = run_kasava({"--index", index, "ask", "parseConfig", "--json"}, options);
  INFO(describe(ask));
  REQUIRE(ask.exit_code == 0);
  CHECK(parse_json_output(ask.out)["results"][0]["symbol"].as_string() == "parseConfig");
}
