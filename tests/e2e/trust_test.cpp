// End-to-end: an index file is untrusted input. The folder kasava refreshes from and reads
// files from comes from where the index was found, never from the root it records (edited,
// committed to a repository, copied as a CI artifact); and read_file_range serves only files
// the index would index (no secrets, ignored, binary or over-size files).
#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "tests/e2e/fixtures.hpp"
#include "tests/e2e/harness.hpp"

using namespace kasava::e2e;
using kasava::util::JsonValue;

namespace fs = std::filesystem;

namespace {

void sqlite3_exec(const std::string& index, const std::string& sql) {
  const auto result = run_program("sqlite3", {index, sql});
  INFO(describe(result));
  REQUIRE(result.exit_code == 0);
}

std::string slurp(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  std::stringstream text;
  text << file.rdbuf();
  return text.str();
}

/// The replies of one `kasava [global...] mcp` run fed `calls` (tools/call name and arguments
/// JSON) after initialize, by request id (2, 3, …), and what it wrote to stderr.
struct McpRun {
  std::map<std::int64_t, JsonValue> results;
  std::string err;

  const JsonValue& result(std::int64_t id) const {
    const auto found = results.find(id);
    INFO("no reply for id " << id << "; stderr: " << err);
    REQUIRE(found != results.end());
    return found->second;
  }
  std::string text(std::int64_t id) const {
    const std::string* text = result(id)["content"][std::size_t{0}]["text"].get_string();
    return text != nullptr ? *text : "";
  }
  bool is_error(std::int64_t id) const { return result(id)["isError"] == JsonValue(true); }
};

McpRun run_mcp(const std::vector<std::string>& global,
               const std::vector<std::pair<std::string, std::string>>& calls,
               const std::string& cwd, const TempDir& scratch) {
  const std::string requests = scratch / "requests.jsonl";
  {
    std::ofstream out(requests);
    out << R"({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18"}})"
        << "\n"
        << R"({"jsonrpc":"2.0","method":"notifications/initialized"})"
        << "\n";
    std::int64_t id = 2;
    for (const auto& [tool, arguments] : calls) {
      out << R"({"jsonrpc":"2.0","id":)" << id++ << R"(,"method":"tools/call","params":{"name":")"
          << tool << R"(","arguments":)" << arguments << "}}\n";
    }
  }
  std::vector<std::string> args{"-c", "exec \"$0\" \"$@\" < '" + requests + "'", KASAVA_BINARY};
  args.insert(args.end(), global.begin(), global.end());
  args.push_back("mcp");
  RunOptions options;
  options.cwd = cwd;
  const RunResult run = run_program("sh", args, options);
  INFO(describe(run));
  REQUIRE(run.exit_code == 0);
  McpRun replies;
  replies.err = run.err;
  for (const std::string& line : lines_of(run.out)) {
    if (line.empty()) continue;
    auto parsed = kasava::util::parse_json(line);
    INFO(line);
    REQUIRE(parsed.ok());
    const auto id = (*parsed)["id"].get_integer();
    if (id && *id >= 2) replies.results[*id] = (*parsed)["result"];
  }
  return replies;
}

std::string read_call(const std::string& path) {
  return R"({"path":")" + path + R"("})";
}

}  // namespace

