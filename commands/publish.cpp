// `kasava index --store`: the local index published to the shared store (see publish.hpp).
#include "commands/publish.hpp"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <deque>
#include <exception>
#include <filesystem>
#include <mutex>
#include <thread>
#include <utility>

#include "commands/interrupt.hpp"
#include "core/pgstore/store.hpp"
#include "core/util/strings.hpp"

namespace kasava::commands {

namespace {

// A batch of blobs sent in one transaction: large enough to amortise the round trips, small
// enough to keep a transaction's locks and memory modest, and a publish of a few thousand
// chunks in more than one batch (so that the senders share it). A batch holds its files'
// texts and its chunks' texts: at 8 MB of files, the batches of a Linux kernel publish
// held ~60 MB at once.
constexpr std::size_t k_batch_blobs = 400;
constexpr std::size_t k_batch_bytes = 2u << 20;
constexpr std::size_t k_batch_chunks = 1500;
// Connections sending batches at once, each its own transactions on its own blobs: the
// server parses and indexes the rows (tsvector, GIN, term statistics: most of a publish's
// cost) on as many backends, while this process reads the next batch from the index.
constexpr std::size_t k_senders = 2;
// Batches read ahead of the senders: reading one takes a fraction of sending it, so one
// keeps both senders busy (bench/store.py's publish was as fast as with two).
constexpr std::size_t k_queued_batches = 1;

// Batches handed from the thread that reads them to the threads that send them. The first
// failure (a sender's, or the reader's through fail()) stops everyone; rethrow() raises it.
class BatchQueue {
public:
  /// Waits for room; false when the publish failed meanwhile.
  bool push(std::vector<pgstore::BlobUpload> batch) {
    std::unique_lock lock(m_mutex);
    m_changed.wait(lock, [&] { return m_batches.size() < k_queued_batches || m_failure; });
    if (m_failure) return false;
    m_batches.push_back(std::move(batch));
    m_changed.notify_all();
    return true;
  }
  /// The next batch; empty when everything was sent or the publish failed.
  std::vector<pgstore::BlobUpload> pop() {
    std::unique_lock lock(m_mutex);
    m_changed.wait(lock, [&] { return !m_batches.empty() || m_closed || m_failure; });
    if (m_failure || m_batches.empty()) return {};
    auto batch = std::move(m_batches.front());
    m_batches.pop_front();
    m_changed.notify_all();
    return batch;
  }
  void close() {
    std::lock_guard lock(m_mutex);
    m_closed = true;
    m_changed.notify_all();
  }
  void fail(std::exception_ptr failure) {
    std::lock_guard lock(m_mutex);
    if (!m_failure) m_failure = std::move(failure);
    m_changed.notify_all();
  }
  void rethrow() {
    std::lock_guard lock(m_mutex);
    if (m_failure) std::rethrow_exception(m_failure);
  }

private:
  std::mutex m_mutex;
  std::condition_variable m_changed;
  std::deque<std::vector<pgstore::BlobUpload>> m_batches;
  bool m_closed = false;
  std::exception_ptr m_failure;
};

// The publish's progress line on a terminal: what it is doing, and while it sends, the blobs
// handed to the senders out of those to send, redrawn at most ten times a second.
class PublishProgress {
public:
  explicit PublishProgress(Output& output) : m_output(output) {}
  ~PublishProgress() { m_output.end_progress(); }
  PublishProgress(const PublishProgress&) = delete;
  PublishProgress& operator=(const PublishProgress&) = delete;

