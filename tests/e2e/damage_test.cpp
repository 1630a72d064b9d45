// End-to-end: index files that are not what they should be — a FIFO or a folder named by
// --index, a truncated file — give a prompt, clear answer (never a hang, never a silent one),
// and `kasava verify` compares with the work tree as it is on disk.
#include <catch2/catch.hpp>

#include <sys/stat.h>

#include <filesystem>

#include "tests/e2e/harness.hpp"

using namespace kasava::e2e;
using kasava::util::JsonValue;

namespace fs = std::filesystem;

TEST_CASE("damage: --index naming a FIFO or a folder exits 2 at once, naming it") {
  TempDir dir("fifo");
  const std::string fifo = dir / "index.db";
  REQUIRE(::mkfifo(fifo.c_str(), 0644) == 0);
  fs::create_directories(dir / "folder.db");
  RunOptions options;
  options.cwd = dir.path();
  // Opening a FIFO for reading waits for a writer: a kasava that did would be killed here
  // after the timeout, which fails the test (run_kasava).
  options.timeout = std::chrono::seconds(20);
  for (const std::string& index : {fifo, dir / "folder.db"}) {
    for (const std::vector<std::string>& command :
         {std::vector<std::string>{"ask", "parseConfig"}, std::vector<std::string>{"status"},
          std::vector<std::string>{"verify"}, std::vector<std::string>{"index", dir.path()}}) {
      std::vector<std::string> args = {"--index", index};
      args.insert(args.end(), command.begin(), command.end());
      const RunResult run = run_kasava(args, options);
      INFO(describe(run));
      CHECK(run.exit_code == 2);
      CHECK(run.out.empty());
      CHECK(run.err == "kasava: error: index '" + index + "' is not a regular file\n");
    }
  }
}

TEST_CASE("damage: a truncated index is reported by verify (exit 1), repaired by --repair") {
  FixtureRepo repo;
  write_sample_project(repo);
  repo.commit_all("sample");
  REQUIRE(repo.kasava({"index"}).exit_code == 0);
  const auto size = fs::file_size(repo.index_path());
  REQUIRE(size > 16384);
  fs::resize_file(repo.index_path(), size / 2);

  const RunResult verify = repo.kasava({"verify"});
  INFO(describe(verify));
  CHECK(verify.exit_code == 1);
  CHECK_THAT(verify.out, Catch::Contains("damaged: ") && Catch::Contains("malformed"));
  CHECK_THAT(verify.err, Catch::Contains("kasava verify --repair"));
  const RunResult json = repo.kasava({"verify", "--json"});
  INFO(describe(json));
  CHECK(json.exit_code == 1);
  CHECK_FALSE(parse_json_output(json.out)["ok"].as_bool());

  // The commands that read it say it is damaged and how to repair it; none is silent.
  for (const std::vector<std::string>& command :
       {std::vector<std::string>{"ask", "parseConfig"},
        std::vector<std::string>{"ask", "parseConfig", "--no-refresh", "--json"},
        std::vector<std::string>{"status"}}) {
    const RunResult run = repo.kasava(command);
    INFO(describe(run));
    CHECK(run.exit_code == 2);
    CHECK(run.out.empty());
    CHECK(lines_of(run.err).size() == 1);
    CHECK_THAT(run.err, Catch::Contains("index is damaged") &&
                            Catch::Contains("kasava verify --repair") &&
                            Catch::Contains(repo.index_path()));
  }

  const RunResult repaired = repo.kasava({"verify", "--repair"});
  INFO(describe(repaired));
  REQUIRE(repaired.exit_code == 0);
  CHECK_THAT(repaired.out, Catch::Contains("repaired:") && Catch::Contains("integrity: ok"));
  const RunResult sound = repo.kasava({"verify"});
  INFO(describe(sound));
  CHECK(sound.exit_code == 0);
  const RunResult ask = repo.kasava({"ask", "parseConfig", "--no-refresh", "--json"});
  INFO(describe(ask));
  REQUIRE(ask.exit_code == 0);
  CHECK(parse_json_output(ask.out)["results"][0]["symbol"].as_string() == "parseConfig");
}

TEST_CASE("verify: an unstaged edit is stale, as status says, and --repair indexes it") {
  FixtureRepo repo;
  write_sample_project(repo);
  repo.commit_all("sample");
  REQUIRE(repo.kasava({"index"}).exit_code == 0);
  REQUIRE(parse_json_output(repo.kasava({"verify", "--json"}).out)["stale"].get_integer() ==
          std::int64_t{0});
  // Edited in the work tree, not staged: git's index still has the committed blob.
  repo.append("internal/config/config.go", "\n// walrus_unstaged_marker\n");

  const RunResult status = repo.kasava({"status", "--json"});
  INFO(describe(status));
  REQUIRE(status.exit_code == 0);
  CHECK(parse_json_output(status.out)["stale_files"].get_integer() == std::int64_t{1});
  const RunResult verify = repo.kasava({"verify", "--json"});
  INFO(describe(verify));
  REQUIRE(verify.exit_code == 0);  // stale is not damage
  CHECK(parse_json_output(verify.out)["stale"].get_integer() == std::int64_t{1});
  const RunResult text = repo.kasava({"verify"});
  CHECK_THAT(text.out, Catch::Contains("1 file new or changed"));

  const RunResult repaired = repo.kasava({"verify", "--repair", "--json"});
  INFO(describe(repaired));
  REQUIRE(repaired.exit_code == 0);
  CHECK(parse_json_output(repaired.out)["stale"].get_integer() == std::int64_t{0});
  const RunResult found =
      repo.kasava({"ask", "walrus_unstaged_marker", "--no-refresh", "--json", "--mode", "lexical"});
  INFO(describe(found));
  CHECK(found.exit_code == 0);
}
