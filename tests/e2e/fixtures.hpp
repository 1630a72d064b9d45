// Set-up shared by the end-to-end tests of how an index is found, trusted and read by another
// user: the sample project committed and indexed, and a copy of its index in a folder of its
// own (as a CI artifact is), optionally read-only to everyone.
#pragma once

#include <catch2/catch.hpp>

#include <filesystem>
#include <string>

#include "tests/e2e/harness.hpp"

namespace kasava::e2e {

/// Writes the sample project into `repo`, commits it and indexes it; fails the test unless
/// `kasava index` exits 0.
inline void index_sample_project(const FixtureRepo& repo) {
  write_sample_project(repo);
  repo.commit_all("sample");
  const RunResult index = repo.kasava({"index"});
  INFO(describe(index));
  REQUIRE(index.exit_code == 0);
}

/// Copies the index of `repo` to `folder`/index.db and returns that path.
inline std::string copy_index(const FixtureRepo& repo, const TempDir& folder) {
  const std::string copy = folder / "index.db";
  std::filesystem::copy_file(repo.index_path(), copy);
  return copy;
}

/// Makes `file` read-only to everyone (0444) in `folder`, which everyone may enter and list
/// but nobody may write (0555).
inline void make_read_only(const std::string& file, const std::string& folder) {
  namespace fs = std::filesystem;
  const auto read = fs::perms::owner_read | fs::perms::group_read | fs::perms::others_read;
  const auto enter = fs::perms::owner_exec | fs::perms::group_exec | fs::perms::others_exec;
  fs::permissions(file, read);
  fs::permissions(folder, read | enter);
}

}  // namespace kasava::e2e
