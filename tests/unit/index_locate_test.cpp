// Unit tests for core/index/locate: which folder an index belongs to, judged from where it lies.
#include <catch2/catch.hpp>

#include <filesystem>

#include "core/index/locate.hpp"
#include "support.hpp"

using namespace kasava;
namespace fs = std::filesystem;

TEST_CASE("index::folder_of_index") {
  CHECK(index::folder_of_index("/src/repo/.kasava/index.db") == "/src/repo");
  CHECK(index::folder_of_index("/src/repo/./.kasava//index.db") == "/src/repo");
  CHECK(index::folder_of_index("/ci/artifact/index.db") == std::nullopt);
  CHECK(index::folder_of_index("/src/repo/.kasava/other.db") == std::nullopt);
  CHECK(index::folder_of_index("index.db") == std::nullopt);
}

TEST_CASE("index::same_folder compares folders, not spellings") {
  test::TempDir dir;
  fs::create_directories(dir.file("a/b"));
  fs::create_directory_symlink(dir.file("a"), dir.file("link"));
  test::write(dir.file("file"), "x");
  CHECK(index::same_folder(dir.file("a"), dir.file("a/b/..")));
  CHECK(index::same_folder(dir.file("a"), dir.file("link")));
  CHECK_FALSE(index::same_folder(dir.file("a"), dir.file("a/b")));
  CHECK_FALSE(index::same_folder(dir.file("a"), dir.file("missing")));
  CHECK_FALSE(index::same_folder(dir.file("missing"), dir.file("missing")));
  CHECK_FALSE(index::same_folder(dir.file("file"), dir.file("file")));
  CHECK_FALSE(index::same_folder("/", dir.path()));
}