TEST_CASE(
    "trust: an index whose recorded root was edited to '/' reads and indexes nothing outside") {
  FixtureRepo repo;
  index_sample_project(repo);
  sqlite3_exec(repo.index_path(), "UPDATE meta SET value='/' WHERE key='root'");
  repo.write("src/fresh_after_edit.py", "def aardwolf_fresh_marker():\n    return 1\n");
  TempDir scratch("trust-root");

  const McpRun mcp = run_mcp({},
                             {{"read_file_range", read_call("etc/passwd")},
                              {"read_file_range", read_call("internal/config/config.go")},
                              {"search", R"({"query":"aardwolf fresh marker","mode":"lexical"})"},
                              {"search", R"({"query":"parseConfig","mode":"lexical"})"}},
                             repo.root(), scratch);
  CHECK(mcp.is_error(2));
  CHECK(mcp.text(2).find("root:") == std::string::npos);
  CHECK_THAT(mcp.text(2), Catch::Contains("records another repository"));
  CHECK(mcp.is_error(3));  // no file is read for a foreign index, not even one of the repository
  // Searches answer from the index alone: nothing refreshed, nothing of '/' indexed.
  CHECK_FALSE(mcp.is_error(4));
  CHECK(mcp.result(4)["structuredContent"]["results"].size() == 0);
  CHECK_FALSE(mcp.is_error(5));
  CHECK(mcp.result(5)["structuredContent"]["results"][std::size_t{0}]["path"] ==
        JsonValue("internal/config/config.go"));
  // Said once per server, not per call.
  std::size_t warnings = 0;
  for (std::size_t at = 0;
       (at = mcp.err.find("records another repository", at)) != std::string::npos; ++at) {
    ++warnings;
  }
  CHECK(warnings == 1);

  const RunResult ask = repo.kasava({"ask", "aardwolf fresh marker", "--json"});
  INFO(describe(ask));
  CHECK(ask.exit_code == 1);
  CHECK_THAT(ask.err,
             Catch::Contains("kasava: warning: ") && Catch::Contains("records another repository"));
  const std::string bytes = slurp(repo.index_path());
  CHECK(bytes.find("root:x:0:0") == std::string::npos);
  CHECK(bytes.find("aardwolf_fresh_marker") == std::string::npos);
}

TEST_CASE(
    "trust: a repository committing a crafted index pointing elsewhere does not index that "
    "folder") {
  // The folder the crafted index names: it must never be read.
  FixtureRepo victim;
  victim.write("private/notes.py",
               "def victim_private_wombat():\n    return 'wombat-private-31f'\n");
  victim.commit_all("private");

  FixtureRepo crafted;
  index_sample_project(crafted);
  // It also names a remote model: kasava must not call it with the user's key on its say.
  sqlite3_exec(
      crafted.index_path(),
      "UPDATE meta SET value='" + victim.root() +
          "' WHERE key='root';"
          "UPDATE meta SET value='openai:text-embedding-3-small' WHERE key='embedding_model';");
  crafted.git({"add", "-f", ".kasava/index.db"});
  crafted.git({"commit", "-q", "-m", "commit the index"});

  TempDir clones("trust-clone");
  const std::string clone = clones / "clone";
  REQUIRE(run_program("git", {"clone", "-q", crafted.root(), clone}).exit_code == 0);
  REQUIRE(fs::is_regular_file(clone + "/.kasava/index.db"));
  const std::string before = slurp(clone + "/.kasava/index.db");

  RunOptions options;
  options.cwd = clone;
  options.set_env("OPENAI_API_KEY", "sk-fake-kasava-trust");
  options.set_env("KASAVA_OPENAI_BASE_URL", "http://127.0.0.1:1/v1");
  const RunResult ask = run_kasava({"ask", "victim private wombat", "--json"}, options);
  INFO(describe(ask));
  REQUIRE(ask.exit_code <= 1);
  CHECK(ask.out.find("victim_private_wombat") == std::string::npos);
  CHECK_THAT(ask.err, Catch::Contains("records another repository"));
  // By words only, said so; no request was tried.
  CHECK_THAT(ask.err, Catch::Contains("searching by words only"));
  CHECK(ask.err.find("failed") == std::string::npos);
  const RunResult semantic =
      run_kasava({"ask", "victim private wombat", "--mode", "semantic"}, options);
  INFO(describe(semantic));
  CHECK(semantic.exit_code == 2);
  CHECK_THAT(semantic.err, Catch::Contains("choose its model"));
  // The user's own choice of that model is honoured: the query goes to the service (down here).
  RunOptions chosen = options;
  chosen.set_env("KASAVA_MODEL", "openai:text-embedding-3-small");
  chosen.set_env("KASAVA_RETRIES", "0");
  const RunResult asked = run_kasava({"ask", "victim private wombat"}, chosen);
  INFO(describe(asked));
  CHECK(asked.exit_code <= 1);
  CHECK_THAT(asked.err, Catch::Contains("searching by meaning failed"));
  // Nothing was written into the committed file.
  CHECK(slurp(clone + "/.kasava/index.db") == before);
  CHECK(run_program("git", {"-C", clone, "status", "--porcelain", "--untracked-files=no"})
            .out.empty());

  TempDir scratch("trust-clone-mcp");
  const McpRun mcp = run_mcp({},
                             {{"search", R"({"query":"victim private wombat"})"},
                              {"read_file_range", read_call("private/notes.py")}},
                             clone, scratch);
  CHECK(mcp.result(2).dump().find("victim_private_wombat") == std::string::npos);
  CHECK(mcp.is_error(3));
  CHECK(mcp.text(3).find("wombat-private") == std::string::npos);

  // `kasava index` there rebuilds it from the clone, keeping nothing of the crafted rows.
  const RunResult index = run_kasava({"index", "--json"}, options);
  INFO(describe(index));
  REQUIRE(index.exit_code == 0);
  CHECK_THAT(index.err, Catch::Contains("built from another folder"));
  const JsonValue summary = parse_json_output(index.out);
  CHECK(summary["unchanged"].get_integer() == 0);
  CHECK(summary["model"].as_string().rfind("builtin", 0) == 0);
  CHECK(slurp(clone + "/.kasava/index.db").find("wombat-private-31f") == std::string::npos);
}

