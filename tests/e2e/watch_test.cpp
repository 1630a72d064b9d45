// End-to-end tests of `kasava watch`: with the watcher running, each `ask` sees every kind of
// change (a file changed, added, renamed, deleted; a folder added and renamed; a new ignore
// rule), and while the watcher is stopped (no answer) or after it is killed it still does
// (the refresh lists the tree again).
#include <catch2/catch.hpp>

#include <signal.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <thread>

#include "background.hpp"
#include "harness.hpp"

using namespace kasava::e2e;

namespace {

/// The paths `ask` finds for an identifier (lexical: no model needed to match a name).
std::vector<std::string> found(const FixtureRepo& repo, const std::string& word) {
  const RunResult run = repo.kasava({"ask", word, "--mode", "lexical", "--json"});
  REQUIRE((run.exit_code == 0 || run.exit_code == 1));  // 1: nothing found
  if (run.exit_code == 1) return {};
  std::vector<std::string> paths = result_paths(parse_json_output(run.out));
  std::sort(paths.begin(), paths.end());
  paths.erase(std::unique(paths.begin(), paths.end()), paths.end());
  return paths;
}

using Paths = std::vector<std::string>;

// Waits (up to 30 s) for a started watcher to say it is watching.
void wait_until_watching(BackgroundKasava& watcher) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (watcher.out().find("watching") == std::string::npos && watcher.running() &&
         std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  REQUIRE(watcher.out().find("watching") != std::string::npos);
}

}  // namespace

TEST_CASE("watch: ask sees every change while the watcher runs, and after it is killed") {
  FixtureRepo repo;
  repo.write("src/alpha.py", "def alphawidget():\n    \"\"\"Frobnicates the alpha widget.\"\"\"\n    return 1\n");
  repo.write("README.md", "# project\n");
  repo.commit_all("first");
  REQUIRE(repo.kasava({"index", "-q"}).exit_code == 0);

  TempDir scratch("watch");
  BackgroundKasava watcher({"watch"}, repo.root(), scratch / "watch");
  wait_until_watching(watcher);

  CHECK(found(repo, "alphawidget") == Paths{"src/alpha.py"});
  CHECK(found(repo, "alphawidget") == Paths{"src/alpha.py"});  // nothing changed: skipped
  // Changed in place.
  repo.write("src/alpha.py", "def alphagadget():\n    return 2\n");
  CHECK(found(repo, "alphawidget").empty());
  CHECK(found(repo, "alphagadget") == Paths{"src/alpha.py"});
  // Added (untracked).
  repo.write("src/beta.py", "def betasprocket():\n    return 3\n");
  CHECK(found(repo, "betasprocket") == Paths{"src/beta.py"});
  // Renamed.
  std::filesystem::rename(repo.path("src/beta.py"), repo.path("src/gamma.py"));
  CHECK(found(repo, "betasprocket") == Paths{"src/gamma.py"});
  // Deleted.
  repo.remove("src/gamma.py");
  CHECK(found(repo, "betasprocket").empty());
  // A new folder with a file, then a file added in it afterwards, then the folder renamed.
  repo.write("lib/deep/one.py", "def deltaspindle():\n    return 4\n");
  CHECK(found(repo, "deltaspindle") == Paths{"lib/deep/one.py"});
  repo.write("lib/deep/two.py", "def epsilonwrench():\n    return 5\n");
  CHECK(found(repo, "epsilonwrench") == Paths{"lib/deep/two.py"});
  std::filesystem::rename(repo.path("lib"), repo.path("moved"));
  CHECK(found(repo, "epsilonwrench") == Paths{"moved/deep/two.py"});
  // Ignored by a new .gitignore rule.
  repo.write(".gitignore", "moved/\n");
  CHECK(found(repo, "epsilonwrench").empty());
  CHECK(watcher.running());

  // Stopped (alive, holding its lock, but not answering): after the wait for its answer
  // (2 s) the refresh lists the tree.
  watcher.signal(SIGSTOP);
  repo.write("src/alpha.py", "def etaratchet():\n    return 7\n");
  CHECK(found(repo, "etaratchet") == Paths{"src/alpha.py"});
  for (const auto& entry : std::filesystem::directory_iterator(repo.path(".kasava")))
    CHECK(entry.path().filename().string().find("cookie") == std::string::npos);  // removed
  watcher.signal(SIGCONT);
  repo.write("src/alpha.py", "def thetabolt():\n    return 8\n");
  CHECK(found(repo, "thetabolt") == Paths{"src/alpha.py"});

  // Killed: no answer, so each ask lists the tree as without a watcher.
  watcher.signal(SIGKILL);
  watcher.wait();
  repo.write("src/alpha.py", "def zetalever():\n    return 6\n");
  CHECK(found(repo, "zetalever") == Paths{"src/alpha.py"});
  repo.remove(".gitignore");
  CHECK(found(repo, "epsilonwrench") == Paths{"moved/deep/two.py"});
}

TEST_CASE("watch: a second watcher of the same index is refused, and Ctrl-C stops one") {
  FixtureRepo repo;
  repo.write("a.py", "def a():\n    return 1\n");
  repo.commit_all("first");
  REQUIRE(repo.kasava({"index", "-q"}).exit_code == 0);
  TempDir scratch("watch");
  BackgroundKasava watcher({"watch"}, repo.root(), scratch / "watch");
  wait_until_watching(watcher);
  const RunResult second = repo.kasava({"watch"});
  CHECK(second.exit_code != 0);
  CHECK(second.err.find("kasava: error: watch: another watcher already watches") != std::string::npos);
  watcher.signal(SIGINT);
  CHECK(watcher.wait() == 130);
  CHECK_FALSE(repo.exists(".kasava/index.db.watch"));  // its state goes with it
}
