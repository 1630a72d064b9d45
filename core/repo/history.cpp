// read_history(): the newest commits reachable from a tip, each with the files it changed
// against its first parent, and commit_text(), what is kept of a message. Trees are compared
// by id, so a folder that did not change is not read: a commit costs a few tree reads along
// the paths it touched, not a walk of the whole tree.
#include "core/repo/history.hpp"

#include <algorithm>
#include <stdexcept>

#include "core/repo/git_handles.hpp"
#include "core/util/secrets.hpp"
#include "core/util/strings.hpp"

namespace kasava::repo {
namespace {

using detail::CommitHandle;
using detail::last_git_error;
using detail::TreeHandle;

using RevwalkHandle = detail::GitHandle<git_revwalk, git_revwalk_free>;

constexpr std::size_t k_max_line_bytes = 200;
constexpr std::string_view k_line_separator = " ; ";
// What util::secret_rule is asked with: a config file's extension turns on its rule for
// `password = …` lines as well as the rules for key shapes.
constexpr std::string_view k_secret_probe_path = "commit-message.cfg";

// Thrown inside the tree comparison when a commit changed more files than the limit.
struct TooManyPaths {};

class TreeDiff {
public:
  TreeDiff(git_repository* repository, std::size_t max_paths)
      : m_repository(repository), m_max_paths(max_paths) {}

  // The blobs (files, symlinks) of `now` that `before` (may be null) lacks or holds with other
  // content, under `prefix`. Throws TooManyPaths past the limit.
  void compare(const git_tree* now, const git_tree* before, const std::string& prefix) {
    const std::size_t count = git_tree_entrycount(now);
    for (std::size_t i = 0; i < count; ++i) {
      const git_tree_entry* item = git_tree_entry_byindex(now, i);
      const char* name = git_tree_entry_name(item);
      const std::string_view name_view(name);
      if (name_view == ".git" || name_view == ".kasava") continue;
      const git_tree_entry* old = before ? git_tree_entry_byname(before, name) : nullptr;
      const git_object_t type = git_tree_entry_type(item);
      if (old && git_tree_entry_type(old) == type &&
          git_oid_equal(git_tree_entry_id(old), git_tree_entry_id(item))) {
        continue;  // the same subtree or blob: nothing under it changed
      }
      std::string path = prefix.empty() ? std::string(name_view) : prefix + "/" + name;
      if (type == GIT_OBJECT_BLOB) {
        if (m_paths.size() >= m_max_paths) throw TooManyPaths{};
        m_paths.push_back(std::move(path));
      } else if (type == GIT_OBJECT_TREE) {
        TreeHandle subtree = lookup(git_tree_entry_id(item), path);
        TreeHandle old_subtree;
        if (old && git_tree_entry_type(old) == GIT_OBJECT_TREE) {
          old_subtree = lookup(git_tree_entry_id(old), path);
        }
        compare(subtree.get(), old_subtree.get(), path);
      }
      // Submodules (commits) are not files of this repository.
    }
  }

  std::vector<std::string> take() {
    std::sort(m_paths.begin(), m_paths.end());
    return std::move(m_paths);
  }

private:
  TreeHandle lookup(const git_oid* id, const std::string& path) {
    git_tree* raw = nullptr;
    if (git_tree_lookup(&raw, m_repository, id) < 0) {
      throw std::runtime_error("reading tree '" + path + "': " + last_git_error());
    }
    return TreeHandle(raw);
  }

