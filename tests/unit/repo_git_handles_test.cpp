// Tests for core/repo/git_handles.cpp: libgit2 is initialised without parsing the CA bundle,
// which is loaded for real before network use.
#include <catch2/catch.hpp>

#include <filesystem>

#include "core/repo/certificates.hpp"
#include "core/repo/source.hpp"

TEST_CASE("repo::detail::load_default_certificates loads what initialisation deferred") {
  // Initialises libgit2 (once per process).
  (void)kasava::repo::find_work_tree(std::filesystem::temp_directory_path().string());
  const std::string bundle = kasava::repo::detail::deferred_certificates();
  // The build links Debian's libgit2, built on mbedTLS (cmake/Dependencies.cmake), which asks
  // for its default CA bundle at initialisation.
  CHECK_FALSE(bundle.empty());
  CHECK(kasava::repo::detail::load_default_certificates());
  CHECK(kasava::repo::detail::load_default_certificates());  // once is enough; again is fine
}
