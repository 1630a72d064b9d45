// `kasava index --rebuild` builds the new index beside the old one and puts it in place only
// when complete: it never replaces what is not a kasava index, readers keep answering from the
// old index meanwhile, a rebuild killed midway leaves the old index as it was (and the next
// run cleans up), and an index whose run did not finish says it is partial.
#include <filesystem>
#include <fstream>
#include <sstream>

#include "background.hpp"
#include "harness.hpp"

namespace kasava::e2e {
namespace {

namespace fs = std::filesystem;

constexpr int k_files = 600;
constexpr int k_first_files = 2000;  // a first index long enough to be killed after a commit

std::string slurp(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  std::stringstream text;
  text << file.rdbuf();
  return text.str();
}

// Waits (up to 60 s) until `path` exists while `child` runs; false when the child ended first.
bool wait_for_file(BackgroundKasava& child, const std::string& path) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (std::chrono::steady_clock::now() < deadline) {
    if (fs::exists(path)) return child.running();
    if (!child.running()) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return false;
}

// Stops `child` (SIGSTOP) at a moment when `kasava status` finds the index partial, i.e. once
// the run has committed a write; false when the child ended first. Polled: stopped, looked
// at, resumed when not there yet.
bool stop_when_partial(BackgroundKasava& child, const FixtureRepo& repo) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (std::chrono::steady_clock::now() < deadline && child.running()) {
    child.signal(SIGSTOP);
    const auto status = repo.kasava({"status", "--json"});
    if (status.exit_code == 0 && !parse_json_output(status.out)["complete"].as_bool()) return true;
    child.signal(SIGCONT);
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return false;
}

// Whether a lexical ask finds `words` in the index as it is (exit 0), else exit 1.
int lexical_ask(const FixtureRepo& repo, const std::string& words, const RunOptions& options = {}) {
  const auto result = repo.kasava({"ask", "--no-refresh", "--mode", "lexical", "--json", words}, options);
  INFO(describe(result));
  CHECK((result.exit_code == 0 || result.exit_code == 1));
  return result.exit_code;
}

// How often `needle` occurs in `text`.
std::size_t occurrences(const std::string& text, const std::string& needle) {
  std::size_t count = 0;
  for (auto at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++count;
  return count;
}

const std::string k_partial = "partial (an index run did not finish; run `kasava index`)";

}  // namespace

TEST_CASE("rebuild: what is not a kasava index is never replaced, and the error says how to remove it") {
  FixtureRepo repo;
  write_sample_project(repo);
  repo.commit_all("sample");
  const TempDir elsewhere("foreign");

  const std::string database = elsewhere / "other.db";
  const auto made = run_program("sqlite3", {database, "CREATE TABLE notes(text); INSERT INTO notes VALUES('precious');"});
  INFO(describe(made));
  REQUIRE(made.exit_code == 0);
  const std::string text_file = elsewhere / "notes.txt";
  { std::ofstream(text_file) << "my notes, not an index\n"; }
  const std::string folder = elsewhere / "folder";
  fs::create_directories(folder);
  { std::ofstream(folder + "/inside.txt") << "keep me\n"; }

  for (const std::string& path : {database, text_file, folder}) {
    INFO("--index " << path);
    const std::string before = fs::is_directory(path) ? slurp(path + "/inside.txt") : slurp(path);
    const auto rebuilt = repo.kasava({"--index", path, "index", "--rebuild"});
    INFO(describe(rebuilt));
    CHECK(rebuilt.exit_code == 2);
    CHECK(rebuilt.err.rfind("kasava: error: rebuilding index '" + path + "': ", 0) == 0);
    CHECK_THAT(rebuilt.err, Catch::Contains("not a kasava index"));
    CHECK_THAT(rebuilt.err, Catch::Contains("remove it by hand (rm " +
                                            std::string(fs::is_directory(path) ? "-r " : "") + "'" +
                                            path + "')"));
    CHECK(lines_of(rebuilt.err).size() == 1);
    // Untouched, and nothing left beside it.
    CHECK((fs::is_directory(path) ? slurp(path + "/inside.txt") : slurp(path)) == before);
    CHECK_FALSE(fs::exists(path + ".rebuild"));
    CHECK_FALSE(fs::exists(path + "-wal"));
  }
  CHECK(fs::exists(folder + "/inside.txt"));
  const auto rows = run_program("sqlite3", {database, "SELECT text FROM notes"});
  CHECK(rows.out == "precious\n");

  // The other commands' errors on a foreign file do not suggest --rebuild either.
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"index"}, {"status"}, {"ask", "--no-refresh", "parseConfig"}}) {
    for (const std::string& path : {database, text_file}) {
      std::vector<std::string> full{"--index", path};
      full.insert(full.end(), args.begin(), args.end());
      const auto run = repo.kasava(full);
      INFO(describe(run));
      CHECK(run.exit_code == 2);
      CHECK(run.err.find("--rebuild") == std::string::npos);
      CHECK_THAT(run.err, Catch::Contains("remove it by hand (rm '" + path + "')"));
    }
  }
  CHECK(run_program("sqlite3", {database, "SELECT text FROM notes"}).out == "precious\n");
}

