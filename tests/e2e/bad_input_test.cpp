// End-to-end: input that must not break kasava — no repository, missing paths, empty
// repositories, binary, huge, minified and invalid UTF-8 files, symlink loops and links out
// of the repository, unreachable URLs, corrupt index files.
#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>

#include "core/util/strings.hpp"
#include "tests/e2e/harness.hpp"

using namespace kasava::e2e;
using kasava::util::JsonValue;

namespace fs = std::filesystem;

namespace {

void check_one_line_error(const RunResult& run) {
  INFO(describe(run));
  CHECK(run.exit_code == 2);
  CHECK(run.out.empty());
  CHECK(lines_of(run.err).size() == 1);
  CHECK_THAT(run.err, Catch::StartsWith("kasava: error: "));
}

std::int64_t skipped_for(const JsonValue& summary, const std::string& reason) {
  return summary["skipped_by_reason"][reason].get_integer().value_or(0);
}

}  // namespace

TEST_CASE("ask: outside any repository and without an index, exit 2 and say to run kasava index") {
  TempDir empty("empty");
  RunOptions options;
  options.cwd = empty.path();
  for (const char* command : {"ask", "status"}) {
    {
      INFO(command);
      std::vector<std::string> args = {command};
      if (std::string(command) == "ask") args.push_back("anything");
      const RunResult run = run_kasava(args, options);
      check_one_line_error(run);
      CHECK_THAT(run.err, Catch::Contains("kasava index"));
      CHECK_FALSE(fs::exists(empty / ".kasava"));
    }
  }
}

TEST_CASE("index: a nonexistent path or a file instead of a folder is an error quoting the path") {
  TempDir empty("empty");
  RunOptions options;
  options.cwd = empty.path();
  const RunResult missing = run_kasava({"index", "/nonexistent/kasava-e2e"}, options);
  check_one_line_error(missing);
  CHECK_THAT(missing.err, Catch::Contains("'/nonexistent/kasava-e2e'"));

  FixtureRepo dir(GitInit::no);
  dir.write("plain.txt", "text\n");
  const RunResult file = run_kasava({"index", dir.path("plain.txt")}, options);
  check_one_line_error(file);
  std::string quoted = "'";  // built step by step: GCC 12 warns falsely on "'" + string
  quoted += dir.path("plain.txt");
  quoted += '\'';
  CHECK_THAT(file.err, Catch::Contains(quoted));
}

TEST_CASE("index: an empty git repository (no commits) indexes its untracked files") {
  FixtureRepo repo;
  {
    const RunResult run = repo.kasava({"index", "--json"});
    INFO(describe(run));
    REQUIRE(run.exit_code == 0);
    const JsonValue summary = parse_json_output(run.out);
    CHECK(summary["files"].get_integer() == 0);
    CHECK(summary["chunks"].get_integer() == 0);
    CHECK(summary["commit"].as_string().empty());
  }
  {
    const RunResult ask = repo.kasava({"ask", "anything", "--json"});
    INFO(describe(ask));
    CHECK(ask.exit_code == 1);
    CHECK(parse_json_output(ask.out)["results"].size() == 0);
  }
  repo.write("first.py", "def first_function_ever():\n    return 1\n");
  const RunResult run = repo.kasava({"ask", "first_function_ever", "--json"});
  INFO(describe(run));
  REQUIRE(run.exit_code == 0);
  CHECK(parse_json_output(run.out)["results"][0]["path"].as_string() == "first.py");
  const RunResult status = repo.kasava({"status", "--json"});
  INFO(describe(status));
  CHECK(status.exit_code == 0);
}

