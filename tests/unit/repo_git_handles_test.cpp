// Tests for core/repo/git_handles.cpp: libgit2 is initialised without parsing the CA bundle,
// which is loaded for real before network use.
#include <catch2/catch.hpp>

#include <dlfcn.h>
#include <filesystem>

#include "core/repo/certificates.hpp"
#include "core/repo/source.hpp"

namespace {

/// The real mbedTLS function, when libgit2 brought libmbedx509 into the process.
void* real_parse_file() {
  return ::dlsym(RTLD_NEXT, "mbedtls_x509_crt_parse_file");
}

}  // namespace

TEST_CASE("repo::detail::load_default_certificates loads what initialisation deferred") {
  // Initialises libgit2 (once per process).
  (void)kasava::repo::find_work_tree(std::filesystem::temp_directory_path().string());
  const std::string bundle = kasava::repo::detail::deferred_certificates();
  if (real_parse_file() == nullptr) {
    CHECK(bundle.empty());  // libgit2 without mbedTLS: nothing to defer
  } else {
    INFO("libgit2 uses mbedTLS, so it asked for its default CA bundle at initialisation");
    CHECK_FALSE(bundle.empty());
  }
  CHECK(kasava::repo::detail::load_default_certificates());
  CHECK(kasava::repo::detail::load_default_certificates());  // once is enough; again is fine
}
