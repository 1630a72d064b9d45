// The index file: one SQLite database holding files, chunks (text and metadata), a full-text
// index over code-aware tokens and chunk vectors (binary codes and int8 values, see
// vectors.hpp). The only module that includes <sqlite3.h>.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/store/history.hpp"
#include "core/store/text_packs.hpp"
#include "core/store/vectors.hpp"
#include "core/types/chunk.hpp"
#include "core/util/result.hpp"

namespace kasava::store {

namespace sqlite {
class Database;
}

/// Bumped whenever the schema or the tokenization changes; older indexes must be rebuilt
/// (`kasava index` and the refresh before `ask` do it by themselves: the index is a cache).
/// 2: vectors as int8 values plus a `vector_codes` table of binary codes per file.
/// 3: `pending_vectors`, chunks of an index with a model whose embedding failed; `trees`, the
///    tree ids of the last complete `--rev` run.
/// 4: chunk text, signature and doc compressed in `text_packs` (see text_packs.hpp); a chunk's
///    `text` column holds a reference to its pack (a BLOB) instead of the text. An older
///    kasava would misread those rows, hence the new number.
/// 5: `chunk_sizes`, each chunk's length in full-text tokens for ranking (see
///    chunk_lengths.hpp). An older kasava would write chunks without it, and a later search
///    would rank them with a stale length, hence the new number.
/// 6: new text packs are zstd frames, their references' format byte 2 (text_packs.hpp); the
///    LZ77 packs of schemas 4 and 5 (format byte 1) are still read. An older kasava would
///    find those references malformed, hence the new number.
/// 7: `vector_code_blocks`, the codes of 256 files a row for the semantic scan (store.cpp).
///    An older kasava would change `vector_codes` without its blocks, and a later scan would
///    read stale codes, hence the new number.
/// 8: the partitions of the codes (`vector_centroids`, `vector_partitions` and what changed
///    since they were made, store.cpp). An older kasava would change codes without saying
///    so, and a partitioned scan would miss them, hence the new number.
/// 9: `term_docs`, the kept document frequencies of common terms (term_docs.hpp). An older
///    kasava would change chunks without counting them, and a search would rank with wrong
///    frequencies, hence the new number.
inline constexpr int k_schema_version = 9;
/// The oldest version still opened as it is: schema 3 differs only in keeping chunk strings
/// uncompressed, which is read as before, schema 4 in having no chunk lengths (FTS5's are
/// used) and schema 5 in having only LZ77 packs; opening any of them for writing makes it
/// schema 9 (old rows stay as they are; for 3 and 4 the lengths are copied from FTS5's; the
/// code blocks are built from the per-file rows; the partitions and the kept term counts
/// come with the next run).
inline constexpr int k_oldest_readable_schema_version = 3;

enum class OpenMode {
  read_only,   ///< the file must exist; nothing is written
  read_write,  ///< created (with parent directories) when missing
};

/// What the index remembers of one file.
struct FileState {
  std::string blob_id;
  std::string skip_reason;  ///< "" when indexed; else why it was skipped ("binary", ...)
  /// The file's stat data when blob_id was computed from its content (the stat cache): the
  /// same size, times and inode mean the same content, without reading it. 0s when none.
  std::uint64_t size = 0;
  std::int64_t mtime_ns = 0;
  std::int64_t ctime_ns = 0;
  std::uint64_t inode = 0;
};

/// A file to store, with its chunks.
struct FileRecord {
  std::string path;
  std::string blob_id;
  std::string language;
  std::uint64_t size = 0;
  std::string skip_reason;  ///< non-empty: remembered as skipped, no chunks
  /// Stat data to remember with blob_id (see FileState); mtime_ns 0 = remember none.
  std::int64_t mtime_ns = 0;
  std::int64_t ctime_ns = 0;
  std::uint64_t inode = 0;
};

/// One stored chunk with its file's data, as search results need it.
struct ChunkRecord {
  std::int64_t id = 0;
  std::string path;
  std::string language;
  types::Chunk chunk;
};

/// Weights of the full-text columns in BM25 (symbol, path, doc, body).
struct FieldWeights {
  double symbol = 10.0;
  double path = 4.0;
  double doc = 3.0;
  double body = 1.0;
};

/// A lexical candidate: a chunk id and its BM25 score (higher is better, > 0).
struct LexicalHit {
  std::int64_t chunk_id = 0;
  double score = 0.0;
};

/// A semantic candidate from the Hamming scan: a chunk id and the Hamming distance of its
/// binary code to the query's (lower is closer).
struct CodeHit {
  std::int64_t chunk_id = 0;
  int distance = 0;
};

/// Which codes an unfiltered Hamming scan reads in a partitioned index (Store::nearest_codes).
enum class CodeScan {
  nearest_partitions,  ///< the partitions nearest the query: most of the nearest codes, fast
  every_code,          ///< all of them: exactly the nearest codes
};

/// Every chunk's code, stored vector and head in memory (Store::read_snapshot).
struct IndexSnapshot;

/// A chunk's stored vector (for rescoring): its quantized values and their scale.
struct StoredVector {
  std::int64_t chunk_id = 0;
  std::vector<std::int8_t> values;
  float scale = 0.0f;
};

/// An indexed file (not skipped): what a shared store's snapshot lists.
struct IndexedFile {
  std::string path;
  std::string blob_id;
  std::string language;
};

/// One indexed file's content as a shared store publishes it (core/pgstore): its chunks in
/// order, and for each its binary code and stored values (pack_values' bytes) when it has a
/// vector (empty when not).
struct FileExport {
  std::vector<types::Chunk> chunks;
  std::vector<std::vector<std::uint8_t>> codes;
  std::vector<std::vector<std::uint8_t>> values;
};

/// Which files a semantic scan considers, by path and language; empty = every file.
using FileFilter = std::function<bool(std::string_view path, std::string_view language)>;

/// Summary figures for `kasava status`.
struct Stats {
  std::int64_t files = 0;          ///< files indexed (no skip reason)
  std::int64_t skipped_files = 0;  ///< files remembered as skipped
  std::int64_t chunks = 0;
  std::int64_t vectors = 0;        ///< chunk vectors (0 in an index built without a model)
  std::int64_t pending_vectors = 0;  ///< chunks whose embedding failed, retried next run
  std::map<std::string, std::int64_t> files_per_language;  ///< indexed files only
  std::uint64_t source_bytes = 0;                          ///< total size of the indexed files
  std::uint64_t index_bytes = 0;  ///< size of the database file (page_count * page_size)
};

/// What check_index() found in an index file (see core/store/verify.cpp).
struct IndexCheck {
  /// Damage to the file as a whole (SQLite or FTS5 integrity, FTS rows of no chunk, vectors
  /// without a model stamp, chunk text that does not decode — its FTS row cannot be deleted
  /// without it —, packs of text of no chunk): only a rebuild repairs it. Empty when the file
  /// is sound.
  std::vector<std::string> problems;
  /// Indexed files whose rows disagree (a chunk without its FTS row, chunks of a file
  /// remembered as skipped): re-indexing these paths repairs them.
  std::vector<std::string> inconsistent_paths;
  std::int64_t files = 0;      ///< rows in `files` (indexed and skipped)
  std::int64_t chunks = 0;     ///< rows in `chunks`
  std::int64_t fts_rows = 0;   ///< rows in the full-text index
  std::int64_t vectors = 0;    ///< rows in `vectors`
  std::int64_t pending_vectors = 0;  ///< rows in `pending_vectors`
  std::string embedding_model; ///< meta "embedding_model", "" when none
  int embedding_dims = 0;      ///< meta "embedding_dims", 0 when none
};

/// Whether an error of this module says the index file is damaged (SQLite finds it malformed:
/// truncated, overwritten): `kasava verify` reports that as damage, and --repair rebuilds it.
bool is_damage(const util::Error& error);

/// Checks the kasava index at `path` against itself on a read-only connection of its own:
/// PRAGMA integrity_check, FTS5 'integrity-check', every chunk's file row and FTS row, every
/// FTS row's chunk, every chunk's packed text decoding, every pack's chunks, vectors against
/// chunks and the model stamp (with a model, every chunk has one vector of the stamped
/// dimensions and its binary code). An error only when the file
/// cannot be opened or read at all (open it with Store::open first for a clear message).
util::Result<IndexCheck> check_index(const std::string& path);

/// A training of the codes' partitions (Store::plan_partitions), opaque.
struct PartitionPlan;

class Store {
public:
  /// Opens (or, read_write, creates) the index at `path`. Errors are one line with the path
  /// quoted: not a database, schema version from another kasava (say how to rebuild), missing.
  static util::Result<std::unique_ptr<Store>> open(const std::string& path, OpenMode mode);
  /// Whether this process may write the existing index at `path` and its folder (where
  /// SQLite makes its -wal and -shm files): not another user's, nor a read-only artifact's.
  static bool may_write(const std::string& path);
  /// Deletes the index file at `path` with its WAL and shared-memory companions (what a
  /// killed rebuild left beside an index). A missing file is not an error. No Store may have
  /// it open.
  static util::Status remove(const std::string& path);
  /// Puts the complete index built at `built` (closed) in the place of the index at `path`,
  /// then deletes `built`. When `path` holds an index SQLite can open, its pages are replaced
  /// by `built`'s in one write transaction (SQLite's backup API) rather than by renaming:
  /// readers of the old index keep reading it until that commits and see the new one after,
  /// and a process killed midway leaves the old one as it was. A rename would leave the old
  /// file's `-wal` and `-shm` under the new file's names, where the next connection would
  /// read them as the new file's. Otherwise (a damaged file, kasava's to replace: the caller
  /// decides; or a file SQLite cannot write in place) `built` is renamed over it. The caller
  /// holds the index lock.
  static util::Status swap_in(const std::string& built, const std::string& path);
  /// The schema version of the kasava index at `path`; nullopt when the file is missing, not
  /// SQLite or not a kasava index. Lets `kasava index` rebuild an index of an older version.
  static std::optional<int> schema_version(const std::string& path);
  /// A meta value of the kasava index at `path`, of any schema version (so an older index
  /// can say where it was built from); nullopt when missing or unreadable.
  static std::optional<std::string> peek_meta(const std::string& path, std::string_view key);
  ~Store();
  Store(const Store&) = delete;
  Store& operator=(const Store&) = delete;