TEST_CASE("index: binary, oversized and minified files are skipped and counted") {
  FixtureRepo repo;
  write_sample_project(repo);
  std::string binary =
      "\x7f"
      "ELF";
  binary += std::string(64, '\0');
  binary += "binary_only_marker";
  repo.write("bin/tool.bin", binary);
  // 5 MB on one line: too large (over the 1 MiB default) and minified.
  repo.write("web/dist/bundle.js",
             "var huge_bundle_marker=1;" + std::string(5 * 1024 * 1024, 'x') + "\n");
  // 200 KB on one line, under the size limit: minified.
  std::string minified = "function minified_marker(){return 1}";
  while (minified.size() < 200 * 1024)
    minified += ";var a" + std::to_string(minified.size()) + "=1";
  repo.write("web/dist/app.js", minified + "\n");
  repo.commit_all("with junk");

  const RunResult run = repo.kasava({"index", "--json"});
  INFO(describe(run));
  REQUIRE(run.exit_code == 0);
  const JsonValue summary = parse_json_output(run.out);
  CHECK(summary["files"].get_integer() == static_cast<std::int64_t>(sample_file_count()) + 3);
  CHECK(summary["indexed"].get_integer() == static_cast<std::int64_t>(sample_file_count()));
  CHECK(summary["skipped"].get_integer() == 3);
  CHECK(skipped_for(summary, "binary") == 1);
  CHECK(skipped_for(summary, "minified") + skipped_for(summary, "too large") == 2);
  CHECK(skipped_for(summary, "minified") >= 1);

  // The human summary says how many were skipped, and why.
  const RunResult human = repo.kasava({"index"});
  INFO(describe(human));
  REQUIRE(human.exit_code == 0);
  CHECK_THAT(human.out, Catch::Contains("3 skipped") && Catch::Contains("binary") &&
                            Catch::Contains("minified"));

  for (const char* marker : {"binary_only_marker", "huge_bundle_marker", "minified_marker"}) {
    const RunResult ask = repo.kasava({"ask", marker, "--json"});
    INFO(describe(ask));
    CHECK(ask.exit_code == 1);
  }
  // --max-file-size lowers the limit.
  const RunResult small = repo.kasava({"index", "--rebuild", "--json", "--max-file-size", "300"});
  INFO(describe(small));
  REQUIRE(small.exit_code == 0);
  CHECK(skipped_for(parse_json_output(small.out), "too large") >= 4);
}

TEST_CASE("index: a file of invalid UTF-8 is indexed, and JSON output stays valid UTF-8") {
  FixtureRepo repo;
  write_sample_project(repo);
  repo.write("src/latin1.py",
             "# caf\xE9 cr\xE8me \xFF\xFE\n"
             "def latin1_encoded_helper():\n"
             "    return \"na\xEFve \xC0\xAF \xED\xA0\x80\"\n");
  repo.commit_all("latin1");
  const RunResult index = repo.kasava({"index", "--json"});
  INFO(describe(index));
  REQUIRE(index.exit_code == 0);
  CHECK(parse_json_output(index.out)["indexed"].get_integer() ==
        static_cast<std::int64_t>(sample_file_count()) + 1);

  const RunResult run = repo.kasava({"ask", "latin1_encoded_helper", "--json"});
  INFO(describe(run));
  REQUIRE(run.exit_code == 0);
  CHECK(kasava::util::is_valid_utf8(run.out));  // the reader also rejects invalid UTF-8
  const JsonValue document = parse_json_output(run.out);
  check_ask_schema(document, "latin1_encoded_helper", &repo);
  CHECK(document["results"][0]["path"].as_string() == "src/latin1.py");
  CHECK_THAT(document["results"][0]["snippet"].as_string(),
             Catch::Contains("latin1_encoded_helper"));

  const RunResult human = repo.kasava({"ask", "latin1_encoded_helper"});
  INFO(describe(human));
  REQUIRE(human.exit_code == 0);
  CHECK(kasava::util::is_valid_utf8(human.out));
}

