// The advisory writer lock of an index (see index_lock.hpp).
#include "commands/index_lock.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <thread>

#include "commands/interrupt.hpp"
#include "core/util/result.hpp"

namespace kasava::commands {

IndexLock::IndexLock(const std::string& index_path, LockWait wait,
                     const std::function<void()>& on_wait)
    : m_path(index_path + ".lock") {
  std::error_code error;
  const auto parent = std::filesystem::path(m_path).parent_path();
  if (!parent.empty()) std::filesystem::create_directories(parent, error);
  if (error) {  // name the folder: "creating …index.db.lock: No such file" would hide the cause
    throw util::Failure("creating folder '" + parent.string() + "': " +
                        std::strerror(error.value()));
  }
  m_fd = ::open(m_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0666);
  if (m_fd < 0) {
    throw util::Failure("locking index: creating '" + m_path + "': " + std::strerror(errno));
  }
  if (::flock(m_fd, LOCK_EX | LOCK_NB) == 0) {
    m_held = true;
    return;
  }
  if (errno != EWOULDBLOCK) {
    const std::string reason = std::strerror(errno);
    ::close(m_fd);
    m_fd = -1;
    throw util::Failure("locking index '" + m_path + "': " + reason);
  }
  if (wait == LockWait::no_wait) return;
  if (on_wait) on_wait();
  // Poll rather than block in flock(): a blocked flock would not notice Ctrl-C, because the
  // interrupt handler only sets a flag.
  while (::flock(m_fd, LOCK_EX | LOCK_NB) != 0) {
    if (interrupted()) {
      ::close(m_fd);
      m_fd = -1;
      throw util::Failure("interrupted");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  m_held = true;
}

IndexLock::~IndexLock() {
  if (m_fd >= 0) ::close(m_fd);  // closing the descriptor releases the flock
}

} // namespace kasava::commands
