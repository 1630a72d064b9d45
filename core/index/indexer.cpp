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
// no file that failed to read (those are tried again every run; a symlink to a folder is not
// a failure, see repo::k_symlink_to_directory), no stat data young enough to hide a change
// (racy) — and every other write to the index clears it first (Store::put_file,
// remove_file, put_vectors).
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
//
// run_index below is the list of steps; each step that is a job of its own has its file:
// listing.* (the listing, its digest and stored counts), file_work.* (one file read, checked
// by the skip rules, chunked and embedded on a worker thread), remote_embedding.* (remote
// models and pending chunks), writer.* (the writer thread and the transaction guard).
#include "core/index/indexer.hpp"

#include <algorithm>
#include <chrono>
#include <ctime>
#include <map>
#include <memory>
#include <optional>
#include <thread>
#include <utility>
#include <vector>

#include "core/index/file_work.hpp"
#include "core/index/history.hpp"
#include "core/index/listing.hpp"
#include "core/index/remote_embedding.hpp"
#include "core/index/writer.hpp"
#include "core/parse/chunker.hpp"

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
// How old a file's modification must be for its stat data to be trusted next time (see
// racy_before in run_index): coarser than any file system's timestamp granularity.
constexpr std::chrono::seconds k_racy_margin{2};
using FileStates = std::map<std::string, store::FileState>;

// True when the stat cache says the file is the one the index has (size, times and inode
// unchanged since its content was hashed), so it need not be read.
bool same_stat(const repo::SourceEntry& entry, const store::FileState& state) {
  return entry.kind == repo::EntryKind::regular && entry.stat.mtime_ns != 0 &&
         state.mtime_ns == entry.stat.mtime_ns && state.ctime_ns == entry.stat.ctime_ns &&
         state.inode == entry.stat.inode && state.size == entry.size;
}

