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

// A remote, and kasava run from an empty folder with its own cache, where the remote's clone
// lands at `clone`.
struct CacheRun {
  Remote remote;
  TempDir cache{"cache"};
  TempDir cwd{"cwd"};
  RunOptions options;
  std::string clone;
  CacheRun() {
    options.cwd = cwd.path();
    options.set_env("XDG_CACHE_HOME", cache.path());
    clone = cache.path() + "/kasava/repos/local" + remote.served.path() + "/project";
  }
};

}  // namespace

TEST_CASE("index URL: clones a file:// repository into the cache and indexes it there") {
  CacheRun setup;
  auto& [remote, cache, cwd, options, clone] = setup;

  const RunResult run = run_kasava({"index", remote.url, "--json"}, options);
  INFO(describe(run));
  REQUIRE(run.exit_code == 0);
  const JsonValue summary = parse_json_output(run.out);
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

TEST_CASE("index URL: the summary says where the URL was cloned") {
  CacheRun setup;
  auto& [remote, cache, cwd, options, clone] = setup;

  const RunResult text = run_kasava({"index", remote.url}, options);
  INFO(describe(text));
  REQUIRE(text.exit_code == 0);
  const auto lines = lines_of(text.out);
  REQUIRE(lines.size() == 2);
  CHECK(lines[1] == "cloned into " + clone + " (ask it with `kasava -C " + remote.url +
                        " ask QUESTION`)");

  const RunResult json = run_kasava({"index", remote.url, "--json"}, options);
  INFO(describe(json));
  REQUIRE(json.exit_code == 0);
  CHECK(parse_json_output(json.out)["cloned_into"].as_string() == clone);

  // A folder is not cloned: no such line, no such field.
  const RunResult folder = run_kasava({"index", clone, "--json"}, options);
  INFO(describe(folder));
  REQUIRE(folder.exit_code == 0);
  CHECK_FALSE(parse_json_output(folder.out).contains("cloned_into"));
}

TEST_CASE("kasava -C URL: index clones the URL, then ask, status and verify use that clone's index") {
  CacheRun setup;
  auto& [remote, cache, cwd, options, clone] = setup;

  const RunResult index = run_kasava({"-C", remote.url, "index", "--json"}, options);
  INFO(describe(index));
  REQUIRE(index.exit_code == 0);
  CHECK(parse_json_output(index.out)["root"].as_string() == clone);
  CHECK(fs::is_regular_file(clone + "/.kasava/index.db"));

  const RunResult ask = run_kasava({"-C", remote.url, "ask", "parseConfig", "--json"}, options);
  INFO(describe(ask));
  REQUIRE(ask.exit_code == 0);
  CHECK(parse_json_output(ask.out)["results"][0]["path"].as_string() == "internal/config/config.go");

  const RunResult status = run_kasava({"-C", remote.url, "status", "--json"}, options);
  INFO(describe(status));
  REQUIRE(status.exit_code == 0);
  CHECK(parse_json_output(status.out)["index"].as_string() == clone + "/.kasava/index.db");

  const RunResult verify = run_kasava({"-C", remote.url, "verify"}, options);
  INFO(describe(verify));
  CHECK(verify.exit_code == 0);
  CHECK(fs::is_empty(cwd.path()));
}

TEST_CASE("kasava -C URL: a URL never indexed is a one-line error saying to run `kasava index URL`") {
  CacheRun setup;
  auto& [remote, cache, cwd, options, clone] = setup;

  for (const char* command : {"ask", "status", "verify"}) {
    std::vector<std::string> args = {"-C", remote.url, command};
    if (std::string(command) == "ask") args.emplace_back("parseConfig");
    const RunResult run = run_kasava(args, options);
    INFO(describe(run));
    CHECK(run.exit_code == 2);
    CHECK(run.out.empty());
    CHECK(lines_of(run.err).size() == 1);
    CHECK_THAT(run.err, Catch::StartsWith("kasava: error: -C '" + remote.url + "': not indexed") &&
                            Catch::Contains("run `kasava index " + remote.url + "` first"));
  }
  // Nothing was cloned or written by asking.
  CHECK_FALSE(fs::exists(cache.path() + "/kasava/repos"));
  CHECK(fs::is_empty(cwd.path()));
}
