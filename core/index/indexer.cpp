// The indexing pipeline. Three stages overlap, so that on two cores neither parsing nor
// SQLite waits for the other:
//
//   decide (calling thread)   per file, in listing order: blob id already indexed → nothing to
//                             do; too large → skipped without reading; otherwise a work item.
//                             Items are grouped in windows bounded by count and bytes.
//   read + chunk (all cores)  worker threads read each item (which hashes changed files),
//                             apply the skip rules and chunk it, one Chunker per thread,
//                             reused for the whole run; then embed its chunks (when the
//                             run has a local embedder) and quantize the vectors for the store,
//                             and compress the chunks' text for it (store::pack_texts: the
//                             writer thread is the busiest one, so it only stores).
//   embed (calling thread)    with a remote embedder, the whole window's chunks at once:
//                             vector cache first, the rest sent in full batches (the
//                             embedder sends them in parallel); chunks that fail are stored
//                             without a vector, as pending, and embedded again by a pass at
//                             the end of the next run.
//   write (one thread)        a single writer commits each finished window in one transaction
//                             with the store's cached prepared statements.
//
// The calling thread hands a finished window to the writer, which holds at most two (one
// being written, one waiting), so at most four windows exist at once (being chunked, one
// ready to hand over, waiting, being written): memory is bounded by the window size, not by
// the repository. The calling thread keeps every callback
// (progress, warnings, cancellation) so callers see them on their own thread.
//
// Crash safety: a window is one transaction, so a killed run leaves each file in its old or
// new version, with the vectors of that version. The model stamp (meta embedding_model,
// embedding_dims) is written before the first window, so no vector ever exists unstamped. Removals of files that are gone are committed last, after the writer has
// finished, so a rename never leaves a moment where neither name is indexed; the next run
// finishes the job. Cancellation is polled between windows: the windows already handed to
// the writer are committed, then the run returns "interrupted".
//
// A run that finds nothing to do writes nothing at all (not even a timestamp), so the
// refresh before every `ask` stays a read. It need not even read what the index holds: a
// complete run stores a digest of the listing it indexed (meta listing_digest: every path
// with its blob id, or its stat data when git did not give one, and the model, the size
// limit, the root and the commit). A listing with the same digest is the same files with the
// same content, so the run only reports. The digest is stored only when it can be trusted —
// no file that failed to read (those are tried again every run), no stat data young enough
// to hide a change (racy) — and every other write to the index clears it first
// (Store::put_file, remove_file, put_vectors).
//
// `--rev` skips unchanged subtrees: git trees are a Merkle tree, so a folder whose tree id is
// the one the index last saw holds exactly the files it held. A complete `--rev` run stores
// the tree id of every folder of its commit (Store::tree_ids; meta rev_submodules keeps the
// commit's submodules, which have no file row), and the next one lists only the folders whose
// id changed (Source::list_changed). Files under an unchanged folder count as unchanged (they
// are neither compared nor removed as gone); files of the index under a walked folder are
// compared as usual, and gone when not listed. A row promises "the index holds exactly this
// tree's files under this folder", so every write to files empties the table (Store::put_file,
// remove_file: the first write of a working-tree run, of an interrupted or failed run) and
// only the last transaction of a complete `--rev` run writes it again: the walked folders' new
// ids plus the stored rows below each unchanged folder, which still hold. A run that writes no
// file leaves the index as it was, so its rows stay true (dry runs, unchanged working trees).
// Read failures do not clear them: a `--rev` file is remembered with its blob id, which a full
// listing would find unchanged too. When nothing changed the root's id matches and the run
// reads one tree and a few meta values. The listing digest needs every path, so it is computed
// only on full listings (the first `--rev` run, a changed size limit); a partial listing
// stores none.
//
// Working trees: meta untracked_cache keeps what the last listing learnt of the folders
// (Source::untracked_cache), so the next one reads only the folders that changed. It
// describes the work tree, not the index, so it is stored whenever it changed, even by a run
// that writes nothing else.
#include "core/index/indexer.hpp"

#include <algorithm>
#include <atomic>
#include <bit>
#include <charconv>
#include <chrono>
#include <condition_variable>
#include <ctime>
#include <deque>
#include <exception>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <unordered_set>
#include <utility>
#include <vector>

#include "core/embed/model.hpp"
#include "core/index/history.hpp"
#include "core/parse/chunker.hpp"
#include "core/util/hash.hpp"
#include "core/util/parallel.hpp"
#include "core/util/secrets.hpp"
#include "core/util/strings.hpp"