  const std::string& path() const;

  // --- metadata (key/value): "root", "commit", "indexed_at", "embedding_model", ...
  std::optional<std::string> meta(std::string_view key) const;
  void set_meta(std::string_view key, std::string_view value);

  /// Whether the last run that wrote files, chunks or vectors called mark_complete(): every
  /// such write records the index as partial (meta "partial"), once per transaction, so an
  /// index run killed midway leaves it recorded so.
  bool marked_complete() const;
  /// Records that the run writing this index finished (deletes meta "partial"; nothing is
  /// written when it is not there). Call outside a transaction, after the run's last one.
  void mark_complete();

  // --- files
  /// Every stored file by path.
  std::map<std::string, FileState> file_states() const;

  // --- writes; group them in transactions (a killed process leaves the last commit intact)
  void begin();
  void commit();
  void rollback();
  /// Replaces whatever is stored for record.path with this version and its chunks, and their
  /// vectors when given (one per chunk, in order, all of one length; see quantize()). A chunk
  /// whose vector is empty (no values) is remembered as pending: its embedding failed, and a
  /// later run embeds it again (pending_chunks, put_vectors). `texts`: the chunks' strings as
  /// pack_texts(chunks) packs them, made off the writing thread; empty = packed here.
  void put_file(const FileRecord& record, const std::vector<types::Chunk>& chunks,
                const std::vector<QuantizedVector>& vectors = {}, const PackedTexts& texts = {});
  /// Stores the vectors of chunks that were pending (see put_file), one per id, and adds
  /// their codes to their files' rows. Ids that are not pending are ignored.
  void put_vectors(const std::vector<std::int64_t>& chunk_ids,
                   const std::vector<QuantizedVector>& vectors);
  /// Remembers new stat data (record.mtime_ns etc.) for a stored file whose content did not
  /// change (a touched file): the next run need not read it. Nothing when it is not stored.
  void put_stat(const FileRecord& record);
  /// Forgets a file and its chunks.
  void remove_file(std::string_view path);

