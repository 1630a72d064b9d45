// Unit tests for core/index/indexable: the files read_file_range may serve are exactly those
// an index run would index.
#include <catch2/catch.hpp>

#include <filesystem>

#include "core/index/indexable.hpp"
#include "support.hpp"

using namespace kasava;
namespace fs = std::filesystem;

namespace {

std::unique_ptr<repo::Source> open(const test::TempDir& dir) {
  auto source = repo::open_source(dir.path(), {});
  REQUIRE(source.ok());
  return std::move(*source);
}

}  // namespace

TEST_CASE(
    "index::read_indexable_file serves tracked and untracked files, as the index reads them") {
  test::TempDir dir;
  test::git(dir.path(), "init -q");
  test::write(dir.file("src/app.py"), "def app():\n    return 1\n");
  test::git(dir.path(), "add src/app.py");
  test::git(dir.path(), "commit -q -m app");
  test::write(dir.file("notes.md"), "untracked notes\n");
  auto source = open(dir);
  const auto app = index::read_indexable_file(*source, "src/app.py", 1 << 20);
  REQUIRE(app.ok());
  CHECK(*app == "def app():\n    return 1\n");
  CHECK(index::read_indexable_file(*source, "./src//app.py", 1 << 20).ok());
  const auto notes = index::read_indexable_file(*source, "notes.md", 1 << 20);
  REQUIRE(notes.ok());
  CHECK(*notes == "untracked notes\n");
}

TEST_CASE("index::read_indexable_file refuses what the index skips") {
  test::TempDir dir;
  test::git(dir.path(), "init -q");
  test::write(dir.file(".gitignore"), "ignored.py\nbuild/\n");
  test::write(dir.file("ignored.py"), "x = 1\n");
  test::write(dir.file("build/out.py"), "x = 2\n");
  test::write(dir.file(".env.production"), "KEY=1\n");
  test::write(dir.file("deploy/key.pem"), "k\n");
  test::write(dir.file("id_rsa"), "k\n");
  test::write(dir.file(".netrc"), "machine m\n");
  test::write(dir.file("data.bin"), std::string("a\0b", 3));
  test::write(dir.file("big.txt"), std::string(100, 'x') + "\n");
  test::write(dir.file("package-lock.json"), "{}\n");
  fs::create_symlink("/etc/passwd", dir.file("passwd.txt"));
  auto source = open(dir);
  const std::vector<std::pair<const char*, const char*>> refused{
      {"ignored.py", "ignored by git"},
      {"build/out.py", "ignored by git"},
      {"missing.py", "not in the repository"},
      {"build", "not a file"},
      {".env.production", "(secret)"},
      {"deploy/key.pem", "(secret)"},
      {"id_rsa", "(secret)"},
      {".netrc", "(secret)"},
      {"data.bin", "(binary)"},
      {"big.txt", "limit of 50 bytes"},
      {"package-lock.json", "(generated)"},
      {"passwd.txt", "symlink"},
      {".git/config", "not in the repository"}};
  for (const auto& [path, why] : refused) {
    INFO(path);
    const auto read = index::read_indexable_file(*source, path, 50);
    REQUIRE_FALSE(read.ok());
    CHECK_THAT(read.error().message, Catch::Contains(path) && Catch::Contains(why));
  }
}