namespace kasava::index {
namespace {

// A window is one transaction. Large enough that commits and the per-window barrier of the
// parallel stage cost little; small enough that the windows in flight (see above) stay
// inside the memory budget: a window's chunks, vectors and strings
// take up to 7 times its bytes (files of many short functions: 29 MB for 4 MB of source).
// 2 MiB rather than 4 took peak memory on twelve 1 MB files from 148 to 125 MiB, with no
// change in speed on CPython's Lib (files of 16 KB on average: 128 per window, not 256).
constexpr std::size_t k_window_files = 256;
constexpr std::size_t k_window_bytes = 2 * 1024 * 1024;
// Files at least this large are processed by one thread only, the calling one. tree-sitter's
// syntax tree takes 45 to 70 bytes per byte of source (1 MB C and Python files: 44 and 69 MB),
// so two of the largest files (1 MiB, --max-file-size) parsed at once would take ~140 MB, and
// each thread's allocator arena keeps what it once held: large trees on two threads cost twice
// even when never at the same time.
constexpr std::uint64_t k_large_file_bytes = 256 * 1024;
// How old a file's modification must be for its stat data to be trusted next time (see
// racy_before in run_index): coarser than any file system's timestamp granularity.
constexpr std::chrono::seconds k_racy_margin{2};
// Bytes at the start of a file searched for a NUL byte, as git does to call a file binary.
constexpr std::size_t k_binary_probe_bytes = 8000;
// Lines longer than this mean minified or generated code, not something a person wrote.
constexpr std::size_t k_max_line_length = 5000;
constexpr std::size_t k_max_average_line_length = 300;
// Pending chunks of earlier runs embedded again per transaction at the end of a run.
constexpr int k_pending_batch = 512;

// Files produced by tools, whose content answers no question about the code.
bool is_generated_name(std::string_view path) {
  const auto slash = path.rfind('/');
  const std::string_view name = slash == std::string_view::npos ? path : path.substr(slash + 1);
  static constexpr std::string_view k_names[] = {
      "package-lock.json", "yarn.lock", "pnpm-lock.yaml", "Cargo.lock", "go.sum",
      "poetry.lock",       "Pipfile.lock", "composer.lock", "Gemfile.lock", "npm-shrinkwrap.json"};
  return std::find(std::begin(k_names), std::end(k_names), name) != std::end(k_names);
}

// True when the stat cache says the file is the one the index has (size, times and inode
// unchanged since its content was hashed), so it need not be read.
bool same_stat(const repo::SourceEntry& entry, const store::FileState& state) {
  return entry.kind == repo::EntryKind::regular && entry.stat.mtime_ns != 0 &&
         state.mtime_ns == entry.stat.mtime_ns && state.ctime_ns == entry.stat.ctime_ns &&
         state.inode == entry.stat.inode && state.size == entry.size;
}

// One file that needs reading, a skip decision or chunking.
struct Work {
  repo::SourceEntry* entry = nullptr;
  const store::FileState* known = nullptr;  // what the index has for this path, if anything
  bool size_decision_changed = false;
  bool read = false;           // content must be read (and, for changed files, hashed)
  std::string language;
  std::string skip_reason;
  std::string read_error;      // set when reading failed
  bool unchanged = false;      // read, but the content was already indexed (touched file)
  std::uint64_t content_size = 0;
  std::vector<types::Chunk> chunks;
  std::vector<store::QuantizedVector> vectors;  // one per chunk when the run embeds
  store::PackedTexts texts;                     // the chunks' strings compressed for the store
};

// Whether the run writes to the index: a dry run does not, so it compresses nothing.
enum class Writing { yes, dry_run };

// Embeds the chunks of one file (on a worker thread) into item.vectors.
void embed_chunks(Work& item, embed::Embedder& embedder) {
  if (item.chunks.empty()) return;
  std::vector<std::string> inputs;
  inputs.reserve(item.chunks.size());
  for (const auto& chunk : item.chunks) inputs.push_back(embed::embedding_input(item.entry->path, chunk));
  const std::vector<std::string_view> views(inputs.begin(), inputs.end());
  auto vectors = embedder.embed(views, embed::InputKind::document);
  if (!vectors) throw util::Failure("embedding '" + item.entry->path + "': " + vectors.error().message);
  if (vectors->size() != item.chunks.size()) {
    throw util::Failure("embedding '" + item.entry->path + "': the model returned " +
                        std::to_string(vectors->size()) + " vectors for " +
                        std::to_string(item.chunks.size()) + " chunks");
  }
  item.vectors.reserve(vectors->size());
  for (const auto& vector : *vectors) {
    if (static_cast<int>(vector.size()) != embedder.dimensions()) {
      throw util::Failure("embedding '" + item.entry->path + "': the model returned a vector of " +
                          std::to_string(vector.size()) + " dimensions, not " +
                          std::to_string(embedder.dimensions()));
    }
    item.vectors.push_back(store::quantize(vector));
  }
}

// Reads, checks, chunks, embeds and packs one item (on a worker thread).
void process(Work& item, repo::Source& source, parse::Chunker& chunker, embed::Embedder* embedder,
             Writing writing) {
  if (!item.read) return;
  auto content = source.read(*item.entry);
  if (!content) {
    // Remembered as skipped, so the next run (and every refresh before `ask`) does not warn
    // about the same file again; it is still read again in case it was fixed.
    item.skip_reason = item.entry->kind == repo::EntryKind::symlink ? "symlink" : "unreadable";
    item.read_error = content.error().message;
    return;
  }
  if (item.known && !item.size_decision_changed && item.known->blob_id == item.entry->blob_id &&
      item.known->skip_reason.empty()) {
    item.unchanged = true;  // touched but not changed
    return;
  }
  item.content_size = content->size();
  item.skip_reason = skip_reason_for_content(item.entry->path, *content);
  if (item.skip_reason.empty()) item.chunks = chunker.chunk(item.entry->path, item.language, *content);
  if (embedder != nullptr && embedder->locality() == embed::Locality::local) {
    embed_chunks(item, *embedder);
  }
  if (writing == Writing::yes && !item.chunks.empty()) item.texts = store::pack_texts(item.chunks);
}

// Texts to embed with a remote embedder, and where each vector goes.
struct RemoteInputs {
  std::vector<std::string> texts;
  std::vector<store::QuantizedVector*> targets;
  std::vector<std::string> places;  // "path:start-end" of each chunk, for messages