TEST_CASE("trust: --index copied elsewhere (a CI artifact) answers from the file alone") {
  FixtureRepo repo;
  index_sample_project(repo);
  TempDir artifacts("trust-artifact");
  const std::string copy = copy_index(repo, artifacts);
  repo.write("src/after_copy.py", "def narwhal_after_copy():\n    return 1\n");
  const std::string before = slurp(copy);

  RunOptions in_artifacts;
  in_artifacts.cwd = artifacts.path();
  const RunResult found =
      run_kasava({"--index", copy, "ask", "parseConfig", "--json"}, in_artifacts);
  INFO(describe(found));
  REQUIRE(found.exit_code == 0);
  CHECK(parse_json_output(found.out)["results"][0]["path"].as_string() ==
        "internal/config/config.go");
  CHECK(found.err.empty());
  // Not refreshed from the repository it records: the new file is not found, the copy unchanged.
  const RunResult fresh =
      run_kasava({"--index", copy, "ask", "narwhal_after_copy", "--json"}, in_artifacts);
  INFO(describe(fresh));
  CHECK(fresh.exit_code == 1);
  CHECK(slurp(copy) == before);

  TempDir scratch("trust-artifact-mcp");
  const McpRun mcp =
      run_mcp({"--index", copy}, {{"read_file_range", read_call("internal/config/config.go")}},
              artifacts.path(), scratch);
  CHECK(mcp.is_error(2));
  CHECK_THAT(mcp.text(2), Catch::Contains("outside the repository it was built from"));

  // From inside the repository it records, the same file is refreshed from there.
  RunOptions in_repo;
  in_repo.cwd = repo.path("src");
  const RunResult refreshed =
      run_kasava({"--index", copy, "ask", "narwhal_after_copy", "--json"}, in_repo);
  INFO(describe(refreshed));
  REQUIRE(refreshed.exit_code == 0);
  CHECK(parse_json_output(refreshed.out)["results"][0]["path"].as_string() == "src/after_copy.py");
}

