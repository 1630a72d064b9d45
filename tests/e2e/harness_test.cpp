// Tests of the end-to-end harness itself: environment isolation, large outputs without
// deadlock, timeouts that kill the whole process group, fixture repositories.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "tests/e2e/harness.hpp"

using namespace kasava::e2e;

TEST_CASE(
    "harness: children get a private HOME and cache and none of kasava's or git's variables") {
  ::setenv("KASAVA_INDEX", "/should/not/leak", 1);
  ::setenv("NO_COLOR", "1", 1);
  ::setenv("GIT_DIR", "/should/not/leak", 1);
  const RunResult run = run_program("sh", {"-c", "env"});
  ::unsetenv("KASAVA_INDEX");
  ::unsetenv("NO_COLOR");
  ::unsetenv("GIT_DIR");
  INFO(describe(run));
  REQUIRE(run.exit_code == 0);
  CHECK(run.out.find("KASAVA_INDEX=") == std::string::npos);
  CHECK(run.out.find("NO_COLOR=") == std::string::npos);
  CHECK(run.out.find("GIT_DIR=") == std::string::npos);
  CHECK_THAT(run.out, Catch::Contains("XDG_CACHE_HOME=/") && Catch::Contains("HOME=/"));
  const char* real_home = std::getenv("HOME");
  if (real_home != nullptr && *real_home != '\0') {
    CHECK(run.out.find(std::string("\nHOME=") + real_home + "\n") == std::string::npos);
  }

  RunOptions options;
  options.set_env("KASAVA_INDEX", "chosen");
  options.unset_env.push_back("PATH");
  const RunResult chosen = run_program("/usr/bin/env", {}, options);
  CHECK_THAT(chosen.out, Catch::Contains("KASAVA_INDEX=chosen"));
  CHECK(chosen.out.find("\nPATH=") == std::string::npos);
}

TEST_CASE("harness: arguments pass through without a shell, large outputs do not deadlock") {
  const RunResult echo = run_program("printf", {"%s|", "a b", "$HOME", "'q'", ""});
  CHECK(echo.out == "a b|$HOME|'q'||");

  const RunResult big =
      run_program("sh", {"-c", "head -c 3000000 /dev/zero; head -c 3000000 /dev/zero >&2; exit 3"});
  CHECK(big.exit_code == 3);
  CHECK(big.out.size() == 3000000);
  CHECK(big.err.size() == 3000000);
}

TEST_CASE("harness: a child past its timeout is killed with everything it started") {
  TempDir dir("timeout");
  RunOptions options;
  options.timeout = std::chrono::seconds(1);
  options.cwd = dir.path();
  const RunResult run = run_program("sh", {"-c", "sleep 30 & echo $! > grandchild; wait"}, options);
  CHECK(run.timed_out);
  CHECK(run.signal == SIGKILL);
  CHECK(run.seconds < 10);

  // The grandchild went with it: gone, or a zombie waiting for init to reap it.
  std::ifstream pid_file(dir / "grandchild");
  int pid = 0;
  REQUIRE(pid_file >> pid);
  bool alive = true;
  for (int attempt = 0; attempt < 100 && alive; ++attempt) {
    std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
    std::string pid_text, name, state;
    alive = static_cast<bool>(stat >> pid_text >> name >> state) && state != "Z";
    if (alive) ::usleep(10000);
  }
  CHECK_FALSE(alive);
}

TEST_CASE("harness: a fixture repository commits with a fixed identity on branch main") {
  FixtureRepo repo;
  repo.write("a/b.txt", "hello\n");
  const std::string id = repo.commit_all("first");
  CHECK(id.size() == 40);
  CHECK(repo.git({"log", "-1", "--format=%an <%ae> %s"}) == "t <t@t> first\n");
  CHECK(repo.git({"rev-parse", "--abbrev-ref", "HEAD"}) == "main\n");
  repo.remove("a");
  CHECK_FALSE(repo.exists("a/b.txt"));
  CHECK(repo.git_result({"no-such-git-command"}).exit_code != 0);
  const std::string root = repo.root();
  {
    FixtureRepo other(GitInit::no);
    CHECK_FALSE(std::filesystem::exists(other.path(".git")));
  }
  CHECK(std::filesystem::exists(root));
}

TEST_CASE("harness: a terminal for stdout or stderr is a terminal to the child, and read whole") {
  RunOptions options;
  options.stdout_mode = StdoutMode::terminal;
  const RunResult tty = run_program(
      "sh", {"-c", "test -t 1 && echo out-is-tty; test -t 2 || echo err-is-not >&2"}, options);
  CHECK(tty.out == "out-is-tty\n");
  CHECK(tty.err == "err-is-not\n");

  options.stdout_mode = StdoutMode::capture;
  options.stderr_terminal = true;
  const RunResult err = run_program(
      "sh", {"-c", "test -t 2 && echo err-is-tty >&2; test -t 1 || echo out-is-not"}, options);
  CHECK(err.out == "out-is-not\n");
  CHECK(err.err == "err-is-tty\n");

  // More than a terminal buffers, without a deadlock.
  options.stdout_mode = StdoutMode::terminal;
  const RunResult big =
      run_program("sh", {"-c", "head -c 200000 /dev/zero | tr '\\0' 'x'"}, options);
  CHECK(big.out.size() == 200000);
}