  void add(std::string_view path, const types::Chunk& chunk, store::QuantizedVector* target) {
    texts.push_back(embed::embedding_input(path, chunk));
    targets.push_back(target);
    places.push_back(std::string(path) + ":" + std::to_string(chunk.start_line) + "-" +
                     std::to_string(chunk.end_line));
  }
};

// Embeds `inputs` with a remote embedder: vector cache first, then the service for the rest
// (all at once: the embedder batches and parallelises). Chunks that fail keep an empty
// vector (stored as pending). A dry run only counts what it would send.
void embed_remote(RemoteInputs& inputs, const IndexOptions& options,
                  IndexSummary::Embedding& tally, std::size_t& embedded) {
  if (inputs.texts.empty()) return;
  embed::Embedder& embedder = *options.embedder;
  const std::string model = embedder.model_id();
  const std::vector<std::string_view> views(inputs.texts.begin(), inputs.texts.end());
  std::vector<std::size_t> misses;
  if (options.vector_cache != nullptr) {
    auto cached = options.vector_cache->get(model, views, embedder.dimensions());
    for (std::size_t i = 0; i < views.size(); ++i) {
      // A dry run may not know the model's vector length yet (it learns it from a request).
      if (i < cached.size() && cached[i] &&
          (embedder.dimensions() == 0 ||
           static_cast<int>(cached[i]->values.size()) == embedder.dimensions())) {
        *inputs.targets[i] = std::move(*cached[i]);
        ++tally.cached;
      } else {
        misses.push_back(i);
      }
    }
  } else {
    for (std::size_t i = 0; i < views.size(); ++i) misses.push_back(i);
  }
  if (misses.empty()) return;
  std::vector<std::string_view> to_send;
  to_send.reserve(misses.size());
  for (const std::size_t i : misses) to_send.push_back(views[i]);
  if (options.dry_run) {
    tally.would_send += to_send.size();
    for (const auto text : to_send) tally.estimated_tokens += (text.size() + 3) / 4;
    return;
  }
  embed::EmbedReport report = embedder.embed_partial(to_send, embed::InputKind::document);
  std::vector<std::string_view> fresh_inputs;
  std::vector<store::QuantizedVector> fresh;
  for (std::size_t k = 0; k < misses.size(); ++k) {
    if (k >= report.vectors.size()) break;
    const auto& vector = report.vectors[k];
    if (vector.empty()) continue;
    if (static_cast<int>(vector.size()) != embedder.dimensions()) {
      if (tally.first_error.empty()) {
        tally.first_error = "the model returned a vector of " + std::to_string(vector.size()) +
                            " dimensions, not " + std::to_string(embedder.dimensions());
      }
      continue;
    }
    *inputs.targets[misses[k]] = store::quantize(vector);
    ++embedded;
    fresh_inputs.push_back(to_send[k]);
    fresh.push_back(*inputs.targets[misses[k]]);
  }
  for (const embed::EmbedFailure& failure : report.failures) {
    // A bad key or model fails every chunk the same way: stop, say why (what was committed
    // stays), rather than store a whole index of pending chunks.
    if (failure.permanent) throw util::Failure("embedding with model '" + model + "': " + failure.message);
  }
  if (!report.failures.empty() && tally.first_error.empty()) {
    // A service that rejects one input (too long for it, say) names an index within the
    // request: say which chunk that is.
    const embed::EmbedFailure& first = report.failures.front();
    tally.first_error = first.end - first.begin == 1 && first.begin < misses.size()
                            ? inputs.places[misses[first.begin]] + ": " + first.message
                            : first.message;
  }
  if (options.vector_cache != nullptr && !fresh.empty()) {
    // A cache that cannot be written costs a second payment later, not this run.
    auto cached = options.vector_cache->put(model, fresh_inputs, fresh);
    if (!cached && tally.cache_error.empty()) tally.cache_error = cached.error().message;
  }
}

// The remote half of a window: every chunk of the window's parsed files in one call.
void embed_window_remotely(std::vector<Work>& work, const IndexOptions& options,
                           IndexSummary::Embedding& tally) {
  RemoteInputs inputs;
  for (Work& item : work) {
    if (!item.read || !item.read_error.empty() || item.unchanged || !item.skip_reason.empty() ||
        item.chunks.empty()) {
      continue;
    }
    item.vectors.assign(item.chunks.size(), store::QuantizedVector{});
    for (std::size_t i = 0; i < item.chunks.size(); ++i) {
      inputs.add(item.entry->path, item.chunks[i], &item.vectors[i]);
    }
  }
  std::size_t embedded = 0;
  embed_remote(inputs, options, tally, embedded);
  tally.sent += embedded;
}

// Processes every item of a window on all chunkers' threads (the caller's included), largest
// files first, so that the window does not end waiting on one large file while the other
// threads have nothing left to do. Files of k_large_file_bytes and more, at the front then, go
// to the calling thread only, while the helpers start on the rest. The first exception of any
// thread is rethrown here, after all threads have stopped. False when `cancelled` said stop
// midway: some files were not processed, so the window must not be stored.
bool process_in_parallel(std::vector<Work>& work, repo::Source& source,
                         std::vector<std::unique_ptr<parse::Chunker>>& chunkers,
                         embed::Embedder* embedder, Writing writing,
                         const std::function<bool()>& cancelled) {
  std::vector<std::size_t> order(work.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  const auto bytes = [&](std::size_t i) { return work[i].read ? work[i].entry->size : 0; };
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return bytes(a) > bytes(b); });
  std::size_t large = 0;
  while (large < order.size() && bytes(order[large]) >= k_large_file_bytes) ++large;
  std::atomic<std::size_t> next{large};
  std::atomic<bool> stopped{false};
  const auto run = [&](unsigned thread) {
    const bool caller = thread == 0;
    parse::Chunker& chunker = *chunkers[thread];
    std::size_t own = 0;  // the calling thread's large files, before the shared ones
    for (;;) {
      const std::size_t n = caller && own < large ? own++ : next++;
      // `stopped` is also set by util::run_threads when a thread throws: the failure is
      // rethrown, not `stopped` returned.
      if (n >= order.size() || stopped) break;
      // Polled per file, so that a stop request is obeyed within a file, not a window of
      // them (a window of 256 files took over a second under sanitizers).
      if (cancelled && cancelled()) {
        stopped = true;
        break;
      }
      process(work[order[n]], source, chunker, embedder, writing);
    }
  };
  const std::size_t threads = std::min(chunkers.size(), std::max<std::size_t>(work.size(), 1));
  util::run_threads(static_cast<unsigned>(threads), run, &stopped);
  return !stopped;
}

// What the writer stores for one window: one transaction.
struct Batch {
  std::vector<store::FileRecord> records;
  std::vector<std::vector<types::Chunk>> chunks;  // parallel to records
  std::vector<std::vector<store::QuantizedVector>> vectors;  // parallel to records
  std::vector<store::PackedTexts> texts;                     // parallel to records
  std::vector<store::FileRecord> stats;           // touched files: new stat data only
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
  explicit Writer(store::Store& store) : m_store(store), m_thread([this] { loop(); }) {}
  ~Writer() {  // on an error path: stop after what is queued, without throwing
    if (!m_thread.joinable()) return;
    {
      std::lock_guard lock(m_mutex);
      m_done = true;
      m_changed.notify_all();
    }
    m_thread.join();
  }
  Writer(const Writer&) = delete;
  Writer& operator=(const Writer&) = delete;

