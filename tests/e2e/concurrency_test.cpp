// Concurrency: `ask` while `index` writes in another process keeps answering (WAL readers
// never block), and two `kasava index` runs at once serialize on the index lock.
#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include "background.hpp"
#include "harness.hpp"

namespace kasava::e2e {
namespace {

constexpr int k_files = 1500;

std::string ask_places(const FixtureRepo& repo, const std::string& query) {
  const auto result = repo.kasava({"ask", "--no-refresh", "--json", query});
  INFO(describe(result));
  REQUIRE(result.exit_code == 0);
  std::string places;
  const auto document = parse_json_output(result.out);
  for (const auto& item : document["results"].as_array()) {
    places += item["path"].as_string() + ":" + std::to_string(item["start_line"].as_integer()) + " ";
  }
  return places;
}

}  // namespace

TEST_CASE("concurrency: ask while index runs never reports a locked database") {
  FixtureRepo repo;
  const TempDir scratch("concurrency");
  write_many_files(repo, k_files, 0);
  REQUIRE(repo.kasava({"index"}).exit_code == 0);
  write_many_files(repo, k_files, 1);  // every file changes: the next run rewrites them all

  BackgroundKasava writer({"index"}, repo.root(), scratch / "writer");
  int asks_during = 0;
  while (writer.running() || asks_during == 0) {
    for (const auto& args : std::vector<std::vector<std::string>>{
             {"ask", "--no-refresh", "handler request", "--json"}, {"status"}}) {
      const auto result = repo.kasava(args);
      INFO(describe(result));
      CHECK(result.err.find("locked") == std::string::npos);
      CHECK(result.err.find("busy") == std::string::npos);
      REQUIRE((result.exit_code == 0 || result.exit_code == 1));
    }
    ++asks_during;
  }
  INFO(writer.err());
  REQUIRE(writer.wait() == 0);
  CHECK(writer.err().find("locked") == std::string::npos);
  WARN("concurrency: " << asks_during << " ask+status rounds while index ran");
}

TEST_CASE("concurrency: two index runs at once serialize and leave a correct index") {
  FixtureRepo repo;
  write_many_files(repo, k_files, 0);
  // Reference: a clean index made alone, in another file.
  const TempDir scratch("concurrency");
  const auto reference_index = scratch / "reference.db";
  RunOptions reference_options;
  reference_options.set_env("KASAVA_INDEX", reference_index);
  REQUIRE(repo.kasava({"index"}, reference_options).exit_code == 0);
  const std::vector<std::string> queries{"alpha handler 42", "Worker7 run", "request number 999"};
  std::vector<std::string> expected;
  for (const auto& query : queries) {
    const auto result =
        repo.kasava({"--index", reference_index, "ask", "--no-refresh", "--json", query});
    REQUIRE(result.exit_code == 0);
    expected.push_back(result.out);
  }

  for (const auto& second : std::vector<std::vector<std::string>>{{"index"},
                                                                   {"index", "--rebuild"}}) {
    repo.remove(".kasava");
    BackgroundKasava first({"index"}, repo.root(), scratch / "first");
    BackgroundKasava other(second, repo.root(), scratch / "second");
    INFO(first.err() << "\n" << other.err());
    REQUIRE(first.wait() == 0);
    REQUIRE(other.wait() == 0);
    for (const auto* run : {&first, &other}) {
      CHECK(run->err().find("locked") == std::string::npos);
    }
    const auto verified = repo.kasava({"verify"});
    INFO(describe(verified));
    REQUIRE(verified.exit_code == 0);
    for (std::size_t i = 0; i < queries.size(); ++i) {
      const auto result = repo.kasava({"ask", "--no-refresh", "--json", queries[i]});
      REQUIRE(result.exit_code == 0);
      // The same places as the reference (the index path differs, the results may not).
      CHECK(ask_places(repo, queries[i]) ==
            [&] {
              std::string places;
              const auto document = parse_json_output(expected[i]);
              for (const auto& item : document["results"].as_array()) {
                places += item["path"].as_string() + ":" +
                          std::to_string(item["start_line"].as_integer()) + " ";
              }
              return places;
            }());
    }
  }
}

TEST_CASE("concurrency: a second index run says it waits for the first") {
  // The test holds the index's writer lock itself, as a first run would, so the second run
  // certainly finds it taken (a real first run may commit and release before the second
  // starts on a loaded machine).
  FixtureRepo repo;
  const TempDir scratch("concurrency");
  write_many_files(repo, 20, 0);
  REQUIRE(repo.kasava({"index"}).exit_code == 0);
  const std::string lock_path = repo.root() + "/.kasava/index.db.lock";
  const int lock_fd = ::open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0666);
  REQUIRE(lock_fd >= 0);
  REQUIRE(::flock(lock_fd, LOCK_EX) == 0);
  write_many_files(repo, 20, 1);
  BackgroundKasava second({"index"}, repo.root(), scratch / "second");
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (second.err().find("waiting for it to finish") == std::string::npos &&
         second.running() && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  INFO(second.err());
  CHECK(second.running());  // it waits while the lock is held
  CHECK(second.err().find("waiting for it to finish") != std::string::npos);
  ::close(lock_fd);  // releases the lock: the second run goes on
  REQUIRE(second.wait() == 0);
  CHECK(second.out().find("20 files indexed (20 parsed") != std::string::npos);
}

}  // namespace kasava::e2e
