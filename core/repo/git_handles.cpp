// libgit2 initialisation, error text and repository opening shared by core/repo's sources.
#include "core/repo/git_handles.hpp"

namespace kasava::repo::detail {

namespace {

struct Libgit2 {
  Libgit2() { git_libgit2_init(); }
};

}  // namespace

void ensure_libgit2() {
  // A function-local static: initialised once, thread-safely, on first use.
  static const Libgit2 k_libgit2;
  (void)k_libgit2;
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
