// The opt-in watcher and the refresh's question to it: see watch.hpp.
//
// Why a change is never missed: a refresh asks by creating a cookie file in the index's
// folder and waiting until the watcher deletes it. One inotify instance has one queue, in the
// order events happened, so when the watcher handles the cookie it has handled every change
// made before the refresh asked (including the creation of new folders, which it watches
// before going on). The state it publishes then counts all of them; a refresh that skips the
// listing does so only when that count is the one its last full listing started from.
#include "core/repo/watch.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/file.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <random>
#include <sstream>
#include <unordered_map>
#include <utility>
#include <vector>

#include "core/util/result.hpp"

namespace kasava::repo {

namespace {

constexpr std::string_view k_state_header = "kasava-watch 1";
constexpr std::uint32_t k_tree_events = IN_CREATE | IN_DELETE | IN_MODIFY | IN_ATTRIB |
                                         IN_CLOSE_WRITE | IN_MOVED_FROM | IN_MOVED_TO |
                                         IN_DELETE_SELF | IN_MOVE_SELF | IN_ONLYDIR |
                                         IN_DONT_FOLLOW | IN_EXCL_UNLINK;

std::string file_name_of(const std::string& path) {
  const auto slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

std::string folder_of(const std::string& path) {
  const auto slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

bool write_atomically(const std::string& path, const std::string& text) {
  const std::string temporary = path + ".tmp";
  {
    std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
    if (!out) return false;
    out << text;
    if (!out.flush()) return false;
  }
  return std::rename(temporary.c_str(), path.c_str()) == 0;
}

std::optional<std::string> read_small_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

std::string new_epoch() {
  std::random_device device;
  const auto now = std::chrono::system_clock::now().time_since_epoch();
  return std::to_string(getpid()) + "-" +
         std::to_string(std::chrono::duration_cast<std::chrono::nanoseconds>(now).count()) +
         "-" + std::to_string(device());
}

bool has_prefix(std::string_view text, std::string_view prefix) {
  return text.substr(0, prefix.size()) == prefix;
}

/// The inotify instance and the folders it watches.
class Inotify {
public:
  struct Folder {
    std::string path;  // absolute
    WatchedFolder kind;
    bool holds_index;
  };

  Inotify(std::string root, std::string index_folder)
      : m_root(std::move(root)), m_index_folder(std::move(index_folder)) {
    m_fd = inotify_init1(IN_CLOEXEC | IN_NONBLOCK);
    if (m_fd < 0) {
      if (errno == EMFILE)
        throw util::Failure("watch: too many inotify instances: raise the sysctl "
                            "fs.inotify.max_user_instances");
      throw util::Failure(std::string("watch: inotify: ") + std::strerror(errno));
    }
  }
  ~Inotify() { close(m_fd); }
  Inotify(const Inotify&) = delete;
  Inotify& operator=(const Inotify&) = delete;

  int fd() const { return m_fd; }
  std::size_t count() const { return m_folders.size(); }
  const Folder* folder(int wd) const {
    const auto found = m_folders.find(wd);
    return found == m_folders.end() ? nullptr : &found->second;
  }
  void forget(int wd) { m_folders.erase(wd); }

  /// Watches `path` (a folder of kind `kind`) and, for tree folders, every folder under it.
  void watch_all(const std::string& path, WatchedFolder kind) {
    if (!add(path, kind)) return;
    if (kind == WatchedFolder::git_info || kind == WatchedFolder::private_) return;
    DIR* dir = opendir(path.c_str());
    if (!dir) return;  // gone meanwhile: its deletion is an event of its parent
    std::vector<std::string> children;
    while (const dirent* entry = readdir(dir)) {
      const std::string name = entry->d_name;
      if (name == "." || name == "..") continue;
      bool is_dir = entry->d_type == DT_DIR;
      if (entry->d_type == DT_UNKNOWN) {
        struct stat st {};
        is_dir = lstat((path + "/" + name).c_str(), &st) == 0 && S_ISDIR(st.st_mode);
      }
      if (is_dir) children.push_back(name);
    }
    closedir(dir);
    for (const auto& name : children) {
      const std::string child = path + "/" + name;
      if (kind == WatchedFolder::tree && path == m_root && name == ".git") {
        watch_all(child, WatchedFolder::git);
      } else if (kind == WatchedFolder::tree && path == m_root && name == ".kasava") {
        if (child == m_index_folder) add(child, WatchedFolder::private_);
      } else if (kind == WatchedFolder::git) {
        if (name == "info") watch_all(child, WatchedFolder::git_info);
        if (name == "refs") watch_all(child, WatchedFolder::git_refs);
      } else {
        watch_all(child, kind);
      }
    }
  }

  /// Watches the index's folder for cookies (when the tree walk did not).
  void watch_index_folder() {
    struct stat st {};
    if (stat(m_index_folder.c_str(), &st) != 0) {
      throw util::Failure("watch: cannot read '" + m_index_folder + "': " + std::strerror(errno));
    }
    for (auto& entry : m_folders) {
      Folder& folder = entry.second;
      struct stat other {};
      if (stat(folder.path.c_str(), &other) == 0 && other.st_ino == st.st_ino &&
          other.st_dev == st.st_dev) {
        folder.holds_index = true;
        return;
      }
    }
    add(m_index_folder, WatchedFolder::private_);
    for (auto& entry : m_folders)
      if (entry.second.path == m_index_folder) entry.second.holds_index = true;
  }

private:
  bool add(const std::string& path, WatchedFolder kind) {
    const int wd = inotify_add_watch(m_fd, path.c_str(), k_tree_events);
    if (wd < 0) {
      if (errno == ENOSPC)
        throw util::Failure("watch: the inotify watch limit is reached at " +
                            std::to_string(m_folders.size()) +
                            " folders: raise the sysctl fs.inotify.max_user_watches");
      if (errno == ENOENT || errno == ENOTDIR || errno == ELOOP) return false;  // gone
      throw util::Failure("watch: cannot watch '" + path + "': " + std::strerror(errno));
    }
    m_folders[wd] = Folder{path, kind, path == m_index_folder};
    return true;
  }

  std::string m_root;
  std::string m_index_folder;
  int m_fd = -1;
  std::unordered_map<int, Folder> m_folders;
};

}  // namespace

WatchFiles watch_files(const std::string& index_path) {
  return {index_path + ".watch", index_path + ".watch.lock", index_path + ".watch.seen",
          index_path + ".watch-cookie-"};
}

std::string format_watch_state(const WatchState& state) {
  return std::string(k_state_header) + "\nepoch " + state.epoch + "\nsequence " +
         std::to_string(state.sequence) + "\n";
}

std::optional<WatchState> parse_watch_state(std::string_view text) {
  std::istringstream in{std::string(text)};
  std::string header;
  std::string epoch_word;
  std::string sequence_word;
  WatchState state;
  std::string sequence_text;
  if (!std::getline(in, header) || header != k_state_header) return std::nullopt;
  if (!(in >> epoch_word >> state.epoch >> sequence_word >> sequence_text)) return std::nullopt;
  if (epoch_word != "epoch" || sequence_word != "sequence" || state.epoch.empty())
    return std::nullopt;
  if (sequence_text.empty() ||
      sequence_text.find_first_not_of("0123456789") != std::string::npos ||
      sequence_text.size() > 19)
    return std::nullopt;
  state.sequence = std::stoull(sequence_text);
  std::string rest;
  if (in >> rest) return std::nullopt;
  return state;
}

bool may_skip_listing(const std::optional<WatchState>& current,
                      const std::optional<WatchState>& seen, std::string_view fingerprint,
                      std::string_view seen_fingerprint) {
  return current && seen && *current == *seen && !fingerprint.empty() &&
         fingerprint == seen_fingerprint;
}

EventMeaning classify_event(std::uint32_t mask, WatchedFolder folder, std::string_view name,
                            bool holds_index, std::string_view index_name) {
  if (mask & IN_Q_OVERFLOW) return EventMeaning::rescan;
  if (mask & IN_IGNORED) return EventMeaning::ignore;  // its deletion was its parent's event
  if (holds_index && !name.empty()) {
    const std::string cookie = std::string(index_name) + ".watch-cookie-";
    if (has_prefix(name, cookie)) return (mask & IN_CREATE) ? EventMeaning::cookie : EventMeaning::ignore;
    if (has_prefix(name, index_name)) return EventMeaning::ignore;  // the index and its files
  }
  switch (folder) {
    case WatchedFolder::private_:
      return EventMeaning::ignore;
    case WatchedFolder::git:
      return (name == "HEAD" || name == "index" || name == "packed-refs" || name == "config")
                 ? EventMeaning::change
                 : EventMeaning::ignore;
    case WatchedFolder::git_info:
      return name == "exclude" ? EventMeaning::change : EventMeaning::ignore;
    case WatchedFolder::git_refs:
      if (name.size() >= 5 && name.substr(name.size() - 5) == ".lock") return EventMeaning::ignore;
      break;
    case WatchedFolder::tree:
      break;
  }
  if ((mask & IN_ISDIR) && (mask & (IN_CREATE | IN_MOVED_TO))) return EventMeaning::change_new_dir;
  return EventMeaning::change;
}

void watch_tree(const std::string& root, const std::string& index_path,
                const std::atomic<bool>& stop,
                const std::function<void(std::size_t folders)>& on_ready) {
  const WatchFiles files = watch_files(index_path);
  const int lock_fd = open(files.lock.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (lock_fd < 0)
    throw util::Failure("watch: cannot create '" + files.lock + "': " + std::strerror(errno));
  struct LockGuard {
    int fd;
    std::string state;
    ~LockGuard() {
      std::remove(state.c_str());
      close(fd);
    }
  } guard{lock_fd, files.state};
  if (flock(lock_fd, LOCK_EX | LOCK_NB) != 0) {
    guard.state.clear();  // the other watcher's
    throw util::Failure("watch: another watcher already watches for '" + index_path + "'");
  }
  const std::string index_folder = folder_of(index_path);
  const std::string index_name = file_name_of(index_path);
  Inotify inotify(root, index_folder);
  inotify.watch_all(root, WatchedFolder::tree);
  // A linked worktree's `.git` is a file naming its git folder, whose `commondir` names the
  // main repository's (refs, config and info/exclude live there).
  if (const auto link = read_small_file(root + "/.git"); link && has_prefix(*link, "gitdir: ")) {
    std::string git_dir = link->substr(8);
    while (!git_dir.empty() && (git_dir.back() == '\n' || git_dir.back() == '\r')) git_dir.pop_back();
    if (!git_dir.empty() && git_dir.front() != '/') git_dir = root + "/" + git_dir;
    inotify.watch_all(git_dir, WatchedFolder::git);
    if (auto common = read_small_file(git_dir + "/commondir")) {
      while (!common->empty() && (common->back() == '\n' || common->back() == '\r')) common->pop_back();
      if (!common->empty() && common->front() != '/') *common = git_dir + "/" + *common;
      if (!common->empty()) inotify.watch_all(*common, WatchedFolder::git);
    }
  }
  inotify.watch_index_folder();

  WatchState state{new_epoch(), 0};
  if (!write_atomically(files.state, format_watch_state(state)))
    throw util::Failure("watch: cannot write '" + files.state + "'");
  if (on_ready) on_ready(inotify.count());

  alignas(inotify_event) char buffer[64 * 1024];
  while (!stop.load()) {
    pollfd poll_fd{inotify.fd(), POLLIN, 0};
    const int ready = poll(&poll_fd, 1, 200);
    if (ready <= 0) continue;  // timeout or a signal: look at `stop` again
    bool changed = false;
    std::vector<std::string> cookies;
    for (;;) {
      const ssize_t length = read(inotify.fd(), buffer, sizeof buffer);
      if (length <= 0) break;  // EAGAIN: the queue is empty
      for (ssize_t offset = 0; offset < length;) {
        const auto* event = reinterpret_cast<const inotify_event*>(buffer + offset);
        offset += static_cast<ssize_t>(sizeof(inotify_event) + event->len);
        const std::string_view name = event->len ? std::string_view(event->name) : "";
        const Inotify::Folder* folder = inotify.folder(event->wd);
        if (!folder && !(event->mask & IN_Q_OVERFLOW)) continue;
        const EventMeaning meaning =
            folder ? classify_event(event->mask, folder->kind, name, folder->holds_index, index_name)
                   : EventMeaning::rescan;
        switch (meaning) {
          case EventMeaning::ignore:
            if (event->mask & IN_IGNORED) inotify.forget(event->wd);
            break;
          case EventMeaning::change:
            changed = true;
            break;
          case EventMeaning::change_new_dir:
            changed = true;
            inotify.watch_all(folder->path + "/" + std::string(name), folder->kind);
            break;
          case EventMeaning::rescan:
            // Events were dropped, folder creations among them: watch every folder again
            // (a folder already watched keeps its watch) and count a change.
            changed = true;
            inotify.watch_all(root, WatchedFolder::tree);
            break;
          case EventMeaning::cookie:
            cookies.push_back(folder->path + "/" + std::string(name));
            break;
        }
      }
    }
    if (changed) ++state.sequence;
    if (changed || !cookies.empty()) {
      if (!write_atomically(files.state, format_watch_state(state)))
        throw util::Failure("watch: cannot write '" + files.state + "'");
    }
    for (const auto& cookie : cookies) unlink(cookie.c_str());
  }
}

std::optional<WatchState> ask_watcher(const std::string& index_path, int timeout_ms) {
  const WatchFiles files = watch_files(index_path);
  const int lock_fd = open(files.lock.c_str(), O_RDONLY | O_CLOEXEC);
  if (lock_fd < 0) return std::nullopt;
  const bool alive = flock(lock_fd, LOCK_SH | LOCK_NB) != 0 && errno == EWOULDBLOCK;
  close(lock_fd);
  if (!alive) return std::nullopt;

  const int fd = inotify_init1(IN_CLOEXEC | IN_NONBLOCK);
  if (fd < 0) return std::nullopt;
  const std::string folder = folder_of(index_path);
  if (inotify_add_watch(fd, folder.c_str(), IN_DELETE | IN_ONLYDIR) < 0) {
    close(fd);
    return std::nullopt;
  }
  static std::atomic<unsigned> counter{0};
  const std::string cookie = files.cookie_prefix + std::to_string(getpid()) + "-" +
                             std::to_string(counter.fetch_add(1));
  const std::string cookie_name = file_name_of(cookie);
  const int cookie_fd = open(cookie.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (cookie_fd < 0) {
    close(fd);
    return std::nullopt;
  }
  close(cookie_fd);
  bool answered = false;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  alignas(inotify_event) char buffer[4096];
  while (!answered) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now()).count();
    if (left <= 0) break;
    pollfd poll_fd{fd, POLLIN, 0};
    if (poll(&poll_fd, 1, static_cast<int>(left)) <= 0) continue;
    const ssize_t length = read(fd, buffer, sizeof buffer);
    for (ssize_t offset = 0; offset < length;) {
      const auto* event = reinterpret_cast<const inotify_event*>(buffer + offset);
      offset += static_cast<ssize_t>(sizeof(inotify_event) + event->len);
      if (event->len && cookie_name == event->name) answered = true;
    }
  }
  close(fd);
  if (!answered) {
    unlink(cookie.c_str());
    return std::nullopt;
  }
  const auto text = read_small_file(files.state);
  return text ? parse_watch_state(*text) : std::nullopt;
}

std::string index_fingerprint(const std::string& index_path) {
  // SQLite's readers create and delete an empty WAL: only one with frames is a write not yet
  // checkpointed into the file (a checkpoint changes the file's mtime).
  std::ostringstream text;
  struct stat st {};
  if (stat(index_path.c_str(), &st) != 0) return "";
  text << ' ' << st.st_ino << ':' << st.st_size << ':' << st.st_mtim.tv_sec << '.'
       << st.st_mtim.tv_nsec;
  const std::string wal = index_path + "-wal";
  if (stat(wal.c_str(), &st) == 0 && st.st_size > 0) {
    text << " wal:" << st.st_size << ':' << st.st_mtim.tv_sec << '.' << st.st_mtim.tv_nsec;
  }
  return text.str();
}

void record_seen(const std::string& index_path, const WatchState& state) {
  write_atomically(watch_files(index_path).seen,
                   format_watch_state(state) + "index" + index_fingerprint(index_path) + "\n");
}

std::optional<std::pair<WatchState, std::string>> read_seen(const std::string& index_path) {
  const auto text = read_small_file(watch_files(index_path).seen);
  if (!text) return std::nullopt;
  const auto line = text->rfind("\nindex ");
  if (line == std::string::npos) return std::nullopt;
  auto state = parse_watch_state(std::string_view(*text).substr(0, line + 1));
  if (!state) return std::nullopt;
  std::string fingerprint = text->substr(line + 6);  // from the space after "index"
  if (!fingerprint.empty() && fingerprint.back() == '\n') fingerprint.pop_back();
  return std::pair{*state, fingerprint};
}

}  // namespace kasava::repo