TEST_CASE("trust: read_file_range serves only files the index would index") {
  FixtureRepo repo;
  repo.write("src/app.py", "def served_tracked_ocelot():\n    return 'ocelot-tracked'\n");
  repo.write(".env.production", "DATABASE_PASSWORD=envprod-secret-1a\n");
  repo.write("deploy/key.pem", "keypem-secret-2b\n");
  repo.write("id_rsa", "idrsa-secret-3c\n");
  repo.write(".netrc", "machine example.com login me password netrc-secret-4d\n");
  repo.write(".gitignore", "local_settings.py\n");
  repo.write("local_settings.py", "PASSWORD = 'ignored-secret-5e'\n");
  repo.write("data.bin", std::string("binary-secret-6f\0\x01\x02", 19));
  repo.write("big.txt", std::string(3000, 'x') + "\nbig-secret-7g\n");
  repo.git({"add", "-f", "src/app.py", ".env.production", "deploy/key.pem", "id_rsa", ".netrc",
            ".gitignore", "data.bin", "big.txt"});
  repo.git({"commit", "-q", "-m", "files"});
  repo.write("notes/untracked.md", "untracked-served-pangolin\n");
  REQUIRE(repo.kasava({"index", "--max-file-size", "2048"}).exit_code == 0);

  TempDir scratch("trust-read");
  const std::vector<std::pair<std::string, std::string>> refused{
      {".env.production", "envprod-secret"},
      {"deploy/key.pem", "keypem-secret"},
      {"id_rsa", "idrsa-secret"},
      {".netrc", "netrc-secret"},
      {"local_settings.py", "ignored-secret"},
      {"data.bin", "binary-secret"},
      {"big.txt", "big-secret"},
      {"./src/../id_rsa", "idrsa-secret"}};
  std::vector<std::pair<std::string, std::string>> calls{
      {"read_file_range", read_call("src/app.py")},
      {"read_file_range", read_call("notes/untracked.md")},
      {"read_file_range", read_call("./src//app.py")}};
  for (const auto& [path, marker] : refused) calls.push_back({"read_file_range", read_call(path)});
  const McpRun mcp = run_mcp({}, calls, repo.root(), scratch);

  CHECK_FALSE(mcp.is_error(2));
  CHECK_THAT(mcp.text(2), Catch::Contains("ocelot-tracked"));
  CHECK_FALSE(mcp.is_error(3));
  CHECK_THAT(mcp.text(3), Catch::Contains("untracked-served-pangolin"));
  CHECK_FALSE(mcp.is_error(4));
  CHECK_THAT(mcp.text(4), Catch::Contains("ocelot-tracked"));
  std::int64_t id = 5;
  for (const auto& [path, marker] : refused) {
    INFO(path << ": " << mcp.result(id).dump());
    CHECK(mcp.is_error(id));
    CHECK(mcp.result(id).dump().find(marker) == std::string::npos);
    CHECK_THAT(mcp.text(id), Catch::Contains("refusing"));
    ++id;
  }
  CHECK_THAT(mcp.text(5), Catch::Contains("secret"));
  CHECK_THAT(mcp.text(9), Catch::Contains("ignored by git"));
  CHECK_THAT(mcp.text(10), Catch::Contains("binary"));
  CHECK_THAT(mcp.text(11), Catch::Contains("2048 bytes"));
}

TEST_CASE("trust: a stored size limit that is not a plain number is the default limit") {
  FixtureRepo repo;
  index_sample_project(repo);
  // std::stoull took "-1" as 2^64 - 1: no limit at all.
  sqlite3_exec(repo.index_path(), "UPDATE meta SET value='-1' WHERE key='max_file_size'");
  std::string large = "def quetzal_in_a_large_file():\n    return 1\n";
  while (large.size() <= 1024 * 1024) large += "# padding line of a large file\n";
  repo.write("src/large.py", large);
  const RunResult ask =
      repo.kasava({"ask", "quetzal_in_a_large_file", "--json", "--mode", "lexical"});
  INFO(describe(ask));
  REQUIRE(ask.exit_code <= 1);
  const auto paths = result_paths(parse_json_output(ask.out));
  CHECK(std::find(paths.begin(), paths.end(), "src/large.py") == paths.end());
}