TEST_CASE("rebuild: asks during a rebuild answer from the complete index until the new one is in place") {
  FixtureRepo repo;
  const TempDir scratch("rebuild");
  write_many_files(repo, k_files, 0);
  repo.commit_all("alpha");
  REQUIRE(repo.kasava({"index"}).exit_code == 0);

  RunOptions options;
  options.timeout = std::chrono::seconds(20);  // an ask waiting for the rebuild would hang
  int asks = 0;
  int asks_while_rebuilding = 0;
  // One round: asks with and without the refresh, a --min-score gate, and status.
  auto ask_round = [&](bool rebuilding) {
    for (const std::vector<std::string>& args :
         {std::vector<std::string>{"ask", "--json", "handles request number 7"},
          {"ask", "--no-refresh", "--json", "--min-score", "0.1", "request handler 42"}}) {
      const auto result = repo.kasava(args, options);
      INFO(describe(result));
      REQUIRE(result.exit_code == 0);
      CHECK(!parse_json_output(result.out)["results"].as_array().empty());
      CHECK(result.err.find("partial") == std::string::npos);
      ++asks;
      if (rebuilding) ++asks_while_rebuilding;
    }
    const auto status = repo.kasava({"status", "--json"}, options);
    INFO(describe(status));
    REQUIRE(status.exit_code == 0);
    CHECK(parse_json_output(status.out)["complete"].as_bool());
  };
  ask_round(false);  // before the rebuild starts
  // The work tree now says omega: the rebuild indexes that, the old index says alpha.
  write_many_files(repo, k_files, 1);

  BackgroundKasava rebuild({"index", "--rebuild"}, repo.root(), scratch / "rebuild");
  // Certain overlap: once the new index is being written beside the old one, the rebuild is
  // stopped while a few rounds run, then resumed while asks go on until it has ended.
  REQUIRE(wait_for_file(rebuild, repo.index_path() + ".rebuild"));
  rebuild.signal(SIGSTOP);
  for (int round = 0; round < 3; ++round) {
    ask_round(true);
    // The old index, still: its words, not the new ones.
    CHECK(lexical_ask(repo, "alpha", options) == 0);
    CHECK(lexical_ask(repo, "omega", options) == 1);
  }
  rebuild.signal(SIGCONT);
  while (rebuild.running()) ask_round(true);
  INFO(rebuild.err());
  REQUIRE(rebuild.wait() == 0);
  ask_round(false);

  CHECK(asks_while_rebuilding >= 6);
  // The new index is in place, alone.
  CHECK(lexical_ask(repo, "omega") == 0);
  CHECK(lexical_ask(repo, "alpha") == 1);
  CHECK_FALSE(fs::exists(repo.index_path() + ".rebuild"));
  const auto verified = repo.kasava({"verify", "--json"});
  INFO(describe(verified));
  REQUIRE(verified.exit_code == 0);
  CHECK(parse_json_output(verified.out)["files"].as_integer() == k_files);
  WARN("rebuild: " << asks << " asks, " << asks_while_rebuilding << " while the rebuild ran");
}

TEST_CASE("rebuild: killed midway, the old index stays whole and answering, and the next run cleans up") {
  FixtureRepo repo;
  const TempDir scratch("rebuild");
  write_many_files(repo, k_files, 0);
  REQUIRE(repo.kasava({"index"}).exit_code == 0);
  const std::string beside = repo.index_path() + ".rebuild";
  write_many_files(repo, k_files, 1);
  {
    BackgroundKasava rebuild({"index", "--rebuild"}, repo.root(), scratch / "kill");
    REQUIRE(wait_for_file(rebuild, beside));
    rebuild.signal(SIGKILL);
    REQUIRE(rebuild.wait() == -SIGKILL);
  }
  REQUIRE(fs::exists(beside));  // killed before it was put in place

  const auto verified = repo.kasava({"verify", "--json"});
  INFO(describe(verified));
  REQUIRE(verified.exit_code == 0);
  const auto report = parse_json_output(verified.out);
  CHECK(report["ok"].as_bool());
  CHECK(report["complete"].as_bool());
  CHECK(report["files"].as_integer() == k_files);
  const auto asked = repo.kasava({"ask", "--no-refresh", "--mode", "lexical", "--json", "alpha"});
  INFO(describe(asked));
  CHECK(asked.exit_code == 0);
  CHECK(asked.err.empty());

  const auto next = repo.kasava({"index"});
  INFO(describe(next));
  REQUIRE(next.exit_code == 0);
  CHECK_FALSE(fs::exists(beside));
  CHECK_FALSE(fs::exists(beside + "-wal"));
  CHECK(lexical_ask(repo, "omega") == 0);

  // A killed rebuild's leftover is also cleaned by the next rebuild, which then completes.
  write_many_files(repo, k_files, 0);
  {
    BackgroundKasava rebuild({"index", "--rebuild"}, repo.root(), scratch / "kill2");
    REQUIRE(wait_for_file(rebuild, beside));
    rebuild.signal(SIGKILL);
    REQUIRE(rebuild.wait() == -SIGKILL);
  }
  REQUIRE(repo.kasava({"index", "--rebuild"}).exit_code == 0);
  CHECK_FALSE(fs::exists(beside));
  CHECK(lexical_ask(repo, "alpha") == 0);
  CHECK(lexical_ask(repo, "omega") == 1);
}

