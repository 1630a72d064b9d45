// Security: results never leave the repository, the index holds no environment or keys, URL
// credentials are never printed or stored, and the index file follows the user's umask.
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "harness.hpp"

namespace kasava::e2e {
namespace {

std::string slurp(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  std::stringstream text;
  text << file.rdbuf();
  return text.str();
}

// Every byte kasava wrote under `folder` (index, WAL, clones, anything).
std::string all_bytes_under(const std::string& folder) {
  std::string bytes;
  std::error_code error;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(folder, error)) {
    if (entry.is_regular_file(error)) bytes += slurp(entry.path().string());
  }
  return bytes;
}

}  // namespace

TEST_CASE("security: API keys and other environment never reach the index") {
  FixtureRepo repo;
  write_sample_project(repo);
  RunOptions options;
  options.set_env("OPENAI_API_KEY", "sk-fake-kasava-openai-7f3a9c");
  options.set_env("ANTHROPIC_API_KEY", "sk-ant-fake-kasava-41d2e8");
  options.set_env("SOME_SERVICE_TOKEN", "tok-fake-kasava-99b1");
  REQUIRE(repo.kasava({"index"}, options).exit_code == 0);
  REQUIRE(repo.kasava({"ask", "anything at all", "--json"}, options).exit_code <= 1);
  const std::string bytes = all_bytes_under(repo.path(".kasava"));
  REQUIRE(!bytes.empty());
  for (const char* secret :
       {"sk-fake-kasava-openai-7f3a9c", "sk-ant-fake-kasava-41d2e8", "tok-fake-kasava-99b1"}) {
    INFO(secret);
    CHECK(bytes.find(secret) == std::string::npos);
  }
}

TEST_CASE("security: credentials in a URL are never printed or stored") {
  TempDir cache("cache");
  RunOptions options;
  options.set_env("XDG_CACHE_HOME", cache.path());
  options.timeout = std::chrono::seconds(30);
  FixtureRepo origin;
  write_sample_project(origin);
  origin.commit_all("sample");
  for (const std::string& url :
       {"file://alice:hunter2-kasava@localhost" + origin.root(),
        std::string("http://alice:hunter2-kasava@127.0.0.1:1/org/repo"),
        std::string("https://alice:hunter2-kasava@127.0.0.1:1/org/repo.git")}) {
    for (const char* json : {"", "--json"}) {
      std::vector<std::string> args{"index", url};
      if (*json != '\0') args.push_back(json);
      const auto result = run_kasava(args, options);
      INFO(describe(result));
      CHECK(result.out.find("hunter2-kasava") == std::string::npos);
      CHECK(result.err.find("hunter2-kasava") == std::string::npos);
    }
  }
  CHECK(all_bytes_under(cache.path()).find("hunter2-kasava") == std::string::npos);
  std::error_code error;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(cache.path(), error)) {
    CHECK(entry.path().string().find("hunter2") == std::string::npos);
  }
}

TEST_CASE("security: result paths stay inside the repository, outside files are never read") {
  TempDir outside("outside");
  {
    std::ofstream(outside / "secret.py")
        << "def outside_secret_marmot():\n    return 'marmot-outside-7c1'\n";
  }
  FixtureRepo repo;
  repo.write("src/inside.py", "def inside_marmot():\n    return 1\n");
  repo.symlink(outside / "secret.py", "src/link_out.py");
  repo.symlink("../../" + std::filesystem::path(outside.path()).filename().string() + "/secret.py",
               "src/relative_out.py");
  repo.symlink("/etc/passwd", "src/passwd.py");
  repo.symlink(outside.path(), "src/outdir");
  const auto indexed = repo.kasava({"index"});
  INFO(describe(indexed));
  REQUIRE(indexed.exit_code == 0);

  const std::string bytes = all_bytes_under(repo.path(".kasava"));
  CHECK(bytes.find("marmot-outside-7c1") == std::string::npos);
  CHECK(bytes.find("root:x:0:0") == std::string::npos);

  for (const char* query : {"marmot", "outside secret", "root"}) {
    const auto result = repo.kasava({"ask", "--json", "--limit", "50", query});
    INFO(describe(result));
    REQUIRE(result.exit_code <= 1);
    for (const auto& path : result_paths(parse_json_output(result.out))) {
      CHECK(path.rfind('/', 0) != 0);
      CHECK(path.find("..") == std::string::npos);
      CHECK(path.rfind("src/outdir", 0) != 0);
      const auto resolved = std::filesystem::weakly_canonical(repo.path(path));
      CHECK(resolved.string().rfind(repo.root() + "/", 0) == 0);
    }
  }
}

TEST_CASE("security: the index file is created with the user's umask") {
  for (const auto& [umask_text, expected_mode] :
       std::vector<std::pair<std::string, unsigned>>{{"077", 0600U}, {"022", 0644U}}) {
    FixtureRepo repo;
    write_sample_project(repo);
    RunOptions options;
    options.cwd = repo.root();
    const auto result = run_program(
        "sh", {"-c", "umask " + umask_text + " && exec \"$0\" index", KASAVA_BINARY}, options);
    INFO(describe(result));
    REQUIRE(result.exit_code == 0);
    struct stat info {};
    REQUIRE(::stat(repo.index_path().c_str(), &info) == 0);
    CHECK((info.st_mode & 0777U) == expected_mode);
  }
}

}  // namespace kasava::e2e
