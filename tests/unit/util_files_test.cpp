// Unit tests for core/util/files.cpp: where the cache goes when neither XDG_CACHE_HOME nor HOME
// says, and which existing folder there is refused.
#include <catch2/catch.hpp>

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <optional>
#include <string>

#include "core/util/files.hpp"
#include "tests/unit/support.hpp"

namespace fs = std::filesystem;
using kasava::test::TempDir;

namespace {

/// Sets (or unsets, with nullopt) an environment variable for one scope.
class ScopedVariable {
public:
  ScopedVariable(const char* name, const std::optional<std::string>& value) : m_name(name) {
    if (const char* old = std::getenv(name)) m_old = old;
    if (value) {
      ::setenv(name, value->c_str(), 1);
    } else {
      ::unsetenv(name);
    }
  }
  ~ScopedVariable() {
    if (m_old) {
      ::setenv(m_name, m_old->c_str(), 1);
    } else {
      ::unsetenv(m_name);
    }
  }
  ScopedVariable(const ScopedVariable&) = delete;
  ScopedVariable& operator=(const ScopedVariable&) = delete;

private:
  const char* m_name;
  std::optional<std::string> m_old;
};

}  // namespace

TEST_CASE("util::cache_directory: XDG_CACHE_HOME, then HOME") {
  const ScopedVariable xdg("XDG_CACHE_HOME", "/x/cache");
  const ScopedVariable home("HOME", "/x/home");
  CHECK(kasava::util::cache_directory() == "/x/cache/kasava");
  const ScopedVariable no_xdg("XDG_CACHE_HOME", std::nullopt);
  CHECK(kasava::util::cache_directory() == "/x/home/.cache/kasava");
}

TEST_CASE("util::cache_directory: without HOME, a private folder of this user's, never a shared one") {
  TempDir tmp;
  const ScopedVariable xdg("XDG_CACHE_HOME", std::nullopt);
  const ScopedVariable home("HOME", std::nullopt);
  const ScopedVariable tmpdir("TMPDIR", tmp.path());
  const std::string expected = tmp.path() + "/kasava-" + std::to_string(::geteuid());

  CHECK(kasava::util::cache_directory() == expected);
  struct stat info {};
  REQUIRE(::lstat(expected.c_str(), &info) == 0);
  CHECK(S_ISDIR(info.st_mode));
  CHECK((info.st_mode & 0777) == 0700);
  CHECK(info.st_uid == ::geteuid());
  CHECK(kasava::util::cache_directory() == expected);  // ours already: used again

  // Made by someone else first (here: writable by anyone), or not a folder: refused.
  ::chmod(expected.c_str(), 0777);
  CHECK_THROWS_WITH(kasava::util::cache_directory(), Catch::Contains("is not private"));
  fs::remove(expected);
  fs::create_symlink(tmp.path(), expected);
  CHECK_THROWS_WITH(kasava::util::cache_directory(), Catch::Contains("not a folder"));
  fs::remove(expected);
  if (::geteuid() == 0) {  // root can give the folder away, as another user would have made it
    fs::create_directory(expected);
    REQUIRE(::chown(expected.c_str(), 65534, 65534) == 0);
    ::chmod(expected.c_str(), 0700);
    CHECK_THROWS_WITH(kasava::util::cache_directory(), Catch::Contains("owned by user 65534"));
  }
}