TEST_CASE("rebuild: a first index killed midway is partial in status, verify and ask until indexed") {
  FixtureRepo repo;
  const TempDir scratch("partial");
  write_many_files(repo, k_first_files, 0);
  {
    BackgroundKasava first({"index"}, repo.root(), scratch / "first");
    REQUIRE(stop_when_partial(first, repo));
    first.signal(SIGKILL);
    REQUIRE(first.wait() == -SIGKILL);
  }
  const auto status = repo.kasava({"status"});
  INFO(describe(status));
  REQUIRE(status.exit_code == 0);
  CHECK_THAT(status.out, Catch::Contains(k_partial));
  const auto status_json = repo.kasava({"status", "--json"});
  REQUIRE(status_json.exit_code == 0);
  CHECK_FALSE(parse_json_output(status_json.out)["complete"].as_bool());
  const auto verified = repo.kasava({"verify"});
  INFO(describe(verified));
  REQUIRE(verified.exit_code == 0);
  CHECK_THAT(verified.out, Catch::Contains("run: " + k_partial));
  const auto verified_json = repo.kasava({"verify", "--json"});
  REQUIRE(verified_json.exit_code == 0);
  CHECK_FALSE(parse_json_output(verified_json.out)["complete"].as_bool());
  // ask still answers what is there, and warns once.
  const auto asked = repo.kasava({"ask", "--no-refresh", "handles request"});
  INFO(describe(asked));
  REQUIRE((asked.exit_code == 0 || asked.exit_code == 1));
  CHECK(occurrences(asked.err, k_partial) == 1);
  CHECK(asked.err.rfind("kasava: warning: ", 0) == 0);

  REQUIRE(repo.kasava({"index"}).exit_code == 0);
  const auto complete = repo.kasava({"status", "--json"});
  REQUIRE(complete.exit_code == 0);
  CHECK(parse_json_output(complete.out)["complete"].as_bool());
  CHECK(repo.kasava({"status"}).out.find("partial") == std::string::npos);
  CHECK(repo.kasava({"verify"}).out.find("partial") == std::string::npos);
  const auto answered = repo.kasava({"ask", "--no-refresh", "handles request"});
  CHECK(answered.exit_code == 0);
  CHECK(answered.err.find("partial") == std::string::npos);
}

TEST_CASE("rebuild: an update killed midway is partial until the refresh before an ask completes it") {
  FixtureRepo repo;
  const TempDir scratch("partial");
  write_many_files(repo, k_first_files, 0);
  REQUIRE(repo.kasava({"index"}).exit_code == 0);
  write_many_files(repo, k_first_files, 1);  // every file changes
  {
    BackgroundKasava update({"index"}, repo.root(), scratch / "update");
    REQUIRE(stop_when_partial(update, repo));
    update.signal(SIGKILL);
    REQUIRE(update.wait() == -SIGKILL);
  }
  const auto status = repo.kasava({"status"});
  INFO(describe(status));
  CHECK_THAT(status.out, Catch::Contains(k_partial + "; last complete run "));
  const auto warned = repo.kasava({"ask", "--no-refresh", "handles request number 7"});
  CHECK(occurrences(warned.err, k_partial) == 1);

  const auto asked = repo.kasava({"ask", "--json", "handles omega request number 7"});
  INFO(describe(asked));
  REQUIRE(asked.exit_code == 0);
  CHECK(asked.err.find("partial") == std::string::npos);
  CHECK(parse_json_output(repo.kasava({"status", "--json"}).out)["complete"].as_bool());
  CHECK(lexical_ask(repo, "alpha") == 1);
}

}  // namespace kasava::e2e
