// Remote repositories: recognising clone URLs, redacting their credentials, choosing where they
// are cloned in the cache, and cloning or fetching them with libgit2.
#include <unistd.h>
#include <algorithm>
#include <array>
#include <cctype>
#include <filesystem>
#include <random>
#include <vector>

#include "core/repo/detail.hpp"
#include "core/repo/git_handles.hpp"
#include "core/util/files.hpp"
#include "core/util/strings.hpp"

namespace kasava::repo {

namespace fs = std::filesystem;

namespace {

constexpr std::array k_url_schemes = {"https", "http", "ssh", "git", "file", "git+ssh", "ssh+git"};

/// The parts of a clone URL that matter to us.
struct UrlParts {
  std::string scheme;    ///< "" for scp-like user@host:path
  std::string userinfo;  ///< "user" or "user:password", without '@'
  std::string host;      ///< without port or brackets
  std::string path;      ///< without query or fragment
};

std::optional<UrlParts> parse_url(std::string_view url) {
  if (url.empty() || std::any_of(url.begin(), url.end(), [](char c) {
        return std::isspace(static_cast<unsigned char>(c));
      })) {
    return std::nullopt;
  }
  UrlParts parts;
  if (const std::size_t separator = url.find("://"); separator != std::string_view::npos) {
    parts.scheme = util::to_lower(url.substr(0, separator));
    if (std::find(k_url_schemes.begin(), k_url_schemes.end(), parts.scheme) ==
        k_url_schemes.end()) {
      return std::nullopt;
    }
    std::string_view rest = url.substr(separator + 3);
    const std::size_t authority_end = std::min(rest.find_first_of("/?#"), rest.size());
    std::string_view authority = rest.substr(0, authority_end);
    std::string_view path = rest.substr(authority_end);
    path = path.substr(0, std::min(path.find_first_of("?#"), path.size()));
    if (const std::size_t at = authority.rfind('@'); at != std::string_view::npos) {
      parts.userinfo = std::string(authority.substr(0, at));
      authority = authority.substr(at + 1);
    }
    if (!authority.empty() && authority.front() == '[') {
      const std::size_t close = authority.find(']');
      authority =
          authority.substr(1, close == std::string_view::npos ? std::string_view::npos : close - 1);
    } else {
      authority = authority.substr(0, std::min(authority.find(':'), authority.size()));
    }
    parts.host = util::to_lower(authority);
    parts.path = std::string(path);
    if (parts.host.empty() && parts.scheme != "file") return std::nullopt;
    return parts;
  }

  // scp-like: user@host:path, the ':' before any '/'. Requiring the user keeps Windows drive
  // letters ("C:\x", "C:/x") and odd local names ("notes:v2") from looking like URLs.
  const std::size_t colon = url.find(':');
  if (colon == std::string_view::npos || colon + 1 >= url.size()) return std::nullopt;
  const std::size_t slash = url.find_first_of("/\\");
  if (slash != std::string_view::npos && slash < colon) return std::nullopt;
  const std::size_t at = url.substr(0, colon).rfind('@');
  if (at == std::string_view::npos || at == 0 || at + 1 >= colon) return std::nullopt;
  parts.userinfo = std::string(url.substr(0, at));
  parts.host = util::to_lower(url.substr(at + 1, colon - at - 1));
  parts.path = std::string(url.substr(colon + 1));
  return parts;
}

/// One path component made safe for the file system: no separators or control characters.
std::string safe_component(std::string_view text) {
  std::string safe;
  for (const char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    const bool plain = std::isalnum(byte) || c == '.' || c == '-' || c == '_' || c == '~' ||
                       c == '+' || c == '@' || c == '%' || c == '=' || c == ',' || byte >= 0x80;
    safe.push_back(plain ? c : '_');
  }
  return safe;
}

void replace_all(std::string& text, const std::string& from, const std::string& to) {
  if (from.empty()) return;
  for (std::size_t at = text.find(from); at != std::string::npos;
       at = text.find(from, at + to.size())) {
    text.replace(at, from.size(), to);
  }
}

/// A libgit2 message with anything secret from `url` taken out.
std::string scrubbed(std::string message, const std::string& url) {
  replace_all(message, url, redact_url(url));
  if (const auto parts = parse_url(url);
      parts && !parts->scheme.empty() && !parts->userinfo.empty()) {
    replace_all(message, parts->userinfo, "***");
    if (const std::size_t colon = parts->userinfo.find(':'); colon != std::string::npos) {
      replace_all(message, parts->userinfo.substr(colon + 1), "***");
    }
  }
  return message;
}

/// Credentials for libgit2: the URL's own user:password (libgit2 uses those itself), else the
/// ssh agent, else the platform's default (Negotiate/NTLM). One attempt each, so a refused
/// login fails at once instead of asking forever.
struct CredentialState {
  int attempts = 0;
};

int acquire_credentials(git_credential** out, const char* /*url*/, const char* username_from_url,
                        unsigned int allowed_types, void* payload) {
  auto& state = *static_cast<CredentialState*>(payload);
  if (++state.attempts > 1) return GIT_PASSTHROUGH;
  if (allowed_types & GIT_CREDENTIAL_SSH_KEY) {
    return git_credential_ssh_key_from_agent(out, username_from_url ? username_from_url : "git");
  }
  if (allowed_types & GIT_CREDENTIAL_DEFAULT) return git_credential_default_new(out);
  return GIT_PASSTHROUGH;
}

void set_up_fetch(git_fetch_options& options, CredentialState& state) {
  options.callbacks.credentials = acquire_credentials;
  options.callbacks.payload = &state;
  // Honour http.proxy and the *_proxy variables like git does.
  options.proxy_opts.type = GIT_PROXY_AUTO;
}

util::Status clone_into(const std::string& url, const std::string& destination) {
  const std::string redacted = redact_url(url);
  std::error_code error;
  const fs::path target(destination);
  // The folders this clone creates on the way, deepest first: a failed clone removes them
  // again (those still empty: another run may be cloning beside us), so the cache is left as
  // it was found.
  std::vector<fs::path> created;
  for (fs::path folder = target.parent_path(); !folder.empty() && !fs::exists(folder, error);
       folder = folder.parent_path()) {
    created.push_back(folder);
    if (folder == folder.parent_path()) break;
  }
  const auto remove_created = [&created] {
    std::error_code ignored;
    for (const fs::path& folder : created) {
      if (!fs::remove(folder, ignored)) break;  // not empty (or not ours to remove): stop
    }
  };
  if (target.has_parent_path()) fs::create_directories(target.parent_path(), error);
  if (error) {
    remove_created();
    return util::Error{"creating '" + target.parent_path().string() +
                       "': " + detail::error_text(error)};
  }

  // Clone beside the destination and rename at the end: a failed or interrupted clone never
  // leaves a half-filled destination that a later run would take for a good one.
  std::random_device random;
  const std::string temporary = destination + ".partial-" + std::to_string(::getpid()) + "-" +
                                std::to_string(random() % 1000000);
  fs::remove_all(temporary, error);

  CredentialState credentials;
  git_clone_options options;
  git_clone_options_init(&options, GIT_CLONE_OPTIONS_VERSION);
  set_up_fetch(options.fetch_opts, credentials);
  git_repository* raw_repository = nullptr;
  if (git_clone(&raw_repository, url.c_str(), temporary.c_str(), &options) < 0) {
    const std::string message = scrubbed(detail::last_git_error(), url);
    fs::remove_all(temporary, error);
    remove_created();
    return util::Error{"cloning '" + redacted + "': " + message};
  }
  {
    const detail::RepositoryHandle repository(raw_repository);
    // Keep credentials out of the clone's .git/config; fetches pass the full URL again.
    if (redacted != url) git_remote_set_url(repository.get(), "origin", redacted.c_str());
  }
  fs::rename(temporary, destination, error);
  if (error) {
    fs::remove_all(temporary, error);
    // Another run may have finished the same clone first: theirs is as good as ours.
    if (fs::exists(destination + "/.git")) return util::ok_status();
    remove_created();
    return util::Error{"cloning '" + redacted + "': moving the clone to '" + destination +
                       "': " + detail::error_text(error)};
  }
  return util::ok_status();
}

util::Status fetch_into(const std::string& url, const std::string& destination) {
  const std::string redacted = redact_url(url);
  git_repository* raw_repository = nullptr;
  if (git_repository_open(&raw_repository, destination.c_str()) < 0) {
    return util::Error{"opening clone '" + destination + "': " + detail::last_git_error()};
  }
  const detail::RepositoryHandle repository(raw_repository);

  // An anonymous remote with the full URL: origin's stored URL has its credentials removed.
  git_remote* raw_remote = nullptr;
  if (git_remote_create_anonymous(&raw_remote, repository.get(), url.c_str()) < 0) {
    return util::Error{"fetching '" + redacted + "': " + scrubbed(detail::last_git_error(), url)};
  }
  const detail::RemoteHandle remote(raw_remote);

  CredentialState credentials;
  git_fetch_options options;
  git_fetch_options_init(&options, GIT_FETCH_OPTIONS_VERSION);
  set_up_fetch(options, credentials);
  const auto failed = [&] {
    return util::Error{"fetching '" + redacted + "': " + scrubbed(detail::last_git_error(), url)};
  };
  if (git_remote_connect(remote.get(), GIT_DIRECTION_FETCH, &options.callbacks, &options.proxy_opts,
                         nullptr) < 0) {
    return failed();
  }
  detail::Buffer default_branch;
  if (const int code = git_remote_default_branch(default_branch.get(), remote.get()); code < 0) {
    if (code == GIT_ENOTFOUND) return util::ok_status();  // the remote has no commits yet
    return failed();
  }
  const std::string branch = default_branch.str();

  char refspec_text[] = "+refs/heads/*:refs/remotes/origin/*";
  char* refspec_list[] = {refspec_text};
  const git_strarray refspecs{refspec_list, 1};
  if (git_remote_download(remote.get(), &refspecs, &options) < 0) return failed();
  if (git_remote_update_tips(remote.get(), &options.callbacks, 1, GIT_REMOTE_DOWNLOAD_TAGS_AUTO,
                             "kasava: fetch") < 0) {
    return failed();
  }

  const git_remote_head** heads = nullptr;
  std::size_t head_count = 0;
  if (git_remote_ls(&heads, &head_count, remote.get()) < 0) return failed();
  const git_oid* tip = nullptr;
  for (std::size_t i = 0; i < head_count; ++i) {
    if (branch == heads[i]->name) tip = &heads[i]->oid;
  }
  if (tip == nullptr)
    return util::Error{"fetching '" + redacted + "': the remote's branch '" + branch +
                       "' vanished"};

  git_object* raw_commit = nullptr;
  if (git_object_lookup(&raw_commit, repository.get(), tip, GIT_OBJECT_COMMIT) < 0) return failed();
  const detail::ObjectHandle commit(raw_commit);
  // The cache clone is ours alone: make its work tree exactly the remote's default branch.
  if (git_reset(repository.get(), commit.get(), GIT_RESET_HARD, nullptr) < 0) {
    return util::Error{"updating clone '" + destination + "': " + detail::last_git_error()};
  }
  return util::ok_status();
}

}  // namespace

bool is_url(const std::string& target) {
  return parse_url(target).has_value();
}

Identity identity_of(const std::string& root) {
  detail::ensure_libgit2();
  Identity identity;
  git_repository* raw_repository = nullptr;
  if (git_repository_open_ext(&raw_repository, root.c_str(), GIT_REPOSITORY_OPEN_NO_SEARCH, nullptr) < 0) {
    return identity;
  }
  const detail::RepositoryHandle repository(raw_repository);
  git_remote* raw_remote = nullptr;
  if (git_remote_lookup(&raw_remote, repository.get(), "origin") == 0) {
    const detail::RemoteHandle remote(raw_remote);
    if (const char* url = git_remote_url(remote.get()); url != nullptr) identity.origin_url = redact_url(url);
  }
  git_reference* raw_head = nullptr;
  if (git_repository_head(&raw_head, repository.get()) == 0) {
    const detail::ReferenceHandle head(raw_head);
    if (git_reference_is_branch(head.get())) identity.branch = git_reference_shorthand(head.get());
  } else if (git_repository_head_unborn(repository.get()) == 1 &&
             git_reference_lookup(&raw_head, repository.get(), "HEAD") == 0) {
    // No commit yet: HEAD still names the branch the first commit will make.
    const detail::ReferenceHandle head(raw_head);
    const char* target = git_reference_symbolic_target(head.get());
    const std::string_view prefix = "refs/heads/";
    if (target != nullptr && std::string_view(target).starts_with(prefix)) {
      identity.branch = std::string(target).substr(prefix.size());
    }
  }
  return identity;
}

std::string owner_and_name(const std::string& url) {
  std::string path = url;
  while (!path.empty() && path.back() == '/') path.pop_back();
  if (path.ends_with(".git")) path.resize(path.size() - 4);
  while (!path.empty() && path.back() == '/') path.pop_back();
  std::vector<std::string> parts;
  std::string part;
  for (const char c : path) {
    if (c == '/' || c == ':') {
      if (!part.empty()) parts.push_back(part);
      part.clear();
    } else {
      part += c;
    }
  }
  if (!part.empty()) parts.push_back(part);
  if (parts.size() >= 2) return parts[parts.size() - 2] + "/" + parts.back();
  return parts.empty() ? "" : parts.back();
}

std::string redact_url(const std::string& url) {
  const std::size_t separator = url.find("://");
  if (separator == std::string::npos) return url;
  const std::size_t authority_start = separator + 3;
  const std::size_t authority_end = std::min(url.find_first_of("/?#", authority_start), url.size());
  const std::size_t at = url.rfind('@', authority_end == 0 ? 0 : authority_end - 1);
  if (at == std::string::npos || at < authority_start) return url;
  return url.substr(0, authority_start) + url.substr(at + 1);
}

std::string clone_path_for(const std::string& url, const std::string& cache_dir) {
  const std::optional<UrlParts> parts = parse_url(url);
  std::string host = "local";
  std::string path = url;
  if (parts) {
    if (parts->scheme != "file" && !parts->host.empty()) host = safe_component(parts->host);
    path = parts->path;
  }
  std::vector<std::string> components;
  for (const std::string& component : util::split(path, '/')) {
    // Dropping "." and ".." keeps every clone inside <cache_dir>/repos/<host>.
    if (component.empty() || component == "." || component == "..") continue;
    components.push_back(safe_component(component));
  }
  if (!components.empty() && components.back().ends_with(".git")) {
    components.back().resize(components.back().size() - 4);
    if (components.back().empty()) components.pop_back();
  }
  if (components.empty()) components.emplace_back("repo");

  std::string result = cache_dir + "/repos/" + host;
  for (const std::string& component : components) result += "/" + component;
  return result;
}

util::Result<std::string> clone_or_fetch(const std::string& url, const std::string& destination) {
  detail::ensure_libgit2();
  // HTTPS needs the CA certificates that initialisation skipped (git_handles.cpp).
  if (!detail::load_default_certificates()) {
    return util::Error{"cloning '" + redact_url(url) +
                       "': loading CA certificates: " + detail::last_git_error()};
  }
  try {
    const std::string absolute = util::absolute_path(destination);
    std::error_code error;
    const bool exists = fs::exists(absolute, error);
    // An empty directory (say, made by hand) is as good as none.
    const bool usable =
        exists && !(fs::is_directory(absolute, error) && fs::is_empty(absolute, error));
    const util::Status status = usable ? fetch_into(url, absolute) : clone_into(url, absolute);
    if (!status) return status.error();
    return absolute;
  } catch (const std::exception& exception) {
    return util::Error{"cloning '" + redact_url(url) + "': " + exception.what()};
  }
}

}  // namespace kasava::repo