TEST_CASE("index: symlink loops and links out of the repository are skipped, never followed") {
  FixtureRepo repo;
  write_sample_project(repo);
  repo.symlink("loop_b", "links/loop_a");
  repo.symlink("loop_a", "links/loop_b");
  repo.symlink("/etc/passwd", "links/passwd");
  repo.symlink("../../../../../../../../etc/hostname", "links/hostname");
  repo.symlink("/etc", "links/etc_dir");
  repo.symlink("../src/cli.py", "links/cli_alias.py");  // inside: fine to follow
  repo.symlink("missing_target", "links/dangling");
  repo.commit_all("links");

  const RunResult run = repo.kasava({"index", "--json"});
  INFO(describe(run));
  REQUIRE(run.exit_code == 0);
  const JsonValue summary = parse_json_output(run.out);
  CHECK(skipped_for(summary, "symlink") >= 5);
  // Warnings name each skipped link.
  CHECK_THAT(run.err, Catch::Contains("links/loop_a") && Catch::Contains("links/passwd") &&
                          Catch::Contains("links/etc_dir"));
  for (const auto& line : lines_of(run.err))
    CHECK_THAT(line, Catch::StartsWith("kasava: warning: "));

  // Nothing of /etc/passwd made it into the index: not by content, not by name.
  for (const char* query : {"root", "root:x:0:0", "nologin", "bin bash", "daemon"}) {
    const RunResult ask = repo.kasava({"ask", query, "--json", "--limit", "100"});
    INFO(describe(ask));
    CHECK((ask.exit_code == 0 || ask.exit_code == 1));
    const JsonValue document = parse_json_output(ask.out);
    for (const auto& result : document["results"].as_array()) {
      const std::string& snippet = result["snippet"].as_string();
      CHECK(snippet.find("root:x:0") == std::string::npos);
      CHECK(snippet.find("/usr/sbin/nologin") == std::string::npos);
      CHECK(result["path"].as_string().rfind("links/", 0) != 0);
    }
  }
  const std::string index_bytes = repo.read(".kasava/index.db");
  CHECK(index_bytes.find("root:x:0:0") == std::string::npos);

  // A link to a file inside the repository is indexed.
  const RunResult inside = repo.kasava({"ask", "parse_arguments", "--json"});
  INFO(describe(inside));
  REQUIRE(inside.exit_code == 0);
  const auto paths = result_paths(parse_json_output(inside.out));
  CHECK(std::find(paths.begin(), paths.end(), "src/cli.py") != paths.end());
}

TEST_CASE("index: an untracked symlink to /etc/passwd in a plain directory is skipped too") {
  FixtureRepo dir(GitInit::no);
  write_sample_project(dir);
  dir.symlink("/etc/passwd", "passwd.txt");
  dir.symlink("self", "self");
  const RunResult run = dir.kasava({"index", "--json"});
  INFO(describe(run));
  REQUIRE(run.exit_code == 0);
  CHECK(skipped_for(parse_json_output(run.out), "symlink") == 2);
  CHECK(dir.read(".kasava/index.db").find("root:x:0:0") == std::string::npos);
}

TEST_CASE("index: an unreachable URL fails within seconds with a one-line error") {
  TempDir empty("url");
  TempDir cache("cache");
  RunOptions options;
  options.cwd = empty.path();
  options.set_env("XDG_CACHE_HOME", cache.path());
  options.timeout = std::chrono::seconds(30);
  const RunResult run = run_kasava({"index", "http://127.0.0.1:1/nope.git"}, options);
  check_one_line_error(run);
  CHECK(run.seconds < 10.0);
  CHECK_THAT(run.err, Catch::Contains("127.0.0.1"));
  // No half-made clone is left in the cache, and nothing was written here.
  const std::string host_dir = cache / "kasava/repos/127.0.0.1";
  CHECK((!fs::exists(host_dir) || fs::is_empty(host_dir)));
  CHECK(fs::is_empty(empty.path()));
}

TEST_CASE("index: a URL that is not a repository fails with a one-line error") {
  TempDir empty("url");
  TempDir cache("cache");
  RunOptions options;
  options.cwd = empty.path();
  options.set_env("XDG_CACHE_HOME", cache.path());
  const RunResult run =
      run_kasava({"index", "file://" + empty.path() + "/not-a-repo.git"}, options);
  check_one_line_error(run);
  CHECK_THAT(run.err, Catch::Contains("not-a-repo"));
  // No half-made clone is left where the next run would trust it.
  CHECK_FALSE(fs::exists(cache / "kasava/repos/local" + empty.path() + "/not-a-repo"));
}