  void step(const std::string& what) { m_output.progress("publishing: " + what); }
  void start_sending(std::size_t blobs) {
    m_total = blobs;
    m_started = std::chrono::steady_clock::now();
  }
  void sent(std::size_t blobs, std::int64_t chunks) {
    const auto now = std::chrono::steady_clock::now();
    if (!m_output.shows_progress() || now - m_drawn < std::chrono::milliseconds(100)) return;
    m_drawn = now;
    const double elapsed = std::chrono::duration<double>(now - m_started).count();
    char line[160];
    if (elapsed > 0.5 && blobs > 0 && blobs < m_total) {
      const double rate = static_cast<double>(blobs) / elapsed;
      std::snprintf(line, sizeof line, "publishing: %zu/%zu blobs, %lld chunks, ETA %.0fs", blobs, m_total,
                    static_cast<long long>(chunks), static_cast<double>(m_total - blobs) / rate);
    } else {
      std::snprintf(line, sizeof line, "publishing: %zu/%zu blobs, %lld chunks", blobs, m_total,
                    static_cast<long long>(chunks));
    }
    m_output.progress(line);
  }

private:
  Output& m_output;
  std::size_t m_total = 0;
  std::chrono::steady_clock::time_point m_started;
  std::chrono::steady_clock::time_point m_drawn;
};

// Ctrl-C stops a publish between blobs and before its swap: the blobs already committed stay
// for the next run, which does not send them again.
void stop_if_interrupted() {
  if (interrupted()) {
    throw util::Failure("interrupted: the local index is complete, the store keeps the blobs sent "
                        "so far; run `kasava index --store` again to publish");
  }
}

} // namespace

std::string repository_name(const std::string& name, const std::string& root) {
  if (!name.empty()) return name;
  const repo::Identity identity = repo::identity_of(root);
  if (!identity.origin_url.empty()) {
    std::string from_origin = repo::owner_and_name(identity.origin_url);
    if (!from_origin.empty()) return from_origin;
  }
  return std::filesystem::path(root).filename().string();
}

std::string ref_name(const std::string& revision, const std::string& root) {
  if (!revision.empty()) return revision;
  const std::string branch = repo::identity_of(root).branch;
  return branch.empty() ? "HEAD" : branch;
}

PublishSummary publish(const PublishRequest& request, const store::Store& local, repo::Source& source,
                       Output& output) {
  const auto started = std::chrono::steady_clock::now();
  PublishProgress progress(output);
  progress.step("connecting to the store");
  auto opened = pgstore::Store::open(request.conninfo);
  if (!opened) throw util::Failure(opened.error());
  pgstore::Store& shared = **opened;
  PublishSummary summary;
  summary.where = shared.where();
  summary.repository = request.repository;
  summary.ref = request.ref;

  // The snapshot's files are the list the blobs are read by: on the Linux kernel (78,529
  // files) every list of them kept twice cost ~15 MB.
  pgstore::Snapshot snapshot{request.repository, request.ref, local.meta("commit").value_or(""),
                             request.model, {}, {}};
  for (store::IndexedFile& file : local.indexed_files()) {
    snapshot.files.push_back(
        pgstore::SnapshotFile{std::move(file.path), std::move(file.blob_id), std::move(file.language)});
  }
  const std::vector<pgstore::SnapshotFile>& files = snapshot.files;
  // The distinct blob ids (the files' own strings), sorted; whether each is to be sent, by
  // position.
  std::vector<const std::string*> ids;
  ids.reserve(files.size());
  for (const pgstore::SnapshotFile& file : files) ids.push_back(&file.blob_id);
  const auto less = [](const std::string* a, const std::string* b) { return *a < *b; };
  std::sort(ids.begin(), ids.end(), less);
  ids.erase(std::unique(ids.begin(), ids.end(), [](const std::string* a, const std::string* b) { return *a == *b; }),
            ids.end());
  const auto position_of = [&](const std::string& id) {
    return static_cast<std::size_t>(std::lower_bound(ids.begin(), ids.end(), &id, less) - ids.begin());
  };
  snapshot.history = local.history_texts();
  summary.files = static_cast<std::int64_t>(files.size());
  summary.blobs = static_cast<std::int64_t>(ids.size());

  progress.step("asking the store which of " + std::to_string(ids.size()) + " blobs it has");
  shared.hold_publish_lock();  // until the swap: no collection between check and swap
  stop_if_interrupted();
  std::vector<bool> to_send(ids.size(), true);
  {
    std::vector<std::string> asked;
    asked.reserve(ids.size());
    for (const std::string* id : ids) asked.push_back(*id);
    for (const std::string& id : shared.present_blobs(asked, request.model)) {
      const std::size_t at = position_of(id);
      if (at < ids.size() && *ids[at] == id) to_send[at] = false;
    }
  }
  progress.start_sending(static_cast<std::size_t>(std::count(to_send.begin(), to_send.end(), true)));
  BatchQueue queue;
  // The senders: this connection, and another one from the second batch on (a publish of a
  // few changed files needs no more).
  std::vector<std::unique_ptr<pgstore::Store>> more;
  std::vector<std::thread> senders;
  const auto sender = [&](pgstore::Store& store) {
    try {
      for (auto batch = queue.pop(); !batch.empty(); batch = queue.pop()) {
        store.put_blobs(std::move(batch), request.model);
      }
    } catch (...) {
      queue.fail(std::current_exception());
    }
  };
  std::vector<pgstore::BlobUpload> batch;
  std::size_t batch_bytes = 0;
  std::size_t batch_chunks = 0;
  std::size_t batches = 0;
  const auto send = [&] {
    if (batch.empty()) return true;
    if (batches++ > 0 && senders.size() < k_senders) {
      auto another = pgstore::Store::open(request.conninfo);
      if (!another) throw util::Failure(another.error());
      more.push_back(std::move(another).value());
      senders.emplace_back(sender, std::ref(*more.back()));
    }
    for (const auto& blob : batch) summary.chunks_sent += static_cast<std::int64_t>(blob.chunks.size());
    summary.blobs_sent += static_cast<std::int64_t>(batch.size());
    batch_bytes = 0;
    batch_chunks = 0;
    return queue.push(std::exchange(batch, {}));
  };
  senders.emplace_back(sender, std::ref(shared));
  try {
    for (const pgstore::SnapshotFile& file : files) {
      const std::size_t at = position_of(file.blob_id);
      if (!to_send[at]) continue;
      stop_if_interrupted();
      progress.sent(static_cast<std::size_t>(summary.blobs_sent), summary.chunks_sent);
      to_send[at] = false;  // one upload per blob, whatever paths share it
      repo::SourceEntry entry;
      entry.path = file.path;
      entry.blob_id = file.blob_id;
      auto text = source.read(entry);
      if (!text) {
        throw util::Failure("publishing " + util::quoted(file.path) + ": " + text.error().message);
      }
      // The store keys everything by this id, shared by every repository: it must be the hash
      // of the text sent, or one publisher could change what others find.
      if (repo::blob_id_of(*text) != file.blob_id) {
        throw util::Failure("publishing " + util::quoted(file.path) +
                            ": the file changed since it was indexed; run `kasava index --store` again");
      }
      auto content = local.file_export(file.path);
      if (!content) continue;
      pgstore::BlobUpload upload;
      upload.blob_id = file.blob_id;
      upload.language = file.language;
      upload.text = std::move(*text);
      for (std::size_t i = 0; i < content->chunks.size(); ++i) {
        pgstore::ChunkUpload chunk;
        chunk.chunk = std::move(content->chunks[i]);
        chunk.code.assign(content->codes[i].begin(), content->codes[i].end());
        chunk.values.assign(content->values[i].begin(), content->values[i].end());
        upload.chunks.push_back(std::move(chunk));
      }
      batch_bytes += upload.text.size();
      batch_chunks += upload.chunks.size();
      batch.push_back(std::move(upload));
      const bool full = batch.size() >= k_batch_blobs || batch_bytes >= k_batch_bytes || batch_chunks >= k_batch_chunks;
      if (full && !send()) break;
    }
    send();
  } catch (...) {
    queue.fail(std::current_exception());
  }
  queue.close();
  progress.step(std::to_string(summary.blobs_sent) + " blobs, " + std::to_string(summary.chunks_sent) +
                " chunks read; writing the last of them");
  for (std::thread& thread : senders) thread.join();
  queue.rethrow();
  stop_if_interrupted();
  progress.step("swapping the snapshot of " + request.repository + " " + request.ref);
  const pgstore::SwapResult swapped = shared.swap_snapshot(snapshot);
  summary.changed = swapped.changed;
  summary.chunks = swapped.chunks;
  // Published: once interrupted, the partitions are left to a later publish (a training of
  // half a million codes takes ~14 s).
  if (!interrupted()) {
    progress.step("updating the store's partitions of codes");
    summary.codes_partitioned = shared.update_partitions(request.model);
  }
  summary.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  return summary;
}

} // namespace kasava::commands
