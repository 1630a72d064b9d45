// Unit tests for core/mcp/files.cpp: paths confined to the repository root ('..', absolute
// paths, symlinks out, .git refused) and line ranges (clamping, limits, errors).
#include <catch2/catch.hpp>

#include <filesystem>

#include "core/mcp/files.hpp"
#include "tests/unit/support.hpp"

using kasava::mcp::confined_path;
using kasava::mcp::line_range;

TEST_CASE("mcp::confined_path: files inside the root resolve, escapes are refused") {
  kasava::test::TempDir outside;
  kasava::test::write(outside.file("secret.txt"), "secret\n");
  kasava::test::TempDir repo;
  kasava::test::write(repo.file("src/a.py"), "x = 1\n");
  kasava::test::write(repo.file(".git/config"), "[core]\n");
  std::filesystem::create_symlink(outside.file("secret.txt"), repo.file("link_out"));
  std::filesystem::create_symlink("src/a.py", repo.file("link_in"));
  std::filesystem::create_directory_symlink(outside.path(), repo.file("dir_out"));

  CHECK(confined_path(repo.path(), "src/a.py").value() == repo.file("src/a.py"));
  CHECK(confined_path(repo.path(), "./src/a.py").value() == repo.file("src/a.py"));
  CHECK(confined_path(repo.path(), "link_in").value() == repo.file("src/a.py"));

  for (const char* escape : {"../secret.txt", "src/../../secret.txt", "link_out", "dir_out/secret.txt",
                             "/etc/passwd", "~/x", ".git/config", "", "src", "missing.py"}) {
    INFO(escape);
    const auto result = confined_path(repo.path(), escape);
    CHECK_FALSE(result.ok());
  }
  CHECK_THAT(confined_path(repo.path(), "../x").error().message, Catch::Contains("'..'"));
  CHECK_THAT(confined_path(repo.path(), "/etc/passwd").error().message, Catch::Contains("absolute"));
  CHECK_THAT(confined_path(repo.path(), "link_out").error().message, Catch::Contains("outside"));
}

TEST_CASE("mcp::line_range: inclusive ranges, clamped to the end and to the line limit") {
  const std::string text = "one\ntwo\nthree\nfour";
  auto middle = line_range(text, 2, 3, 100);
  REQUIRE(middle.ok());
  CHECK(middle->text == "two\nthree\n");
  CHECK(middle->first == 2);
  CHECK(middle->last == 3);
  CHECK(middle->total == 4);
  CHECK_FALSE(middle->truncated);

  auto past_end = line_range(text, 3, 99, 100);
  REQUIRE(past_end.ok());
  CHECK(past_end->text == "three\nfour\n");
  CHECK(past_end->last == 4);

  auto limited = line_range(text, 1, 4, 2);
  REQUIRE(limited.ok());
  CHECK(limited->text == "one\ntwo\n");
  CHECK(limited->truncated);

  CHECK(line_range("a\n", 1, 1, 10)->total == 1);
  CHECK_FALSE(line_range(text, 5, 6, 10).ok());
  CHECK_FALSE(line_range(text, 0, 2, 10).ok());
  CHECK_FALSE(line_range(text, 3, 2, 10).ok());
  CHECK_FALSE(line_range("", 1, 1, 10).ok());
}