  // --- tree ids of the last complete `kasava index --rev` run (see core/index/indexer.cpp)
  /// Every stored (folder path, tree id), sorted by path; "" is the root. A row promises that
  /// the files indexed under that folder are exactly those of that tree, so put_file and
  /// remove_file empty the table (once per transaction): only a complete `--rev` run writes
  /// rows again. Empty when none are stored.
  std::vector<std::pair<std::string, std::string>> tree_ids() const;
  /// Replaces every stored row with `trees`, within the caller's transaction; empty = clear.
  void set_tree_ids(const std::vector<std::pair<std::string, std::string>>& trees);
  /// Merges the full-text index into one segment: smaller and faster to search. Worth it after
  /// a large batch of writes (a first index, a rebuild); costs about a rewrite of the index.
  /// Call outside a transaction.
  void optimize();
  /// Full-text segment merging while writing: `automatic` (FTS5's default, right for small
  /// updates) or `deferred` to optimize() — for a first index or a rebuild, which end with
  /// one: each row is then merged once instead of at every level (measured: ~10% of the CPU
  /// of a first index). Stored in the index: set it back to automatic when done.
  enum class Merging { automatic, deferred };
  void set_merging(Merging merging);

  // --- reads
  /// One read transaction for as long as it lives: the reads in between see one snapshot of
  /// the index, and SQLite takes and drops its shared lock once instead of once per statement
  /// (an `ask` makes hundreds of statements: ~700 fcntl calls without it). Not nested, not
  /// during a write transaction.
  class ReadSnapshot {
  public:
    explicit ReadSnapshot(const Store& store);
    ~ReadSnapshot();
    ReadSnapshot(const ReadSnapshot&) = delete;
    ReadSnapshot& operator=(const ReadSnapshot&) = delete;