  /// Queues a batch, waiting while the writer holds two. False when the writer has failed
  /// (finish() then rethrows why).
  bool push(Batch batch) {
    std::unique_lock lock(m_mutex);
    m_changed.wait(lock, [&] { return m_queue.size() < 2 || m_failure; });
    if (m_failure) return false;
    m_queue.push_back(std::move(batch));
    m_changed.notify_all();
    return true;
  }

  /// Commits what is queued, stops the thread, and rethrows the writer's failure if any.
  void finish() {
    {
      std::lock_guard lock(m_mutex);
      m_done = true;
      m_changed.notify_all();
    }
    m_thread.join();
    if (m_failure) std::rethrow_exception(m_failure);
  }

private:
  void loop() {
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

  store::Store& m_store;
  std::mutex m_mutex;
  std::condition_variable m_changed;
  std::deque<Batch> m_queue;
  bool m_done = false;
  std::exception_ptr m_failure;
  std::thread m_thread;  // last: starts after the members it uses exist
};

std::string now_iso8601() {
  const std::time_t now = std::time(nullptr);
  char buffer[32];
  std::strftime(buffer, sizeof buffer, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
  return buffer;
}

// Embeds the chunks left pending by earlier runs (ids up to `last_id`), a transaction per
// batch. False when cancelled (what was committed stays).
bool embed_pending(store::Store& store, const IndexOptions& options, std::int64_t last_id,
                   IndexSummary::Embedding& tally, const IndexCallbacks& callbacks,
                   std::size_t& stored) {
  std::int64_t after = 0;
  for (;;) {
    if (callbacks.cancelled && callbacks.cancelled()) return false;
    std::vector<store::ChunkRecord> chunks = store.pending_chunks(after, k_pending_batch);
    while (!chunks.empty() && chunks.back().id > last_id) chunks.pop_back();
    if (chunks.empty()) return true;
    after = chunks.back().id;
    std::vector<store::QuantizedVector> vectors(chunks.size());
    RemoteInputs inputs;
    std::vector<std::int64_t> ids;
    for (std::size_t i = 0; i < chunks.size(); ++i) {
      inputs.add(chunks[i].path, chunks[i].chunk, &vectors[i]);
      ids.push_back(chunks[i].id);
    }
    std::size_t embedded = 0;
    embed_remote(inputs, options, tally, embedded);
    tally.retried += embedded;
    if (options.dry_run) continue;
    stored += static_cast<std::size_t>(std::count_if(
        vectors.begin(), vectors.end(), [](const auto& v) { return !v.values.empty(); }));
    Transaction transaction(store);
    store.put_vectors(ids, vectors);
    transaction.commit();
  }
}

// A 128-bit digest of the listing and the settings that decide what is indexed, each field
// length-prefixed, mixed 8 bytes at a time (a byte at a time took ~2.4 ms for 10,000 files,
// on the latency of every refresh). Two lanes with different odd multipliers, each folding
// its high bits back down. Not cryptographic: it tells a changed listing from the last one.
// Returned as hex; "" when the listing cannot be trusted to stand for its content (stat data
// too recent: see racy_before in run_index).
class ListingDigest {
public:
  void add(std::string_view text) {
    add_number(text.size());
    util::for_each_word(text, [this](std::uint64_t word) { mix(word); });
  }
  void add_number(std::uint64_t value) { mix(value); }
  std::string hex() const {
    char text[40];
    std::snprintf(text, sizeof text, "%016llx%016llx", static_cast<unsigned long long>(m_a),
                  static_cast<unsigned long long>(m_b));
    return text;
  }

private:
  void mix(std::uint64_t word) {
    m_a = util::mix_word(m_a, word);
    m_b = (m_b ^ std::rotl(word, 32)) * 0xC2B2AE3D27D4EB4FULL;
    m_b ^= m_b >> 31;
  }
  std::uint64_t m_a = util::k_fnv1a64_basis;
  std::uint64_t m_b = 0x84222325cbf29ce4ULL;
};

std::string listing_digest(const std::vector<repo::SourceEntry>& entries, const std::string& model,
                           const std::string& limit, const std::string& root,
                           const std::string& commit, std::int64_t racy_before) {
  ListingDigest digest;
  digest.add(model);
  digest.add(limit);
  digest.add(root);
  digest.add(commit);
  digest.add_number(entries.size());
  for (const repo::SourceEntry& entry : entries) {
    digest.add(entry.path);
    digest.add_number(static_cast<std::uint64_t>(entry.kind));
    digest.add_number(entry.size);
    if (!entry.blob_id.empty()) {
      digest.add(entry.blob_id);
    } else if (entry.kind == repo::EntryKind::regular) {
      if (entry.stat.mtime_ns == 0 || entry.stat.mtime_ns >= racy_before) return "";
      digest.add_number(static_cast<std::uint64_t>(entry.stat.mtime_ns));
      digest.add_number(static_cast<std::uint64_t>(entry.stat.ctime_ns));
      digest.add_number(entry.stat.inode);
    }
  }
  return digest.hex();
}

// What a run reports about the whole index: files indexed, chunks, files skipped by reason.
struct IndexCounts {
  store::Store::Counts counts;
  std::map<std::string, std::size_t> skipped;
};

IndexCounts count_index(const store::Store& store) {
  return IndexCounts{store.counts(), store.skipped_files()};
}

// The counts of a complete run are stored with the listing digest they belong to (meta
// listing_counts: the digest, files, chunks and reason=count fields, tab-separated), so a
// no-change run reports them without counting every row (110,000 chunks: ~13M instructions
// and a few hundred page reads). They are trusted only beside the same digest.
std::string encode_listing_counts(const std::string& digest, const IndexCounts& index) {
  std::string text = digest + '\t' + std::to_string(index.counts.files) + '\t' +
                     std::to_string(index.counts.chunks);
  for (const auto& [reason, count] : index.skipped) {
    text += '\t' + reason + '=' + std::to_string(count);
  }
  return text;
}

std::optional<IndexCounts> decode_listing_counts(std::string_view text, std::string_view digest) {
  const auto fields = util::split(text, '\t');
  if (digest.empty() || fields.size() < 3 || fields[0] != digest) return std::nullopt;
  const auto number = [](std::string_view field) -> std::optional<std::int64_t> {
    std::int64_t value = 0;
    const auto [end, error] = std::from_chars(field.data(), field.data() + field.size(), value);
    if (error != std::errc() || end != field.data() + field.size() || value < 0) return std::nullopt;
    return value;
  };
  IndexCounts index;
  const auto files = number(fields[1]);
  const auto chunks = number(fields[2]);
  if (!files || !chunks) return std::nullopt;
  index.counts = {*files, *chunks};
  for (std::size_t i = 3; i < fields.size(); ++i) {
    const auto equals = fields[i].rfind('=');
    if (equals == std::string_view::npos) return std::nullopt;
    const auto count = number(fields[i].substr(equals + 1));
    if (!count) return std::nullopt;
    index.skipped[std::string(fields[i].substr(0, equals))] = static_cast<std::size_t>(*count);
  }
  return index;
}

// Folders a partial `--rev` listing did not walk (TreeListing::unchanged): every file under
// one is as the index has it.
class UnchangedFolders {
public:
  explicit UnchangedFolders(const std::vector<std::string>& folders)
      : m_folders(folders.begin(), folders.end()),
        m_root(std::find(folders.begin(), folders.end(), "") != folders.end()) {}

  bool empty() const { return m_folders.empty(); }
  /// True when the root is unchanged: the listing is empty and every file is as it was.
  bool everything() const { return m_root; }
  /// True when `path` (a file or folder) lies strictly below one of the folders.
  bool contain(std::string_view path) const {
    if (m_root) return !path.empty();
    for (auto slash = path.find('/'); slash != std::string_view::npos;
         slash = path.find('/', slash + 1)) {
      if (m_folders.count(std::string(path.substr(0, slash))) != 0) return true;
    }
    return false;
  }

private:
  std::unordered_set<std::string> m_folders;
  bool m_root;
};

std::vector<std::string> split_lines(const std::string& text) {
  std::vector<std::string> lines;
  for (std::size_t start = 0; start < text.size();) {
    auto end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    if (end > start) lines.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return lines;
}

std::string join_lines(const std::vector<std::string>& lines) {
  std::string text;
  for (const std::string& line : lines) {
    if (!text.empty()) text += '\n';
    text += line;
  }
  return text;
}

} // namespace

std::string index_model(const store::Store& store) {
  return store.meta("embedding_model").value_or("");
}

std::size_t IndexSummary::skipped_total() const {
  std::size_t total = 0;
  for (const auto& [reason, count] : skipped) total += count;
  return total;
}

std::string skip_reason_for_content(std::string_view path, std::string_view content) {
  // Never stored (an index is often shared as a CI artifact), never sent to a remote model.
  if (util::looks_like_secret(path, content)) return "secret";
  if (content.substr(0, k_binary_probe_bytes).find('\0') != std::string_view::npos) return "binary";
  if (is_generated_name(path)) return "generated";
  if (path.ends_with(".min.js") || path.ends_with(".min.css")) return "minified";
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

namespace {

// The files of a run: everything run_index does but the history step.
util::Result<IndexSummary> index_files(repo::Source& source, store::Store& store,
                                       const IndexOptions& options, const IndexCallbacks& callbacks) {
  const auto started = std::chrono::steady_clock::now();
  const std::string limit_text = std::to_string(options.max_file_size);
  const std::string model = options.embedder ? options.embedder->model_id() : "";
  const auto stored_limit = store.meta("max_file_size");
  const bool limit_changed = stored_limit.value_or(limit_text) != limit_text;
  const std::string stamped = index_model(store);

  // The listing: with tree ids (`--rev`), only the folders that changed since the last
  // complete `--rev` run. A new size limit or model re-decides every file: list them all.
  std::vector<repo::SourceEntry> entries;
  std::vector<std::string> unchanged_folders;  // not empty: a partial listing
  std::vector<std::pair<std::string, std::string>> trees;
  std::vector<std::pair<std::string, std::string>> known_trees;
  if (!limit_changed && stamped == model) known_trees = store.tree_ids();
  // Work trees: the folders found unchanged since the last listing are not read again.
  const std::string known_untracked = store.meta("untracked_cache").value_or("");
  source.use_untracked_cache(known_untracked);
  auto tree_listing = source.list_changed(known_trees);
  const bool has_trees = tree_listing.has_value();
  if (has_trees) {
    if (!*tree_listing) return tree_listing->error();
    entries = std::move((*tree_listing)->entries);
    unchanged_folders = std::move((*tree_listing)->unchanged);
    trees = std::move((*tree_listing)->trees);
  } else {
    auto listed = source.list();
    if (!listed) return listed.error();
    entries = std::move(*listed);
  }
  const UnchangedFolders unchanged(unchanged_folders);
  // What the listing learnt of the folders, kept even when no file changed (it describes the
  // work tree, not the index), within the caller's transaction.
  const std::string learnt_untracked = source.untracked_cache();
  const bool untracked_cache_changed = learnt_untracked != known_untracked;
  auto store_untracked_cache = [&] { store.set_meta("untracked_cache", learnt_untracked); };
  // Submodules have no file row: the last `--rev` run remembers them for its summary.
  const std::vector<std::string> known_submodules =
      known_trees.empty() ? std::vector<std::string>{}
                          : split_lines(store.meta("rev_submodules").value_or(""));
  // What the tree rows and submodules of this commit are, once this run completes.
  std::vector<std::pair<std::string, std::string>> new_trees;
  std::vector<std::string> new_submodules;
  std::size_t kept_submodules = 0;
  if (has_trees) {
    new_trees = trees;
    for (const auto& row : known_trees) {
      if (unchanged.contain(row.first)) new_trees.push_back(row);
    }
    std::sort(new_trees.begin(), new_trees.end());
    for (const std::string& path : known_submodules) {
      if (unchanged.contain(path)) new_submodules.push_back(path);
    }
    kept_submodules = new_submodules.size();
    for (const repo::SourceEntry& entry : entries) {
      if (entry.kind == repo::EntryKind::submodule) new_submodules.push_back(entry.path);
    }
    std::sort(new_submodules.begin(), new_submodules.end());
  }
  const bool trees_changed =
      has_trees && (new_trees != known_trees || new_submodules != known_submodules);
  // Writes the tree rows of a complete `--rev` run, within the caller's transaction.
  auto store_trees = [&] {
    store.set_tree_ids(new_trees);
    store.set_meta("rev_submodules", join_lines(new_submodules));
  };

  // Stat data is remembered only for files last modified before this moment: a file written
  // again within the file system's timestamp granularity of our read could keep its stat
  // data with new content (git's "racy clean" problem), so recent files are read next time.
  const std::int64_t racy_before =
      std::chrono::duration_cast<std::chrono::nanoseconds>(
          (std::chrono::system_clock::now() - k_racy_margin).time_since_epoch())
          .count();

  IndexSummary summary;
  summary.files = entries.size();
  summary.commit = source.commit_id();
  const bool remote =
      options.embedder != nullptr && options.embedder->locality() == embed::Locality::remote;
  // Only a full listing has a digest (see the top of the file).
  const std::string digest =
      unchanged.empty()
          ? listing_digest(entries, model, limit_text, source.root(), summary.commit, racy_before)
          : std::string();
  // Nothing to read, parse or write: only report (and send pending chunks to a remote model).
  // `keep_digest` is the listing digest to store again if put_vectors forgets it.
  auto report_unchanged = [&](const std::string& keep_digest,
                              std::size_t submodules) -> util::Result<IndexSummary> {
    if (remote) {
      std::size_t stored = 0;
      if (!embed_pending(store, options, store.last_chunk_id(), summary.embedding, callbacks, stored)) {
        return util::Error{"interrupted"};
      }
      if (stored > 0 && !keep_digest.empty()) {  // put_vectors forgot the digest; it still stands
        Transaction transaction(store);
        store.set_meta("listing_digest", keep_digest);
        transaction.commit();
      }
      summary.embedding.pending = static_cast<std::size_t>(store.pending_count());
    }
    if (trees_changed || untracked_cache_changed) {
      // A full `--rev` listing whose rows were not stored yet, or new folder stamps.
      Transaction transaction(store);
      if (trees_changed) store_trees();
      if (untracked_cache_changed) store_untracked_cache();
      transaction.commit();
    }
    const auto stored = decode_listing_counts(store.meta("listing_counts").value_or(""), keep_digest);
    const IndexCounts index = stored ? *stored : count_index(store);
    summary.indexed = static_cast<std::size_t>(index.counts.files);
    summary.unchanged = summary.indexed;
    summary.chunks = static_cast<std::size_t>(index.counts.chunks);
    summary.skipped = index.skipped;
    if (submodules > 0) summary.skipped["submodule"] = submodules;
    summary.seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    return summary;
  };
  if (!digest.empty() && !options.dry_run && store.meta("listing_digest") == digest) {
    // The same listing as the last complete run.
    const auto submodules = std::count_if(entries.begin(), entries.end(), [](const auto& entry) {
      return entry.kind == repo::EntryKind::submodule;
    });
    return report_unchanged(digest, static_cast<std::size_t>(submodules));
  }
  if (unchanged.everything() && !options.dry_run && store.meta("commit") == summary.commit &&
      store.meta("root") == source.root() && stored_limit == limit_text) {
    // `--rev` of a commit whose root tree is the one indexed: the same files. (Another commit
    // of the same tree goes on below, to store its id.)
    auto result = report_unchanged(store.meta("listing_digest").value_or(""), kept_submodules);
    if (result) result->files = result->indexed + result->skipped_total();
    return result;
  }
  const auto states = store.file_states();

  // The model: an index holds the vectors of one model only.
  if (stamped != model) {
    if (!states.empty()) {
      return util::Error{"index '" + store.path() + "' was built " +
                         (stamped.empty() ? std::string("without a model")
                                          : "with model '" + stamped + "'") +
                         (model.empty() ? std::string(", not without one")
                                        : ", not with model '" + model + "'") +
                         ": rebuild it with `kasava index --rebuild`"};
    }
    if (!options.dry_run) {
      if (options.embedder != nullptr && options.embedder->dimensions() <= 0) {
        return util::Error{"model '" + model +
                           "' has not said how many dimensions its vectors have"};
      }
      Transaction transaction(store);
      store.set_meta("embedding_model", model);
      store.set_meta("embedding_dims",
                     options.embedder ? std::to_string(options.embedder->dimensions()) : "");
      transaction.commit();
    }
  }
  // Chunks pending from earlier runs are the ones up to here; this run's failures wait for
  // the next run (the embedder has just retried them).
  const std::int64_t last_earlier_chunk = remote ? store.last_chunk_id() : 0;

  unsigned threads = options.threads ? options.threads : std::thread::hardware_concurrency();
  threads = std::max(1u, threads);
  std::vector<std::unique_ptr<parse::Chunker>> chunkers;  // made on first need: a refresh
                                                         // that parses nothing builds none
  auto warn = [&](const std::string& message) {
    if (callbacks.warning) callbacks.warning(message);
  };
  IndexProgress progress;
  progress.files_total = entries.size();
  bool wrote = false;
  bool interrupted = false;
  bool read_failed = false;  // a file to try again next run: the digest cannot be trusted
  // A first index (or a rebuild) ends with optimize() in `kasava index`: merge once, there.
  if (states.empty() && !entries.empty() && !options.dry_run) {
    store.set_merging(store::Store::Merging::deferred);
  }
  std::unique_ptr<Writer> writer;

  std::size_t position = 0;
  while (position < entries.size()) {
    if (callbacks.cancelled && callbacks.cancelled()) {
      interrupted = true;
      break;
    }
    std::vector<Work> work;
    std::size_t window_bytes = 0;
    for (; position < entries.size() && work.size() < k_window_files &&
           window_bytes < k_window_bytes;
         ++position) {
      repo::SourceEntry& entry = entries[position];
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
      if (known && entry.blob_id.empty() && same_stat(entry, state->second)) {
        entry.blob_id = state->second.blob_id;  // the stat cache: same file, not read again
      }
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
      item.known = known ? &state->second : nullptr;
      item.size_decision_changed = size_decision_changed;
      item.language = parse::detect_language(entry.path);
      if (entry.size > options.max_file_size) {
        if (known && !size_decision_changed && state->second.skip_reason == "too large" &&
            entry.blob_id.empty()) {
          ++summary.skipped["too large"];
          continue;
        }
        item.skip_reason = "too large";
      } else {
        item.read = true;
        window_bytes += entry.size;
      }
      work.push_back(std::move(item));
    }
    if (work.empty()) {
      if (callbacks.progress) callbacks.progress(progress);
      continue;
    }

    if (chunkers.empty()) {
      for (unsigned t = 0; t < threads; ++t) chunkers.push_back(std::make_unique<parse::Chunker>());
    }
    if (!process_in_parallel(work, source, chunkers, options.dry_run ? nullptr : options.embedder,
                             options.dry_run ? Writing::dry_run : Writing::yes,
                             callbacks.cancelled)) {
      interrupted = true;  // this window is left for the next run, as those after it
      break;
    }
    if (remote) embed_window_remotely(work, options, summary.embedding);

    // Tally in listing order (warnings too), and hand what must be stored to the writer.
    Batch batch;
    for (Work& item : work) {
      const repo::SourceEntry& entry = *item.entry;
      store::FileRecord record{entry.path, entry.blob_id, item.language, entry.size,
                               item.skip_reason};
      if (item.read && item.read_error.empty() && entry.stat.mtime_ns != 0 &&
          entry.stat.mtime_ns < racy_before) {
        record.mtime_ns = entry.stat.mtime_ns;
        record.ctime_ns = entry.stat.ctime_ns;
        record.inode = entry.stat.inode;
      }
      if (item.unchanged) {
        ++summary.unchanged;
        if (record.mtime_ns != 0) batch.stats.push_back(std::move(record));
        continue;
      }
      if (!item.read_error.empty()) {
        read_failed = true;
        ++summary.skipped[item.skip_reason];
        if (item.known && item.known->skip_reason == item.skip_reason) continue;
        warn(entry.path + ": " + item.read_error);
      } else if (item.skip_reason.empty()) {
        record.size = item.content_size;
        ++summary.parsed;
        summary.chunks_written += item.chunks.size();
        progress.chunks += item.chunks.size();
      } else {
        if (item.read) record.size = item.content_size;
        ++summary.skipped[item.skip_reason];
      }
      batch.records.push_back(std::move(record));
      batch.chunks.push_back(std::move(item.chunks));
      batch.vectors.push_back(std::move(item.vectors));
      batch.texts.push_back(std::move(item.texts));
    }
    progress.files_parsed = summary.parsed;
    if (!options.dry_run && (!batch.records.empty() || !batch.stats.empty())) {
      if (!writer) writer = std::make_unique<Writer>(store);
      wrote = true;
      if (!writer->push(std::move(batch))) break;  // finish() below reports why
    }
    if (callbacks.progress) callbacks.progress(progress);
  }
  if (writer) writer->finish();  // commits what is queued; rethrows a write failure
  if (interrupted) {
    if (states.empty() && !entries.empty() && !options.dry_run) {
      store.set_merging(store::Store::Merging::automatic);
    }
    return util::Error{"interrupted"};
  }
  if (remote) {
    std::size_t stored = 0;
    if (!embed_pending(store, options, last_earlier_chunk, summary.embedding, callbacks, stored)) {
      return util::Error{"interrupted"};
    }
    wrote = wrote || stored > 0;
  }

  // Files gone from the source: both lists are sorted by path (Source::list promises it; a
  // copy is sorted if not), so one merge pass finds them.
  std::vector<std::string> gone;
  {
    auto by_path = [](const repo::SourceEntry& a, const repo::SourceEntry& b) {
      return a.path < b.path;
    };
    std::vector<repo::SourceEntry> sorted_copy;
    const std::vector<repo::SourceEntry>* sorted = &entries;
    if (!std::is_sorted(entries.begin(), entries.end(), by_path)) {
      sorted_copy = entries;
      std::sort(sorted_copy.begin(), sorted_copy.end(), by_path);
      sorted = &sorted_copy;
    }
    auto listed_entry = sorted->begin();
    for (const auto& [path, state] : states) {
      if (unchanged.contain(path)) {  // in a folder not walked: as it was
        ++summary.files;
        if (state.skip_reason.empty()) {
          ++summary.unchanged;
        } else {
          ++summary.skipped[state.skip_reason];
        }
        continue;
      }
      while (listed_entry != sorted->end() && listed_entry->path < path) ++listed_entry;
      if (listed_entry == sorted->end() || listed_entry->path != path) gone.push_back(path);
    }
  }
  summary.files += kept_submodules;
  if (kept_submodules > 0) summary.skipped["submodule"] += kept_submodules;
  const std::string trusted_digest = read_failed ? std::string() : digest;
  const bool meta_changed = store.meta("root") != source.root() ||
                            store.meta("commit") != summary.commit || stored_limit != limit_text ||
                            store.meta("listing_digest").value_or("") != trusted_digest;
  if (options.dry_run) {
    summary.removed = gone.size();
    summary.indexed = summary.parsed + summary.unchanged;
    summary.chunks = summary.chunks_written;
    summary.seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    return summary;
  }
  std::optional<IndexCounts> final_counts;  // counted in the last transaction, if the run writes
  if (wrote || !gone.empty() || meta_changed || trees_changed) {
    Transaction transaction(store);
    for (const std::string& path : gone) store.remove_file(path);
    // After the removals, which empty the table: the index is now this commit's tree.
    if (has_trees) store_trees();
    store.set_meta("root", source.root());
    store.set_meta("commit", summary.commit);
    store.set_meta("indexed_at", now_iso8601());
    store.set_meta("max_file_size", limit_text);
    // Last: the writes above cleared any older digest.
    store.set_meta("listing_digest", trusted_digest);
    final_counts = count_index(store);
    if (!trusted_digest.empty()) {
      store.set_meta("listing_counts", encode_listing_counts(trusted_digest, *final_counts));
    }
    if (untracked_cache_changed) store_untracked_cache();
    // Also after a first run that was killed midway and left merging deferred.
    store.set_merging(store::Store::Merging::automatic);
    transaction.commit();
  } else if (untracked_cache_changed) {
    Transaction transaction(store);
    store_untracked_cache();
    transaction.commit();
  }
  summary.removed = gone.size();

  if (final_counts) {  // the run wrote: the counts of its last transaction
    const auto& counts = final_counts->counts;
    summary.indexed = static_cast<std::size_t>(counts.files);
    summary.chunks = static_cast<std::size_t>(counts.chunks);
  } else {
    // Nothing was written: the index holds what it held when the run began.
    summary.indexed = static_cast<std::size_t>(
        std::count_if(states.begin(), states.end(),
                      [](const auto& state) { return state.second.skip_reason.empty(); }));
    summary.chunks = static_cast<std::size_t>(store.counts().chunks);
  }
  if (remote) summary.embedding.pending = static_cast<std::size_t>(store.pending_count());
  summary.seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  return summary;
}

} // namespace

util::Result<IndexSummary> run_index(repo::Source& source, store::Store& store,
                                     const IndexOptions& options, const IndexCallbacks& callbacks) {
  // The history is read while the files are indexed, and written after them: it drops the
  // rows of paths without a file.
  std::optional<HistoryStep> history;
  if (!options.dry_run) history.emplace(source, store);
  auto summary = index_files(source, store, options, callbacks);
  if (summary && history) {
    if (auto update = history->finish(store); !update && callbacks.warning) {
      callbacks.warning("history: " + update.error().message);
    }
  }
  return summary;
}

} // namespace kasava::index