  git_repository* m_repository;
  std::size_t m_max_paths;
  std::vector<std::string> m_paths;
};

git_oid parse_oid(const std::string& hex, bool& ok) {
  git_oid id{};
  ok = hex.size() == 40 && git_oid_fromstr(&id, hex.c_str()) == 0;
  return id;
}

// A body line that is a trailer or tool bookkeeping, not prose about the change.
bool is_trailer(std::string_view line) {
  static constexpr std::string_view k_prefixes[] = {
      "signed-off-by:", "co-authored-by:", "reviewed-by:", "acked-by:", "tested-by:",
      "reported-by:", "suggested-by:", "cc:", "change-id:", "git-svn-id:", "reviewed-on:",
      "cherry picked from commit", "(cherry picked from commit"};
  const std::string lower = util::to_lower(line.substr(0, 32));
  return std::any_of(std::begin(k_prefixes), std::end(k_prefixes),
                     [&](std::string_view prefix) { return lower.starts_with(prefix); });
}

// One line cleaned: control characters as spaces, runs of spaces collapsed, trimmed, cut at a
// UTF-8 boundary.
std::string clean_line(std::string_view line) {
  std::string out;
  out.reserve(std::min(line.size(), k_max_line_bytes));
  for (const char raw : line) {
    const auto c = static_cast<unsigned char>(raw);
    const bool space = c < 0x20 || c == 0x7f || c == ' ';
    if (space) {
      if (!out.empty() && out.back() != ' ') out += ' ';
    } else {
      out += raw;
    }
  }
  while (!out.empty() && out.back() == ' ') out.pop_back();
  if (out.size() > k_max_line_bytes) {
    std::size_t cut = k_max_line_bytes;
    // Back to the start of a UTF-8 sequence (a byte that is not 10xxxxxx).
    while (cut > 0 && (static_cast<unsigned char>(out[cut]) & 0xC0) == 0x80) --cut;
    out.resize(cut);
    while (!out.empty() && out.back() == ' ') out.pop_back();
  }
  return out;
}

}  // namespace

std::string commit_text(std::string_view message, std::size_t body_lines) {
  if (util::looks_like_secret(k_secret_probe_path, message)) {
    // Some line holds it, or the message only as a whole: keep the lines that do not.
    bool found_in_a_line = false;
    std::size_t start = 0;
    while (start <= message.size()) {
      const std::size_t end = std::min(message.find('\n', start), message.size());
      if (util::looks_like_secret(k_secret_probe_path, message.substr(start, end - start))) {
        found_in_a_line = true;
        break;
      }
      start = end + 1;
    }
    if (!found_in_a_line) return {};
  }
  std::string text;
  std::size_t kept = 0;
  std::size_t start = 0;
  while (start <= message.size() && kept < 1 + body_lines) {
    const std::size_t end = std::min(message.find('\n', start), message.size());
    const std::string_view raw = message.substr(start, end - start);
    start = end + 1;
    std::string line = clean_line(raw);
    if (line.empty()) continue;
    if (kept > 0 && is_trailer(line)) continue;
    if (util::looks_like_secret(k_secret_probe_path, raw)) continue;
    if (!text.empty()) text += k_line_separator;
    text += line;
    ++kept;
  }
  return text;
}

util::Result<HistoryWalk> read_history(const std::string& path, const std::string& tip,
                                       const std::string& known_tip, const HistoryLimits& limits) {
  try {
    detail::ensure_libgit2();
    detail::RepositoryHandle repository;
    if (detail::open_repository(path, repository) < 0) {
      return util::Error{"reading history of '" + path + "': " + last_git_error()};
    }
    bool ok = false;
    const git_oid tip_id = parse_oid(tip, ok);
    if (!ok) return util::Error{"reading history: bad commit id '" + tip + "'"};

    HistoryWalk walk;
    bool known_ok = false;
    const git_oid known_id = parse_oid(known_tip, known_ok);
    if (known_ok) {
      if (git_oid_equal(&known_id, &tip_id)) {
        walk.from_scratch = false;
        return walk;
      }
      // 1: tip descends from the known tip. Errors (a commit gone after a gc) mean no.
      walk.from_scratch =
          git_graph_descendant_of(repository.get(), &tip_id, &known_id) != 1;
    }

    git_revwalk* raw_walk = nullptr;
    if (git_revwalk_new(&raw_walk, repository.get()) < 0) {
      return util::Error{"reading history: " + last_git_error()};
    }
    const RevwalkHandle revwalk(raw_walk);
    git_revwalk_sorting(revwalk.get(), GIT_SORT_TOPOLOGICAL | GIT_SORT_TIME);
    if (git_revwalk_push(revwalk.get(), &tip_id) < 0) {
      return util::Error{"reading history of commit '" + tip + "': " + last_git_error()};
    }
    if (!walk.from_scratch && git_revwalk_hide(revwalk.get(), &known_id) < 0) {
      walk.from_scratch = true;
      return read_history(path, tip, "", limits);
    }

    git_oid id{};
    int next = 0;
    while ((next = git_revwalk_next(&id, revwalk.get())) == 0) {
      if (walk.walked == limits.max_commits) {
        // More new commits than one walk reads: the newest ones replace the old history.
        walk.from_scratch = true;
        break;
      }
      ++walk.walked;
      git_commit* raw_commit = nullptr;
      if (git_commit_lookup(&raw_commit, repository.get(), &id) < 0) break;  // shallow boundary
      const CommitHandle commit(raw_commit);
      const unsigned parents = git_commit_parentcount(commit.get());
      if (parents > 1) continue;  // a merge: its changes are its parents' commits
      git_tree* raw_tree = nullptr;
      if (git_commit_tree(&raw_tree, commit.get()) < 0) {
        return util::Error{"reading tree of commit '" + detail::oid_to_hex(id) +
                           "': " + last_git_error()};
      }
      const TreeHandle tree(raw_tree);
      TreeHandle parent_tree;
      if (parents == 1) {
        git_commit* raw_parent = nullptr;
        // A missing parent is a shallow clone's boundary: its diff is unknown, and the walk
        // cannot go on past it anyway.
        if (git_commit_parent(&raw_parent, commit.get(), 0) < 0) break;
        const CommitHandle parent(raw_parent);
        git_tree* raw_parent_tree = nullptr;
        if (git_commit_tree(&raw_parent_tree, parent.get()) < 0) break;
        parent_tree.reset(raw_parent_tree);
      }
      TreeDiff diff(repository.get(), limits.max_paths_per_commit);
      try {
        diff.compare(tree.get(), parent_tree.get(), "");
      } catch (const TooManyPaths&) {
        continue;
      }
      HistoryCommit entry;
      entry.id = detail::oid_to_hex(id);
      entry.paths = diff.take();
      if (entry.paths.empty()) continue;
      const char* message = git_commit_message(commit.get());
      entry.text = commit_text(message ? message : "", limits.body_lines);
      if (entry.text.empty()) continue;
      walk.commits.push_back(std::move(entry));
    }
    if (next < 0 && next != GIT_ITEROVER && walk.walked == 0) {
      return util::Error{"reading history of commit '" + tip + "': " + last_git_error()};
    }
    return walk;
  } catch (const std::exception& exception) {
    return util::Error{"reading history of commit '" + tip + "': " + exception.what()};
  }
}

}  // namespace kasava::repo
