// The writer thread of an index run: commits each window handed to it in its own transaction.
#include "core/index/writer.hpp"

#include <utility>

namespace kasava::index {

Writer::Writer(store::Store& store) : m_store(store), m_thread([this] { loop(); }) {}

Writer::~Writer() {
  if (!m_thread.joinable()) return;
  {
    std::lock_guard lock(m_mutex);
    m_done = true;
    m_changed.notify_all();
  }
  m_thread.join();
}

bool Writer::push(Batch batch) {
  std::unique_lock lock(m_mutex);
  m_changed.wait(lock, [&] { return m_queue.size() < 2 || m_failure; });
  if (m_failure) return false;
  m_queue.push_back(std::move(batch));
  m_changed.notify_all();
  return true;
}

void Writer::finish() {
  {
    std::lock_guard lock(m_mutex);
    m_done = true;
    m_changed.notify_all();
  }
  m_thread.join();
  if (m_failure) std::rethrow_exception(m_failure);
}

void Writer::loop() {
  for (;;) {
    Batch batch;
    {
      std::unique_lock lock(m_mutex);
      m_changed.wait(lock, [&] { return !m_queue.empty() || m_done; });
      if (m_queue.empty()) return;
      batch = std::move(m_queue.front());
    }
    try {
      Transaction transaction(m_store);
      for (std::size_t i = 0; i < batch.records.size(); ++i) {
        m_store.put_file(batch.records[i], batch.chunks[i], batch.vectors[i], batch.texts[i]);
      }
      for (const store::FileRecord& record : batch.stats) m_store.put_stat(record);
      transaction.commit();
    } catch (...) {
      std::lock_guard lock(m_mutex);
      m_failure = std::current_exception();
      m_queue.clear();
      m_changed.notify_all();
      return;
    }
    std::lock_guard lock(m_mutex);
    m_queue.pop_front();  // only now: what push() counts includes the batch being written
    m_changed.notify_all();
  }
}

}  // namespace kasava::index
