// The writing end of an index run (internal to core/index): what one window stores, the
// transaction guard every write of a run goes through, and the single thread that commits the
// windows while the next ones are chunked.
#pragma once

#include <condition_variable>
#include <deque>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

#include "core/store/store.hpp"
#include "core/store/text_packs.hpp"
#include "core/store/vectors.hpp"
#include "core/types/chunk.hpp"

namespace kasava::index {

// What the writer stores for one window: one transaction.
struct Batch {
  std::vector<store::FileRecord> records;
  std::vector<std::vector<types::Chunk>> chunks;             // parallel to records
  std::vector<std::vector<store::QuantizedVector>> vectors;  // parallel to records
  std::vector<store::PackedTexts> texts;                     // parallel to records
  std::vector<store::FileRecord> stats;                      // touched files: new stat data only
};

// Rolls back on scope exit unless committed, so an exception never leaves a transaction open.
class Transaction {
public:
  explicit Transaction(store::Store& store) : m_store(store) { m_store.begin(); }
  ~Transaction() {
    if (!m_committed) {
      try {
        m_store.rollback();
      } catch (...) {  // already failing; the first error is the one to report
      }
    }
  }
  Transaction(const Transaction&) = delete;
  Transaction& operator=(const Transaction&) = delete;
  void commit() {
    m_store.commit();
    m_committed = true;
  }

private:
  store::Store& m_store;
  bool m_committed = false;
};

// The single thread that writes to the store: takes batches from a queue of two and commits
// each in its own transaction. The first failure stops it; finish() reports it. Two, not one:
// a commit that merges full-text segments (FTS5's crisis merge, every 16 windows of a first
// index) takes four times as long as the others, and with room for one the chunking threads
// waited for it (CPython's Lib: 0.37 s of a 5.4 s index; wall median 5.55 -> 5.37 s over 8
// alternating runs, peak memory unchanged).
class Writer {
public:
  explicit Writer(store::Store& store);
  ~Writer();  // on an error path: stop after what is queued, without throwing
  Writer(const Writer&) = delete;
  Writer& operator=(const Writer&) = delete;

  /// Queues a batch, waiting while the writer holds two. False when the writer has failed
  /// (finish() then rethrows why).
  bool push(Batch batch);

  /// Commits what is queued, stops the thread, and rethrows the writer's failure if any.
  void finish();

private:
  void loop();

  store::Store& m_store;
  std::mutex m_mutex;
  std::condition_variable m_changed;
  std::deque<Batch> m_queue;
  bool m_done = false;
  std::exception_ptr m_failure;
  std::thread m_thread;  // last: starts after the members it uses exist
};

}  // namespace kasava::index
