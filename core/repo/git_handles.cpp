// libgit2 initialisation, error text and repository opening shared by core/repo's sources.
//
// Deferred CA certificates. Debian's libgit2 is built with mbedTLS, and git_libgit2_init()
// parses the whole system CA bundle (/etc/ssl/certs/ca-certificates.crt, ~140 certificates of
// base64) whether or not the process will ever open a TLS connection: ~54M instructions, a
// fifth of a no-change `kasava index` and more than the rest of the listing. kasava needs them
// only to clone or fetch over HTTPS. libgit2 is linked in statically (cmake/Dependencies.cmake)
// with `-Wl,--wrap=mbedtls_x509_crt_parse_file`, so the linker sends its calls to
// __wrap_mbedtls_x509_crt_parse_file below and __real_… names mbedTLS's own. While
// git_libgit2_init() runs on this thread, the call records the path and returns "loaded,
// nothing in it"; every other call (load_default_certificates() among them) goes to the real
// function.
#include "core/repo/git_handles.hpp"

#include <mutex>

namespace kasava::repo::detail {

namespace {

/// True on the thread running git_libgit2_init(), only while it runs.
thread_local bool t_deferring_certificates = false;
std::mutex g_certificates_mutex;
std::string g_deferred_certificates;  // the bundle libgit2 wanted at init, "" if none
bool g_certificates_loaded = false;

constexpr std::size_t k_pack_window_bytes = 8u << 20;
constexpr std::size_t k_pack_mapped_limit_bytes = 32u << 20;

struct Libgit2 {
  Libgit2() {
    t_deferring_certificates = true;
    git_libgit2_init();
    t_deferring_certificates = false;
    // Reading history touches much of a pack file: libgit2 would map it in windows of 1 GiB
    // and keep up to 8 GiB mapped, and each touched page counts in the process's memory.
    // Small windows, few kept, bound that (a first index of redis: 182 MB peak, 135 MB).
    git_libgit2_opts(GIT_OPT_SET_MWINDOW_SIZE, static_cast<std::size_t>(k_pack_window_bytes));
    git_libgit2_opts(GIT_OPT_SET_MWINDOW_MAPPED_LIMIT,
                     static_cast<std::size_t>(k_pack_mapped_limit_bytes));
    // No object cache. libgit2 keeps every commit and small tree it reads (up to 256 MiB) for
    // the repository's lifetime; the history walk (core/repo/history.cpp) reads thousands of
    // them, each at most twice (as a commit's tree, then as its child's parent tree), so the
    // cache mostly grew: a first index of redis (4,000 commits) peaked at 130 MiB with it and
    // 108 MiB without, CPU time unchanged (farm-bench, 5 alternating runs: A/B cpu 1.007).
    git_libgit2_opts(GIT_OPT_ENABLE_CACHING, 0);
  }
};

}  // namespace

void ensure_libgit2() {
  // A function-local static: initialised once, thread-safely, on first use.
  static const Libgit2 k_libgit2;
  (void)k_libgit2;
}

std::string deferred_certificates() {
  std::lock_guard lock(g_certificates_mutex);
  return g_deferred_certificates;
}

bool load_default_certificates() {
  ensure_libgit2();
  std::lock_guard lock(g_certificates_mutex);
  if (g_deferred_certificates.empty() || g_certificates_loaded) return true;
  if (git_libgit2_opts(GIT_OPT_SET_SSL_CERT_LOCATIONS, g_deferred_certificates.c_str(), nullptr) <
      0) {
    return false;
  }
  g_certificates_loaded = true;
  return true;
}

std::string last_git_error(const char* fallback) {
  const git_error* error = git_error_last();
  if (error == nullptr || error->message == nullptr || *error->message == '\0') return fallback;
  std::string message = error->message;
  // libgit2 sometimes ends messages with a newline or a full stop; our messages are one line.
  while (!message.empty() && (message.back() == '\n' || message.back() == '.')) message.pop_back();
  for (char& c : message) {
    if (c == '\n' || c == '\r') c = ' ';
  }
  return message;
}

std::string oid_to_hex(const git_oid& oid) {
  char text[GIT_OID_HEXSZ + 1];
  git_oid_tostr(text, sizeof text, &oid);
  return text;
}

int open_repository(const std::string& path, RepositoryHandle& out) {
  ensure_libgit2();
  git_repository* repository = nullptr;
  const int code = git_repository_open_ext(&repository, path.c_str(), 0, nullptr);
  if (code < 0) return code;
  out.reset(repository);
  return 0;
}

std::string work_tree_of(git_repository* repository) {
  const char* work_tree = git_repository_workdir(repository);
  if (work_tree == nullptr) return {};
  std::string root = work_tree;
  if (root.size() > 1 && root.back() == '/') root.pop_back();
  return root;
}

}  // namespace kasava::repo::detail

/// mbedTLS's function, renamed by the linker's --wrap. The chain type is opaque here: C linkage
/// matches by name.
extern "C" int __real_mbedtls_x509_crt_parse_file(void* chain, const char* path);

/// See "Deferred CA certificates" above.
extern "C" int __wrap_mbedtls_x509_crt_parse_file(void* chain, const char* path) {
  using kasava::repo::detail::g_deferred_certificates;
  if (kasava::repo::detail::t_deferring_certificates && path != nullptr) {
    std::lock_guard lock(kasava::repo::detail::g_certificates_mutex);
    g_deferred_certificates = path;
    return 0;
  }
  return __real_mbedtls_x509_crt_parse_file(chain, path);
}