  private:
    const Store& m_store;
    bool m_open = false;
  };

  /// A number that changes whenever another connection (of this process or another) commits
  /// to the file (PRAGMA data_version): equal before and after something ran means nothing
  /// was written meanwhile.
  std::int64_t data_version() const;
  /// Sets this connection's page cache to `kib` KiB (a read-only connection starts with 256
  /// KiB, right for one search; a server that keeps its connections gains from more).
  void set_page_cache(std::int64_t kib);

  /// The codes, stored vectors and heads of every chunk, read once into memory, for a process
  /// that keeps several connections to one index (kasava serve): nearest_codes without a
  /// filter, vectors_by_id and chunks_by_id's heads then read them there instead of through
  /// each connection's page cache (heads written since are read from the file).
  /// nullptr for an index whose codes are partitioned or that holds more than `max_chunks`.
  /// Read in one read transaction; it is as current as the file was then.
  std::shared_ptr<const IndexSnapshot> read_snapshot(std::int64_t max_chunks) const;
  /// The snapshot this connection's searches use (nullptr: none, the default). The caller
  /// knows when it is out of date (data_version).
  void use_snapshot(std::shared_ptr<const IndexSnapshot> snapshot);

  /// Best chunks for an FTS5 MATCH expression, by weighted BM25, at most `limit`.
  /// An invalid expression is an error, not an exception. In a large index, an expression of
  /// OR-ed quoted terms is first tried without the rows that hold only common terms, which
  /// is kept when a bound on their scores shows they cannot enter the page (see store.cpp).
  util::Result<std::vector<LexicalHit>> lexical_search(std::string_view match_expression,
                                                       const FieldWeights& weights, int limit) const;
  /// How much of a chunk chunks_by_id() reads.
  enum class Detail {
    full,  ///< everything
    head,  ///< path, language, kind, symbol, parent and lines: no text, doc or signature
  };
  /// The chunks with these ids (any order; unknown ids are skipped).
  std::vector<ChunkRecord> chunks_by_id(const std::vector<std::int64_t>& ids,
                                        Detail detail = Detail::full) const;
  /// The `limit` chunks whose binary codes are nearest to `code` by Hamming distance, nearest
  /// first (ties by chunk id), among the files `accept` takes (all when empty). One scan of the
  /// per-file code rows; codes of another length than `code` are ignored.
  /// An index of at least 200,000 chunks keeps its codes in partitions (update_partitions):
  /// there an unfiltered scan for CodeScan::nearest_partitions reads the nearest partitions
  /// holding about a quarter of the codes, and the codes of files changed since the
  /// partitions were made.
  std::vector<CodeHit> nearest_codes(std::span<const std::uint8_t> code, int limit,
                                     const FileFilter& accept = {},
                                     CodeScan scan = CodeScan::every_code) const;
  /// Partitions the codes when the index has at least the set number of chunks (by the
  /// largest chunk id) and has none, or when more than a tenth of the files or partitioned
  /// codes changed since they were made; drops them from an index that shrank below it. One
  /// transaction, outside any other; called at the end of each index run.
  void update_partitions();
  /// update_partitions in two halves, so that another connection of the same index may train
  /// while this one writes (`kasava index` trains while it merges the full-text index): when
  /// this connection would partition the codes anew, the threshold it uses; the training on
  /// any connection, which reads only (nullptr: fewer codes than the threshold); and
  /// update_partitions with that training, which writes it if it is of the codes there are
  /// (else trains again).
  std::optional<std::int64_t> partitions_due() const;
  std::shared_ptr<const PartitionPlan> plan_partitions(std::int64_t min_chunks) const;
  void update_partitions(const std::shared_ptr<const PartitionPlan>& trained);
  /// Refills the kept counts of common terms (term_docs.hpp) when the index has at least the
  /// chunks of a bounded search (by the largest id) and none are kept, or its largest id grew
  /// by a quarter since; empties them in a smaller index. One transaction, outside any other;
  /// called at the end of each index run (a first run of the kernel: ~4.5 s of counting, which
  /// `kasava index` does on a second connection during its merge: count_common_terms).
  void update_term_docs();
  /// When update_term_docs would refill the kept counts: the fewest rows a kept term has,
  /// and the index's largest chunk id then.
  struct TermDocsRefill {
    std::int64_t min_docs = 0;
    std::int64_t largest_id = 0;
  };
  std::optional<TermDocsRefill> term_docs_refill_due() const;
  /// The terms at least `min_docs` rows hold, with their counts: the walk of every term's rows
  /// update_term_docs makes, reading only, so that another connection of the same index may
  /// make it while this one writes (`kasava index` counts while it merges the full-text index).
  std::vector<std::pair<std::string, std::int64_t>> count_common_terms(std::int64_t min_docs) const;
  /// Refills the kept counts with `counts`, count_common_terms(due.min_docs) of this index as
  /// it is now. One transaction, outside any other.
  void refill_term_docs(const TermDocsRefill& due, const std::vector<std::pair<std::string, std::int64_t>>& counts);
  /// From how many chunks the codes are partitioned (default 200,000), and the share of the
  /// codes a partitioned search reads (default 1/4): for tests and measurements.
  void set_partitioning(std::int64_t min_chunks, double probe_share);
  /// From how many chunks (by the largest id) lexical_search tries its bound (default 200,000;
  /// below, the plain query alone): for tests and measurements.
  void set_bounded_search(std::int64_t min_chunks);
  /// Chunks whose vector is pending (see put_file), by id after `after_id`, at most
  /// `limit`, with their text: what the next run embeds again.
  std::vector<ChunkRecord> pending_chunks(std::int64_t after_id, int limit) const;
  /// The stored vectors of these chunks, of `dims` dimensions (any order; chunks without one,
  /// or with one of another length, are skipped).
  std::vector<StoredVector> vectors_by_id(const std::vector<std::int64_t>& ids, int dims) const;
  Stats stats() const;
  /// The chunks and vectors of the indexed file at `path`; nullopt when it is not stored or
  /// was skipped.
  std::optional<FileExport> file_export(std::string_view path) const;
  /// Every indexed file (skipped ones left out), by path.
  std::vector<IndexedFile> indexed_files() const;
  /// Files indexed and chunks: the two figures of an index run's summary, without the scans
  /// of stats().
  struct Counts {
    std::int64_t files = 0;   ///< files indexed (no skip reason)
    std::int64_t chunks = 0;
  };
  Counts counts() const;
  /// Files remembered as skipped, by reason.
  std::map<std::string, std::size_t> skipped_files() const;
  /// Chunks whose vector is pending (see put_file): one count, cheap enough for every refresh.
  std::int64_t pending_count() const;
  /// The largest chunk id in use (0 when there are no chunks).
  std::int64_t last_chunk_id() const;

