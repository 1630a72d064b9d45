// `kasava verify`: a sound index passes, damage is found and repaired, a file that is not an
// index gives a clear error and `kasava index --rebuild` recovers from it.
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "harness.hpp"

namespace kasava::e2e {
namespace {

// Runs sqlite3 on the index when the CLI is installed; false when it is not.
void sqlite3_exec(const FixtureRepo& repo, const std::string& sql) {
  // scripts/setup installs the sqlite3 CLI, so this test never skips itself in CI.
  const auto found = run_program("sh", {"-c", "command -v sqlite3"});
  REQUIRE(found.exit_code == 0);
  const auto result = run_program("sqlite3", {repo.index_path(), sql});
  INFO(describe(result));
  REQUIRE(result.exit_code == 0);
}

}  // namespace

TEST_CASE("verify: a fresh index is sound, and changed files are reported as stale") {
  FixtureRepo repo;
  write_sample_project(repo);
  repo.commit_all("sample");
  REQUIRE(repo.kasava({"index"}).exit_code == 0);
  const auto sound = repo.kasava({"verify", "--json"});
  INFO(describe(sound));
  REQUIRE(sound.exit_code == 0);
  const auto report = parse_json_output(sound.out);
  CHECK(report["ok"].as_bool());
  CHECK(report["files"].as_integer() == static_cast<std::int64_t>(sample_file_count()));
  CHECK(report["chunks"].as_integer() == report["fts_rows"].as_integer());
  CHECK(report["stale"].as_integer() == 0);

  repo.write("src/new_file.py", "def brand_new():\n    pass\n");
  const auto stale = repo.kasava({"verify", "--json"});
  REQUIRE(stale.exit_code == 0);  // stale is not damage
  CHECK(parse_json_output(stale.out)["stale"].as_integer() == 1);
  const auto repaired = repo.kasava({"verify", "--repair", "--json"});
  INFO(describe(repaired));
  REQUIRE(repaired.exit_code == 0);
  CHECK(parse_json_output(repaired.out)["stale"].as_integer() == 0);
}

TEST_CASE("verify: a chunk without its full-text row is found and repaired (sqlite3 CLI)") {
  FixtureRepo repo;
  write_sample_project(repo);
  REQUIRE(repo.kasava({"index"}).exit_code == 0);
  // Deleting a chunk row leaves its FTS row behind: damage only a rebuild repairs.
  sqlite3_exec(repo, "DELETE FROM chunks WHERE id = (SELECT min(id) FROM chunks)");
  const auto damaged = repo.kasava({"verify"});
  INFO(describe(damaged));
  CHECK(damaged.exit_code == 1);
  CHECK(damaged.out.find("damaged:") != std::string::npos);
  CHECK(damaged.err.find("kasava verify --repair") != std::string::npos);
  const auto repaired = repo.kasava({"verify", "--repair"});
  INFO(describe(repaired));
  REQUIRE(repaired.exit_code == 0);
  REQUIRE(repo.kasava({"verify"}).exit_code == 0);
}

TEST_CASE("verify: a wrong chunk length kept for ranking is found and repaired (sqlite3 CLI)") {
  FixtureRepo repo;
  write_sample_project(repo);
  repo.commit_all("sample");
  REQUIRE(repo.kasava({"index"}).exit_code == 0);
  const auto first = run_program(
      "sqlite3", {repo.index_path(),
                  "SELECT f.path FROM chunks c JOIN files f ON f.id = c.file_id ORDER BY c.id LIMIT 1"});
  REQUIRE(first.exit_code == 0);
  const std::string path = first.out.substr(0, first.out.find('\n'));
  // The lowest chunk id's two bytes in its block (ids start at 1: slot 1 of block 0).
  sqlite3_exec(repo,
               "UPDATE chunk_sizes SET sizes = substr(sizes, 1, 2) || X'3412' || substr(sizes, 5)"
               " WHERE block = 0");
  const auto damaged = repo.kasava({"verify"});
  INFO(describe(damaged));
  CHECK(damaged.exit_code == 1);
  CHECK(damaged.out.find("inconsistent: " + path) != std::string::npos);
  const auto repaired = repo.kasava({"verify", "--repair"});
  INFO(describe(repaired));
  REQUIRE(repaired.exit_code == 0);
  REQUIRE(repo.kasava({"verify"}).exit_code == 0);
}

TEST_CASE("verify: chunk text that does not decode is found, and --repair rebuilds (sqlite3 CLI)") {
  FixtureRepo repo;
  write_sample_project(repo);
  REQUIRE(repo.kasava({"index"}).exit_code == 0);
  sqlite3_exec(repo, "UPDATE text_packs SET data = substr(data, 1, length(data) / 2)");
  const auto damaged = repo.kasava({"verify"});
  INFO(describe(damaged));
  CHECK(damaged.exit_code == 1);
  CHECK(damaged.out.find("text does not decode") != std::string::npos);
  const auto repaired = repo.kasava({"verify", "--repair"});
  INFO(describe(repaired));
  REQUIRE(repaired.exit_code == 0);
  REQUIRE(repo.kasava({"verify"}).exit_code == 0);
  const auto asked = repo.kasava({"ask", "--no-refresh", sample_definitions()[0].query});
  INFO(describe(asked));
  CHECK(asked.exit_code == 0);
}

TEST_CASE("verify: a corrupted, truncated or foreign index.db is a clear error and --rebuild recovers") {
  FixtureRepo repo;
  write_sample_project(repo);
  REQUIRE(repo.kasava({"index"}).exit_code == 0);
  const auto size = std::filesystem::file_size(repo.index_path());

  SECTION("bytes overwritten in the middle") {
    {
      std::fstream file(repo.index_path(), std::ios::in | std::ios::out | std::ios::binary);
      file.seekp(static_cast<std::streamoff>(size / 2));
      const std::string junk(8192, '\xab');
      file.write(junk.data(), static_cast<std::streamsize>(junk.size()));
    }
    const auto verified = repo.kasava({"verify"});
    INFO(describe(verified));
    CHECK(verified.exit_code != 0);  // 1 damage found, or 2 when not even readable
    if (verified.exit_code == 2) CHECK(verified.err.rfind("kasava: error: ", 0) == 0);
  }
  SECTION("truncated") {
    std::filesystem::resize_file(repo.index_path(), size / 3);
    const auto verified = repo.kasava({"verify"});
    INFO(describe(verified));
    CHECK(verified.exit_code != 0);
  }
  SECTION("a foreign file") {
    repo.write(".kasava/index.db", "this is not a database, just text\n");
    const auto verified = repo.kasava({"verify"});
    INFO(describe(verified));
    CHECK(verified.exit_code == 2);
    CHECK(verified.err.find("index.db") != std::string::npos);
    CHECK(verified.err.find("--rebuild") != std::string::npos);
  }
  const auto rebuilt = repo.kasava({"index", "--rebuild"});
  INFO(describe(rebuilt));
  REQUIRE(rebuilt.exit_code == 0);
  const auto sound = repo.kasava({"verify"});
  INFO(describe(sound));
  REQUIRE(sound.exit_code == 0);
  REQUIRE(repo.kasava({"ask", "--no-refresh", sample_definitions()[0].query}).exit_code == 0);
}

TEST_CASE("verify: an index without its repository is checked alone") {
  FixtureRepo repo;
  write_sample_project(repo);
  REQUIRE(repo.kasava({"index"}).exit_code == 0);
  TempDir elsewhere("artifact");
  std::filesystem::copy_file(repo.index_path(), elsewhere / "index.db");
  repo.remove(".kasava");
  const std::string moved_root = repo.root() + "-gone";
  std::filesystem::rename(repo.root(), moved_root);
  RunOptions options;
  options.cwd = elsewhere.path();
  const auto verified = run_kasava({"--index", elsewhere / "index.db", "verify"}, options);
  std::filesystem::rename(moved_root, repo.root());
  INFO(describe(verified));
  REQUIRE(verified.exit_code == 0);
  CHECK(verified.out.find("not compared") != std::string::npos);
}

}  // namespace kasava::e2e
