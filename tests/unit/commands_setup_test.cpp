// Unit tests for commands/setup.cpp's pure part: what -C's value names (a folder, or the
// cache clone of a URL, where `kasava index URL` puts it).
#include <catch2/catch.hpp>

#include "commands/setup.hpp"
#include "core/repo/source.hpp"

using kasava::commands::place_of;

TEST_CASE("setup::place_of: a URL is its clone in the cache, as `kasava index URL` makes it") {
  for (const std::string url : {"https://example.com/org/repo", "https://example.com/org/repo.git",
                                "file:///srv/git/project.git", "git@example.com:org/repo.git"}) {
    INFO(url);
    const auto place = place_of(url, "/cache");
    CHECK(place.url == url);
    CHECK(place.directory == kasava::repo::clone_path_for(url, "/cache"));
    CHECK(place.directory.starts_with("/cache/repos/"));
  }
  CHECK(place_of("https://example.com/org/repo", "/cache").directory ==
        "/cache/repos/example.com/org/repo");
}

TEST_CASE("setup::place_of: anything else is a folder, kept as given") {
  for (const std::string path : {"../project", "src", "/abs/path", "./host:name", "C:repo"}) {
    INFO(path);
    const auto place = place_of(path, "/cache");
    CHECK(place.url.empty());
    CHECK(place.directory == path);
  }
}