  // --- history: commit text per path (history.hpp; defined in history.cpp)
  /// Adds commits (newest first) to the history of the paths they changed, within the
  /// caller's transaction: each path keeps the newest k_history_per_path lines. `replace`:
  /// the history read from scratch (another branch, an older commit, a first run) replaces
  /// what was stored. Drops the rows of paths that have no `files` row. Records `tip` (meta
  /// history_tip) and the commits read (meta history_commits, added to the stored count
  /// unless `replace`). Touches neither files nor chunks: the listing digest stays valid.
  void put_history(const std::vector<HistoryCommitRecord>& newest_first, bool replace,
                   std::string_view tip, std::int64_t commits_read);
  /// The tip, commits read and paths of the stored history (all empty or 0 when none).
  HistoryExtent history_extent() const;
  /// Every path's history text (path, text), by path: what a shared store keeps beside a
  /// snapshot. Empty when the index has no history.
  std::vector<std::pair<std::string, std::string>> history_texts() const;
  /// Files ranked by BM25 over their history: the text of the newest commits that touched
  /// each (one document per path; `porter kasava` tokens, so the same terms as chunks_fts), for
  /// an FTS5 MATCH expression such as search::Query::match_expression (its terms quoted and
  /// OR-ed), best first, at most `limit`. Scores are FTS5's bm25() negated (higher is better,
  /// > 0), comparable within one query only. Paths are repository-relative like the `files`
  /// rows, and a path may be one the index skipped. An index without history (a plain
  /// directory, one built before the field existed) gives no hits; an invalid expression is
  /// an error, not an exception. Cost: one FTS5 query over at most one row per file.
  util::Result<std::vector<HistoryHit>> history_search(std::string_view match_expression,
                                                       int limit) const;

private:
  struct Impl;
  explicit Store(std::unique_ptr<Impl> impl);
  /// lexical_search without visiting rows that hold only common terms, when that provably
  /// gives the same page (see store.cpp); nullopt when it cannot tell (then the plain query).
  std::optional<std::vector<LexicalHit>> bounded_lexical_search(std::string_view match_expression,
                                                                const FieldWeights& weights,
                                                                int limit) const;
  sqlite::Database& database() const;  // for history.cpp
  std::unique_ptr<Impl> m_impl;
};

} // namespace kasava::store
