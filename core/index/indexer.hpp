// The indexing pipeline: list the source's files, skip what should not be indexed, parse and
// chunk what changed (in parallel), and write it to the store in transactions.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>

#include "core/embed/embedder.hpp"
#include "core/repo/source.hpp"
#include "core/store/store.hpp"
#include "core/store/vector_cache.hpp"
#include "core/util/result.hpp"

namespace kasava::index {

struct IndexOptions {
  std::uint64_t max_file_size = 1024 * 1024;  ///< --max-file-size: larger files are skipped
  unsigned threads = 0;                       ///< parser threads; 0 = one per core
  /// Embeds every chunk written (embed::embedding_input, on the worker threads) when set;
  /// must be thread-safe. The index records its model_id() and dimensions() and must have
  /// been built with the same model (or be empty): else run_index fails and says how to
  /// rebuild. Null = no vectors (an index that has none).
  embed::Embedder* embedder = nullptr;
  /// Vectors of a remote embedder (Locality::remote) already paid for, by content: looked up
  /// before sending and filled after. Null = no cache. Unused for a local embedder.
  store::VectorCache* vector_cache = nullptr;
  /// List, read and chunk as a real run would, but write nothing and send nothing: the
  /// summary says what would be indexed and, for a remote embedder, sent.
  bool dry_run = false;
};

/// Progress of a run, reported to the caller (never printed by core/).
struct IndexProgress {
  std::size_t files_done = 0;   ///< files looked at so far
  std::size_t files_total = 0;  ///< files listed by the source
  std::size_t files_parsed = 0; ///< files parsed so far (new or changed content)
  std::size_t chunks = 0;       ///< chunks written so far
};

/// What one run did: the figures of the summary line and of --json.
struct IndexSummary {
  std::size_t files = 0;          ///< files listed by the source
  std::size_t indexed = 0;        ///< files in the index after the run (not skipped)
  std::size_t parsed = 0;         ///< files parsed in this run (new or changed)
  std::size_t unchanged = 0;      ///< files whose content was already indexed
  std::size_t removed = 0;        ///< files dropped because they are gone
  std::size_t chunks = 0;         ///< chunks in the index after the run
  std::size_t chunks_written = 0; ///< chunks written in this run
  std::map<std::string, std::size_t> skipped;  ///< files skipped, by reason
  std::size_t skipped_total() const;
  std::string commit;             ///< commit id of the indexed tree ("" if none)
  double seconds = 0.0;

  /// What a remote embedder (Locality::remote) did; all 0 for a local one.
  struct Embedding {
    std::size_t sent = 0;            ///< chunks sent to the service and embedded
    std::size_t cached = 0;          ///< chunks whose vector came from the vector cache
    std::size_t retried = 0;         ///< chunks pending from an earlier run, embedded now
    std::size_t pending = 0;         ///< chunks that failed: stored without a vector, retried next run
    /// A dry run: chunks that would be sent (not in the cache) and their estimated tokens
    /// (bytes / 4, as the batcher estimates).
    std::size_t would_send = 0;
    std::size_t estimated_tokens = 0;
    std::string first_error;         ///< why the first chunk failed ("" when none did)
    std::string cache_error;         ///< why the vector cache could not be written ("" if it could)
  } embedding;
};

struct IndexCallbacks {
  std::function<void(const IndexProgress&)> progress;         ///< called often; may be empty
  std::function<void(const std::string& warning)> warning;    ///< "path: reason"; may be empty
  /// Polled before each file is processed (from the parser threads) and between batches;
  /// when it returns true the run stops after committing the batches it completed and
  /// returns the error "interrupted". May be empty.
  std::function<bool()> cancelled;
};

/// Indexes `source` into `store`, incrementally: content already indexed (same blob id) is
/// not read or parsed again (nor embedded), and files gone from the source are removed. Writes
/// commit in batches, each chunk with its vector; a run killed midway leaves every file either
/// in its old or its new version.
util::Result<IndexSummary> run_index(repo::Source& source, store::Store& store,
                                     const IndexOptions& options, const IndexCallbacks& callbacks);

/// The model id an index records (meta "embedding_model"): "" when it has no vectors.
std::string index_model(const store::Store& store);

/// Why a file's content should not be indexed ("secret" — util::looks_like_secret —,
/// "binary", "minified", …) or "" to index it.
std::string skip_reason_for_content(std::string_view path, std::string_view content);

} // namespace kasava::index