std::string now_iso8601() {
  const std::time_t now = std::time(nullptr);
  char buffer[32];
  std::strftime(buffer, sizeof buffer, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
  return buffer;
}

// One run: what it was given, and the settings it compares with those the index recorded.
struct Run {
  repo::Source& source;
  store::Store& store;
  const IndexOptions& options;
  const IndexCallbacks& callbacks;
  std::chrono::steady_clock::time_point started = std::chrono::steady_clock::now();
  std::string limit_text = std::to_string(options.max_file_size);
  std::string model = options.embedder ? options.embedder->model_id() : "";
  std::optional<std::string> stored_limit = store.meta("max_file_size");
  bool limit_changed = stored_limit.value_or(limit_text) != limit_text;
  std::string stamped = index_model(store);
  bool remote =
      options.embedder != nullptr && options.embedder->locality() == embed::Locality::remote;

  double seconds() const {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  }
};

// Nothing to read, parse or write: only report (and send pending chunks to a remote model).
// `keep_digest` is the listing digest to store again if put_vectors forgets it.
util::Result<IndexSummary> report_unchanged(const Run& run, const Listing& listing,
                                            IndexSummary summary, const std::string& keep_digest,
                                            std::size_t submodules) {
  store::Store& store = run.store;
  if (run.remote) {
    std::size_t stored = 0;
    if (!embed_pending(store, run.options, store.last_chunk_id(), summary.embedding, run.callbacks,
                       stored)) {
      return util::Error{"interrupted"};
    }
    if (stored > 0 && !keep_digest.empty()) {  // put_vectors forgot the digest; it still stands
      Transaction transaction(store);
      store.set_meta("listing_digest", keep_digest);
      transaction.commit();
    }
    summary.embedding.pending = static_cast<std::size_t>(store.pending_count());
  }
  if (listing.trees_changed || listing.untracked_cache_changed) {
    // A full `--rev` listing whose rows were not stored yet, or new folder stamps.
    Transaction transaction(store);
    if (listing.trees_changed) listing.store_trees(store);
    if (listing.untracked_cache_changed) listing.store_untracked_cache(store);
    transaction.commit();
  }
  const auto stored = decode_listing_counts(store.meta("listing_counts").value_or(""), keep_digest);
  const IndexCounts index = stored ? *stored : count_index(store);
  summary.indexed = static_cast<std::size_t>(index.counts.files);
  summary.unchanged = summary.indexed;
  summary.chunks = static_cast<std::size_t>(index.counts.chunks);
  summary.skipped = index.skipped;
  if (submodules > 0) summary.skipped["submodule"] = submodules;
  summary.seconds = run.seconds();
  return summary;
}

// The report of a run whose listing the index already holds, or nullopt when there is work.
std::optional<util::Result<IndexSummary>> report_if_unchanged(const Run& run,
                                                              const Listing& listing,
                                                              const IndexSummary& summary,
                                                              const std::string& digest) {
  const store::Store& store = run.store;
  const auto& entries = listing.entries;
  if (!digest.empty() && !run.options.dry_run && store.meta("listing_digest") == digest) {
    // The same listing as the last complete run.
    const auto submodules = std::count_if(entries.begin(), entries.end(), [](const auto& entry) {
      return entry.kind == repo::EntryKind::submodule;
    });
    return report_unchanged(run, listing, summary, digest, static_cast<std::size_t>(submodules));
  }
  if (listing.unchanged.everything() && !run.options.dry_run &&
      store.meta("commit") == summary.commit && store.meta("root") == run.source.root() &&
      run.stored_limit == run.limit_text) {
    // `--rev` of a commit whose root tree is the one indexed: the same files. (Another commit
    // of the same tree goes on below, to store its id.)
    auto result = report_unchanged(run, listing, summary, store.meta("listing_digest").value_or(""),
                                   listing.kept_submodules);
    if (result) result->files = result->indexed + result->skipped_total();
    return result;
  }
  return std::nullopt;
}

// The model: an index holds the vectors of one model only. An empty index is stamped with
// the run's model before its first window, so no vector ever exists unstamped.
util::Status stamp_model(const Run& run, const FileStates& states) {
  if (run.stamped == run.model) return util::Unit{};
  const IndexOptions& options = run.options;
  const std::string& model = run.model;
  if (!states.empty()) {
    return util::Error{
        "index '" + run.store.path() + "' was built " +
        (run.stamped.empty() ? std::string("without a model")
                             : "with model '" + run.stamped + "'") +
        (model.empty() ? std::string(", not without one") : ", not with model '" + model + "'") +
        ": rebuild it with `kasava index --rebuild`"};
  }
  if (!options.dry_run) {
    if (options.embedder != nullptr && options.embedder->dimensions() <= 0) {
      return util::Error{"model '" + model + "' has not said how many dimensions its vectors have"};
    }
    Transaction transaction(run.store);
    run.store.set_meta("embedding_model", model);
    run.store.set_meta("embedding_dims",
                       options.embedder ? std::to_string(options.embedder->dimensions()) : "");
    transaction.commit();
  }
  return util::Unit{};
}

// Decides the files of the next window, in listing order from `position`: blob id already
// indexed (or the stat cache says so) → counted, nothing to do; too large → skipped without
// reading; otherwise a work item. A window ends at k_window_files files or k_window_bytes.
std::vector<Work> next_window(const Run& run, std::vector<repo::SourceEntry>& entries,
                              std::size_t& position, const FileStates& states,
                              IndexSummary& summary, IndexProgress& progress) {
  const IndexOptions& options = run.options;
  std::vector<Work> work;
  std::size_t window_bytes = 0;
  for (; position < entries.size() && work.size() < k_window_files && window_bytes < k_window_bytes;
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
        run.limit_changed &&
        (entry.size > options.max_file_size || (known && state->second.skip_reason == "too large"));
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
  return work;
}

// Tallies a processed window in listing order (warnings too) and returns what must be
// stored. Sets `read_failed` when a file could not be read: it is tried again next run, so
// the listing digest cannot be trusted.
Batch tally_window(const Run& run, std::vector<Work>& work, std::int64_t racy_before,
                   IndexSummary& summary, IndexProgress& progress, bool& read_failed) {
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
      if (!item.read_error_lasting) read_failed = true;
      ++summary.skipped[item.skip_reason];
      if (item.known && item.known->skip_reason == item.skip_reason) continue;
      if (run.callbacks.warning) run.callbacks.warning(entry.path + ": " + item.read_error);
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
  return batch;
}

// What the window pipeline did.
struct WindowsDone {
  bool wrote = false;        // handed something to the writer
  bool interrupted = false;  // cancelled: what the writer had is committed, the rest is not
  bool read_failed = false;  // a file to try again next run: the digest cannot be trusted
};

// The pipeline of the top of the file: decide a window, read and chunk it on all threads,
// embed it remotely if so, tally it and hand it to the writer, which commits it while the
// next window is read; until the listing ends or the run is cancelled.
WindowsDone index_windows(const Run& run, std::vector<repo::SourceEntry>& entries,
                          const FileStates& states, std::int64_t racy_before,
                          IndexSummary& summary) {
  const IndexOptions& options = run.options;
  const IndexCallbacks& callbacks = run.callbacks;
  unsigned threads = options.threads ? options.threads : std::thread::hardware_concurrency();
  threads = std::max(1u, threads);
  std::vector<std::unique_ptr<parse::Chunker>> chunkers;  // made on first need: a refresh
                                                          // that parses nothing builds none
  IndexProgress progress;
  progress.files_total = entries.size();
  WindowsDone done;
  // A first index (or a rebuild) ends with optimize() in `kasava index`: merge once, there.
  const bool first_index = states.empty() && !entries.empty() && !options.dry_run;
  if (first_index) run.store.set_merging(store::Store::Merging::deferred);
  std::unique_ptr<Writer> writer;

  std::size_t position = 0;
  while (position < entries.size()) {
    if (callbacks.cancelled && callbacks.cancelled()) {
      done.interrupted = true;
      break;
    }
    std::vector<Work> work = next_window(run, entries, position, states, summary, progress);
    if (work.empty()) {
      if (callbacks.progress) callbacks.progress(progress);
      continue;
    }

    if (chunkers.empty()) {
      for (unsigned t = 0; t < threads; ++t) chunkers.push_back(std::make_unique<parse::Chunker>());
    }
    if (!process_in_parallel(
            work, run.source, chunkers, options.dry_run ? nullptr : options.embedder,
            options.dry_run ? Writing::dry_run : Writing::yes, callbacks.cancelled)) {
      done.interrupted = true;  // this window is left for the next run, as those after it
      break;
    }
    if (run.remote) embed_window_remotely(work, options, summary.embedding);

    Batch batch = tally_window(run, work, racy_before, summary, progress, done.read_failed);
    if (!options.dry_run && (!batch.records.empty() || !batch.stats.empty())) {
      if (!writer) writer = std::make_unique<Writer>(run.store);
      done.wrote = true;
      if (!writer->push(std::move(batch))) break;  // finish() below reports why
    }
    if (callbacks.progress) callbacks.progress(progress);
  }
  if (writer) writer->finish();  // commits what is queued; rethrows a write failure
  if (done.interrupted && first_index) run.store.set_merging(store::Store::Merging::automatic);
  return done;
}

// Files gone from the source: both lists are sorted by path (Source::list promises it; a
// copy is sorted if not), so one merge pass finds them. Files of the index under a folder a
// partial listing did not walk are as they were: counted, not gone.
std::vector<std::string> gone_files(const Listing& listing, const FileStates& states,
                                    IndexSummary& summary) {
  std::vector<std::string> gone;
  const std::vector<repo::SourceEntry>& entries = listing.entries;
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
    if (listing.unchanged.contain(path)) {  // in a folder not walked: as it was
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
  return gone;
}

}  // namespace

std::string index_model(const store::Store& store) {
  return store.meta("embedding_model").value_or("");
}

std::size_t IndexSummary::skipped_total() const {
  std::size_t total = 0;
  for (const auto& [reason, count] : skipped) total += count;
  return total;
}

namespace {

// The files of a run: everything run_index does but the history step.
util::Result<IndexSummary> index_files(repo::Source& source, store::Store& store,
                                       const IndexOptions& options, const IndexCallbacks& callbacks) {
  const Run run{source, store, options, callbacks};
  auto listed = list_files(source, store, !run.limit_changed && run.stamped == run.model);
  if (!listed) return listed.error();
  Listing& listing = *listed;
  std::vector<repo::SourceEntry>& entries = listing.entries;

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
  // Only a full listing has a digest (see the top of the file).
  const std::string digest = listing.unchanged.empty()
                                 ? listing_digest(entries, run.model, run.limit_text, source.root(),
                                                  summary.commit, racy_before)
                                 : std::string();
  if (auto report = report_if_unchanged(run, listing, summary, digest)) return std::move(*report);

  const auto states = store.file_states();
  if (auto stamped = stamp_model(run, states); !stamped) return stamped.error();
  // Chunks pending from earlier runs are the ones up to here; this run's failures wait for
  // the next run (the embedder has just retried them).
  const std::int64_t last_earlier_chunk = run.remote ? store.last_chunk_id() : 0;

  const WindowsDone windows = index_windows(run, entries, states, racy_before, summary);
  if (windows.interrupted) return util::Error{"interrupted"};
  bool wrote = windows.wrote;
  if (run.remote) {
    std::size_t stored = 0;
    if (!embed_pending(store, options, last_earlier_chunk, summary.embedding, callbacks, stored)) {
      return util::Error{"interrupted"};
    }
    wrote = wrote || stored > 0;
  }

  const std::vector<std::string> gone = gone_files(listing, states, summary);
  summary.files += listing.kept_submodules;
  if (listing.kept_submodules > 0) summary.skipped["submodule"] += listing.kept_submodules;
  const std::string trusted_digest = windows.read_failed ? std::string() : digest;
  const bool meta_changed = store.meta("root") != source.root() ||
                            store.meta("commit") != summary.commit ||
                            run.stored_limit != run.limit_text ||
                            store.meta("listing_digest").value_or("") != trusted_digest;
  if (options.dry_run) {
    summary.removed = gone.size();
    summary.indexed = summary.parsed + summary.unchanged;
    summary.chunks = summary.chunks_written;
    summary.seconds = run.seconds();
    return summary;
  }
  std::optional<IndexCounts> final_counts;  // counted in the last transaction, if the run writes
  if (wrote || !gone.empty() || meta_changed || listing.trees_changed) {
    Transaction transaction(store);
    for (const std::string& path : gone) store.remove_file(path);
    // After the removals, which empty the table: the index is now this commit's tree.
    if (listing.has_trees) listing.store_trees(store);
    store.set_meta("root", source.root());
    store.set_meta("commit", summary.commit);
    store.set_meta("indexed_at", now_iso8601());
    store.set_meta("max_file_size", run.limit_text);
    // Last: the writes above cleared any older digest.
    store.set_meta("listing_digest", trusted_digest);
    final_counts = count_index(store);
    if (!trusted_digest.empty()) {
      store.set_meta("listing_counts", encode_listing_counts(trusted_digest, *final_counts));
    }
    if (listing.untracked_cache_changed) listing.store_untracked_cache(store);
    // Also after a first run that was killed midway and left merging deferred.
    store.set_merging(store::Store::Merging::automatic);
    transaction.commit();
  } else if (listing.untracked_cache_changed) {
    Transaction transaction(store);
    listing.store_untracked_cache(store);
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
  if (run.remote) summary.embedding.pending = static_cast<std::size_t>(store.pending_count());
  summary.seconds = run.seconds();
  return summary;
}

}  // namespace

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

}  // namespace kasava::index