TEST_CASE(
    "a corrupt index.db: ask --no-refresh and status exit 2 naming the file, and index --rebuild "
    "recovers") {
  FixtureRepo repo;
  write_sample_project(repo);
  repo.commit_all("sample");
  REQUIRE(repo.kasava({"index"}).exit_code == 0);
  std::string garbage;
  for (int i = 0; i < 4096; ++i) garbage += static_cast<char>((i * 7919) % 251);
  repo.write(".kasava/index.db", garbage);
  repo.remove(".kasava/index.db-wal");
  repo.remove(".kasava/index.db-shm");

  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"ask", "parseConfig", "--no-refresh"},
        {"status"},
        {"status", "--json"},
        {"ask", "parseConfig", "--json"}}) {
    {
      INFO("kasava " << args[0] << " " << args.back());
      const RunResult run = repo.kasava(args);
      check_one_line_error(run);
      CHECK_THAT(run.err, Catch::Contains("index.db"));
    }
  }
  // --rebuild starts over.
  const RunResult rebuilt = repo.kasava({"index", "--rebuild", "--json"});
  INFO(describe(rebuilt));
  REQUIRE(rebuilt.exit_code == 0);
  CHECK(parse_json_output(rebuilt.out)["indexed"].get_integer() ==
        static_cast<std::int64_t>(sample_file_count()));
  const RunResult ask = repo.kasava({"ask", "parseConfig", "--json", "--no-refresh"});
  INFO(describe(ask));
  CHECK(ask.exit_code == 0);
}

TEST_CASE("a truncated index.db is reported, not crashed on") {
  FixtureRepo repo;
  write_sample_project(repo);
  repo.commit_all("sample");
  REQUIRE(repo.kasava({"index"}).exit_code == 0);
  const std::string bytes = repo.read(".kasava/index.db");
  REQUIRE(bytes.size() > 8192);
  repo.write(".kasava/index.db", bytes.substr(0, bytes.size() / 2));
  const RunResult run = repo.kasava({"ask", "parseConfig", "--no-refresh", "--json"});
  INFO(describe(run));
  // Either the damage is detected (exit 2, one line) or what is left is searched (valid JSON).
  if (run.exit_code == 2) {
    check_one_line_error(run);
  } else {
    CHECK((run.exit_code == 0 || run.exit_code == 1));
    parse_json_output(run.out);
  }
}

TEST_CASE("an index file that is empty or a directory is an error naming it") {
  TempDir other("other");
  RunOptions options;
  options.cwd = other.path();
  fs::create_directories(other / "dir.db");
  const RunResult directory =
      run_kasava({"--index", other / "dir.db", "ask", "parseConfig"}, options);
  check_one_line_error(directory);
  CHECK_THAT(directory.err, Catch::Contains("dir.db"));

  FixtureRepo dir(GitInit::no);
  dir.write("empty.db", "");
  const RunResult empty =
      run_kasava({"--index", dir.path("empty.db"), "ask", "parseConfig"}, options);
  check_one_line_error(empty);
  CHECK_THAT(empty.err, Catch::Contains("empty.db"));
  const RunResult empty_status = run_kasava({"--index", dir.path("empty.db"), "status"}, options);
  check_one_line_error(empty_status);
}

TEST_CASE("cli: a mistyped command that quotes a connection string never prints its password") {
  TempDir dir;
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"status", "postgresql://ci:hunter2secret@127.0.0.1:1/kasava"},
        std::vector<std::string>{"index", "--threads", "password=hunter2secret"},
        std::vector<std::string>{"ask", "--storee", "host=db password=hunter2secret", "query"}}) {
    RunOptions options;
    options.cwd = dir.path();
    const RunResult run = run_kasava(args, options);
    check_one_line_error(run);
    CHECK(run.err.find("hunter2secret") == std::string::npos);
    // The first two messages quote the value typed: with its password hidden.
    if (args[0] != "ask") CHECK(run.err.find("***") != std::string::npos);
  }
}
