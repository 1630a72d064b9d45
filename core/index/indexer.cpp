// The indexing pipeline. Files are taken in windows (bounded by count and bytes, so memory
// does not grow with the repository): the calling thread decides per file whether anything
// must be done (blob id already indexed → nothing; too large → skip without reading) and
// reads what must be parsed, worker threads chunk the window's contents in parallel (one
// Chunker per thread, reused), then the calling thread writes the window to the store in one
// transaction. Removals of files that are gone are committed last, so a rename never leaves
// a moment where neither name is indexed; a killed run leaves each file in its old or new
// version, and the next run finishes the job.
#include "core/index/indexer.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <ctime>
#include <memory>
#include <set>
#include <thread>
#include <vector>

#include "core/parse/chunker.hpp"
#include "core/util/strings.hpp"

namespace kasava::index {
namespace {

constexpr std::size_t k_window_files = 256;
constexpr std::size_t k_window_bytes = 32 * 1024 * 1024;
// Bytes at the start of a file searched for a NUL byte, as git does to call a file binary.
constexpr std::size_t k_binary_probe_bytes = 8000;
// Lines longer than this mean minified or generated code, not something a person wrote.
constexpr std::size_t k_max_line_length = 5000;
constexpr std::size_t k_max_average_line_length = 300;

// Files produced by tools, whose content answers no question about the code.
bool is_generated_name(std::string_view path) {
  const auto slash = path.rfind('/');
  const std::string_view name = slash == std::string_view::npos ? path : path.substr(slash + 1);
  static constexpr std::string_view k_names[] = {
      "package-lock.json", "yarn.lock", "pnpm-lock.yaml", "Cargo.lock", "go.sum",
      "poetry.lock",       "Pipfile.lock", "composer.lock", "Gemfile.lock", "npm-shrinkwrap.json"};
  return std::find(std::begin(k_names), std::end(k_names), name) != std::end(k_names);
}

struct Work {
  repo::SourceEntry* entry = nullptr;
  std::string content;
  std::string language;
  std::string skip_reason;
  std::vector<types::Chunk> chunks;
};

// Chunks every work item that has content, on `threads` threads (the caller's included).
void chunk_in_parallel(std::vector<Work>& work,
                       std::vector<std::unique_ptr<parse::Chunker>>& chunkers) {
  std::atomic<std::size_t> next{0};
  auto run = [&](parse::Chunker& chunker) {
    for (std::size_t i = next++; i < work.size(); i = next++) {
      Work& item = work[i];
      if (!item.skip_reason.empty()) continue;
      item.skip_reason = skip_reason_for_content(item.entry->path, item.content);
      if (!item.skip_reason.empty()) continue;
      item.chunks = chunker.chunk(item.entry->path, item.language, item.content);
    }
  };
  std::vector<std::thread> threads;
  for (std::size_t t = 1; t < chunkers.size(); ++t) threads.emplace_back(run, std::ref(*chunkers[t]));
  run(*chunkers[0]);
  for (auto& thread : threads) thread.join();
}

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

std::string now_iso8601() {
  const std::time_t now = std::time(nullptr);
  char buffer[32];
  std::strftime(buffer, sizeof buffer, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
  return buffer;
}

} // namespace

std::size_t IndexSummary::skipped_total() const {
  std::size_t total = 0;
  for (const auto& [reason, count] : skipped) total += count;
  return total;
}

std::string skip_reason_for_content(std::string_view path, std::string_view content) {
  if (content.substr(0, k_binary_probe_bytes).find('\0') != std::string_view::npos) return "binary";
  if (is_generated_name(path)) return "generated";
  if (util::ends_with(path, ".min.js") || util::ends_with(path, ".min.css")) return "minified";
  std::size_t longest = 0;
  std::size_t lines = 0;
  for (std::size_t start = 0; start < content.size();) {
    auto end = content.find('\n', start);
    if (end == std::string_view::npos) end = content.size();
    longest = std::max(longest, end - start);
    ++lines;
    start = end + 1;
  }
  if (longest > k_max_line_length) return "minified";
  if (content.size() > 4096 && lines > 0 && content.size() / lines > k_max_average_line_length) {
    return "minified";
  }
  return "";
}

util::Result<IndexSummary> run_index(repo::Source& source, store::Store& store,
                                     const IndexOptions& options, const IndexCallbacks& callbacks) {
  const auto started = std::chrono::steady_clock::now();
  auto listed = source.list();
  if (!listed) return listed.error();
  std::vector<repo::SourceEntry>& entries = *listed;

  IndexSummary summary;
  summary.files = entries.size();
  summary.commit = source.commit_id();
  const auto states = store.file_states();
  const std::string limit_text = std::to_string(options.max_file_size);
  const bool limit_changed = store.meta("max_file_size").value_or(limit_text) != limit_text;

  unsigned threads = options.threads ? options.threads : std::thread::hardware_concurrency();
  threads = std::max(1u, threads);
  std::vector<std::unique_ptr<parse::Chunker>> chunkers;
  for (unsigned t = 0; t < threads; ++t) chunkers.push_back(std::make_unique<parse::Chunker>());

  auto warn = [&](const std::string& message) {
    if (callbacks.warning) callbacks.warning(message);
  };
  IndexProgress progress;
  progress.files_total = entries.size();
  std::set<std::string> listed_paths;

  std::size_t position = 0;
  while (position < entries.size()) {
    if (callbacks.cancelled && callbacks.cancelled()) return util::Error{"interrupted"};
    std::vector<Work> work;
    std::vector<Work> unreadable;  // read errors, recorded as skipped
    std::size_t window_bytes = 0;
    for (; position < entries.size() && work.size() < k_window_files &&
           window_bytes < k_window_bytes;
         ++position) {
      repo::SourceEntry& entry = entries[position];
      listed_paths.insert(entry.path);
      ++progress.files_done;
      if (entry.kind == repo::EntryKind::submodule) {
        ++summary.skipped["submodule"];
        continue;
      }
      const auto state = states.find(entry.path);
      const bool known = state != states.end();
      // A new size limit re-decides the files it may concern, even if their content is known.
      const bool size_decision_changed =
          limit_changed && (entry.size > options.max_file_size ||
                            (known && state->second.skip_reason == "too large"));
      if (known && !size_decision_changed && !entry.blob_id.empty() &&
          state->second.blob_id == entry.blob_id) {
        if (state->second.skip_reason.empty()) {
          ++summary.unchanged;
        } else {
          ++summary.skipped[state->second.skip_reason];
        }
        continue;
      }
      Work item;
      item.entry = &entry;
      item.language = parse::detect_language(entry.path);
      if (entry.size > options.max_file_size) {
        if (known && !size_decision_changed && state->second.skip_reason == "too large" &&
            entry.blob_id.empty()) {
          ++summary.skipped["too large"];
          continue;
        }
        item.skip_reason = "too large";
        work.push_back(std::move(item));
        continue;
      }
      auto content = source.read(entry);
      if (!content) {
        // Remembered as skipped, so the next run (and every refresh before `ask`) does not
        // warn about the same file again; it is still read again in case it was fixed.
        item.skip_reason = entry.kind == repo::EntryKind::symlink ? "symlink" : "unreadable";
        ++summary.skipped[item.skip_reason];
        if (!known || state->second.skip_reason != item.skip_reason) {
          warn(entry.path + ": " + content.error().message);
          unreadable.push_back(std::move(item));
        }
        continue;
      }
      if (known && !size_decision_changed && state->second.blob_id == entry.blob_id &&
          state->second.skip_reason.empty()) {
        ++summary.unchanged;  // touched but not changed
        continue;
      }
      item.content = std::move(*content);
      window_bytes += item.content.size();
      work.push_back(std::move(item));
    }

    chunk_in_parallel(work, chunkers);

    if (!work.empty() || !unreadable.empty()) {
      Transaction transaction(store);
      for (const Work& item : unreadable) {
        store.put_file({item.entry->path, item.entry->blob_id, item.language, item.entry->size,
                        item.skip_reason},
                       {});
      }
      for (Work& item : work) {
        store::FileRecord record{item.entry->path, item.entry->blob_id, item.language,
                                 item.entry->size, item.skip_reason};
        if (!item.content.empty()) record.size = item.content.size();
        if (item.skip_reason.empty()) {
          store.put_file(record, item.chunks);
          ++summary.parsed;
          summary.chunks_written += item.chunks.size();
          progress.chunks += item.chunks.size();
        } else {
          store.put_file(record, {});
          ++summary.skipped[item.skip_reason];
        }
      }
      transaction.commit();
      progress.files_parsed = summary.parsed;
    }
    if (callbacks.progress) callbacks.progress(progress);
  }

  Transaction transaction(store);
  for (const auto& [path, state] : states) {
    if (listed_paths.count(path) == 0) {
      store.remove_file(path);
      ++summary.removed;
    }
  }
  store.set_meta("root", source.root());
  store.set_meta("commit", summary.commit);
  store.set_meta("indexed_at", now_iso8601());
  store.set_meta("max_file_size", limit_text);
  transaction.commit();

  const auto stats = store.stats();
  summary.indexed = static_cast<std::size_t>(stats.files);
  summary.chunks = static_cast<std::size_t>(stats.chunks);
  summary.seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  return summary;
}

} // namespace kasava::index
