// The index file: schema, opening and version checks, writes and reads over SQLite.
//
// Layout. `files` has one row per path (with the blob id that makes indexing incremental and
// a skip reason for files remembered but not indexed); `chunks` holds each chunk's metadata
// and, through `text_packs`, its text — the only copy of the text, so `ask` works from the
// index file alone; `meta` is key/value (schema_version, root, commit, embedding_model,
// embedding_dims, ...).
//
// Chunk text. The text, signature and doc of a file's consecutive chunks are compressed
// together (util::compress) into rows of `text_packs` of about 64 KiB decoded
// (text_packs.hpp: compressing chunks together finds the repeats between them, ~3.9x on
// source code against ~2.1x for each chunk alone). A chunk's `text` column then holds a
// BLOB, a reference (pack id, offset, three lengths; encode_reference), and its `signature`
// and `doc` columns are empty. SQLite columns are typed per value, and the type is the
// switch: a TEXT `text` is the text itself with signature and doc in their columns — every
// row of a schema 3 index, and chunks with no strings or strings too large for a pack. One
// call reading several chunks decodes each pack once (PackCache). A pack is written with its
// file's chunks and deleted with them (delete_file follows the references). The compressing
// is done by the indexer's worker threads (pack_texts), not on the single writing thread.
//
// Vectors (when the index was built with a model). Each chunk's vector is stored twice, as
// vectors.cpp explains: `vectors` holds its 4-bit values by chunk id (read for a few hundred
// chunks per query, to rescore), and `vector_codes` holds the binary codes of all chunks of
// one file in one row (chunk ids and codes as two blobs). The semantic scan reads only
// `vector_codes`: about 40 bytes per chunk, packed in few pages, one row per file instead of
// one per chunk (a SQLite row step costs about as much as hundreds of popcounts). A file's
// rows of both tables are written and deleted with its chunks, in the same transaction.
// The unfiltered scan reads `vector_code_blocks` instead (schema 7): the rows of
// k_code_block_files consecutive file ids concatenated into one row, a few hundred rows on
// the kernel instead of 78,000 (a SQLite row step and its page reads cost ~1,700
// instructions: measured there, 168M -> 63M instructions and ~60 -> ~25 ms CPU per scan).
// A block is rebuilt from its files' `vector_codes` rows when one of them changed, at the
// commit of the transaction (or at once outside one), so it always holds exactly those rows
// and the scan exactly the same codes; a filtered scan (which needs each file's path) still
// reads `vector_codes`, and so does a schema 6 index opened read-only.
// An index of at least k_partition_min_chunks chunks also keeps its codes in partitions
// (schema 8; code_partitions.hpp): `vector_centroids` holds a centroid and a size per
// partition, `vector_partitions` the chunk ids and codes of each, as they were when the
// partitions were made (update_partitions, at the end of an index run). An unfiltered scan
// reads the partitions whose centroids are nearest the query until it has seen about
// k_probe_share of the codes. What changed since is kept beside them, so that the scan sees
// exactly the current codes of what it reads: `vector_partition_changes` lists the files whose
// codes row was written or deleted since (the scan reads their rows of `vector_codes` too),
// and `vector_partition_dead` the chunk ids those rows held before (the scan skips them in
// the partitions). When either passes a tenth of what was partitioned, the partitions are
// made again. A partitioned index keeps no blocks: the partitions hold every code, and a
// scan of them all is the full scan; dropping the partitions (an index that shrank) builds
// the blocks again.
// A chunk of an index with a model whose embedding failed (a remote model's service) has a
// `pending_vectors` row instead of a vector; the next run embeds it again and put_vectors
// adds its vector and its code to its file's row. So every chunk has exactly one of a vector
// or a pending row, which verify checks.
//
// Full text. `chunks_fts` is a *contentless* FTS5 table (content=''): it stores only the
// inverted index, never the text again, which keeps the file under about twice the source
// size. Its rowid is the chunk id and its columns are, per chunk:
//   symbol — the chunk's symbol and its parent ("parse Config"), so a method is found by its
//            class name too;
//   path   — the file's path (components come out as tokens: "core/store/store.cpp" →
//            core, store, store, cpp);
//   doc    — the doc comment followed by the signature: words of a definition's interface
//            (parameter and return types) weigh more than words deep in a body;
//   body   — the chunk's text.
// Text is split by the "kasava" tokenizer (tokenizer.cpp), wrapped by porter for stemming.
// In an index of 200k chunks or more, `term_docs` keeps the document frequencies of the
// common terms (term_docs.hpp): each FTS5 insert and delete below is bracketed by a
// CountedRow, and the counts are written at commit, as the chunk lengths are.
//
// Deleting from a contentless table takes the FTS5 'delete' command with the row's original
// column values, token for token. fts_symbol()/fts_doc() below compute them from the stored
// columns for both the insert and the delete, so the two cannot drift apart; a file's rows
// are deleted before its file row, while its path is still known.
#include "core/store/store.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <map>
#include <set>
#include <system_error>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include "core/store/chunk_lengths.hpp"
#include "core/util/code_partitions.hpp"
#include "core/util/hamming.hpp"
#include "core/store/sqlite.hpp"
#include "core/store/term_docs.hpp"
#include "core/store/tokenizer.hpp"

namespace kasava::store {
namespace {

// "KASV": marks a SQLite file as a kasava index (PRAGMA application_id), so we never write
// schema into somebody else's database.
constexpr std::int64_t k_application_id = 0x4B415356;
// A reader waits this long for a writer's commit instead of failing with "database is locked".
constexpr int k_busy_timeout_ms = 5000;
// Page cache per connection (negative = KiB). What an index run writes is mostly appended in
// rowid order, and FTS5's merges read their segments once: a full index of the Linux kernel
// took 325 s with 8 MiB against 341 s with 16 MiB (one run each), and peaked 10 MB lower.
constexpr const char* k_cache_size_pragma = "PRAGMA cache_size=-8192";
// A read-only connection serves one search and is closed: the pages a search touches are read
// once (a semantic scan reads every page of vector_codes), so a large cache only turns each
// page into fresh heap memory, and on a virtual machine a page fault costs more than the read.
// Measured on the 110k-chunk synthetic index: 3,114 -> 648 page faults and 62 -> 27 ms for a
// semantic ask, hybrid 104 -> 56 ms; lexical asks and larger caches (512 KiB) no faster.
constexpr const char* k_read_cache_size_pragma = "PRAGMA cache_size=-256";
// No memory map (PRAGMA mmap_size) for `ask`, though the semantic scan reads every page of
// vector_codes: those pages lie scattered through the file (each window's transaction
// appends pages of every table), and the kernel maps 64 KiB around each page touched —
// measured: +40 MB of resident memory on a 110k-chunk index for ~0.4 ms saved.

constexpr const char* k_schema_sql = R"sql(
CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE files(
  id INTEGER PRIMARY KEY,
  path TEXT UNIQUE NOT NULL,
  blob_id TEXT NOT NULL,
  language TEXT NOT NULL,
  size INTEGER NOT NULL,
  skip_reason TEXT NOT NULL DEFAULT ''
);
CREATE TABLE chunks(
  id INTEGER PRIMARY KEY,
  file_id INTEGER NOT NULL REFERENCES files(id),
  start_line INTEGER NOT NULL,
  end_line INTEGER NOT NULL,
  kind TEXT NOT NULL,
  symbol TEXT NOT NULL,
  parent TEXT NOT NULL,
  signature TEXT NOT NULL,
  doc TEXT NOT NULL,
  text TEXT NOT NULL
);
CREATE INDEX chunks_file_id ON chunks(file_id);
CREATE TABLE vectors(chunk_id INTEGER PRIMARY KEY REFERENCES chunks(id), vector BLOB NOT NULL);
CREATE TABLE vector_codes(
  file_id INTEGER PRIMARY KEY REFERENCES files(id),
  chunk_ids BLOB NOT NULL,
  codes BLOB NOT NULL
);
CREATE TABLE pending_vectors(chunk_id INTEGER PRIMARY KEY REFERENCES chunks(id));
CREATE TABLE vector_code_blocks(block INTEGER PRIMARY KEY, chunk_ids BLOB NOT NULL, codes BLOB NOT NULL);
CREATE TABLE vector_centroids(partition INTEGER PRIMARY KEY, centroid BLOB NOT NULL, size INTEGER NOT NULL);
CREATE TABLE vector_partitions(partition INTEGER PRIMARY KEY, chunk_ids BLOB NOT NULL, codes BLOB NOT NULL);
CREATE TABLE vector_partition_changes(file_id INTEGER PRIMARY KEY);
CREATE TABLE vector_partition_dead(chunk_id INTEGER PRIMARY KEY);
CREATE VIRTUAL TABLE chunks_fts USING fts5(
  symbol, path, doc, body, content='', tokenize='porter kasava'
);
CREATE TABLE trees(path TEXT PRIMARY KEY, tree_id TEXT NOT NULL) WITHOUT ROWID;
CREATE TABLE text_packs(id INTEGER PRIMARY KEY, data BLOB NOT NULL);
CREATE TABLE chunk_sizes(block INTEGER PRIMARY KEY, sizes BLOB NOT NULL);
CREATE TABLE term_docs(term TEXT PRIMARY KEY, docs INTEGER NOT NULL) WITHOUT ROWID;
)sql";
// Chunk text packs (see the top of the file); a schema 3 index gets the table when it is first
// opened for writing, which makes it schema 4.
constexpr const char* k_text_packs_sql =
    "CREATE TABLE IF NOT EXISTS text_packs(id INTEGER PRIMARY KEY, data BLOB NOT NULL)";
// Blocks of the codes' rows (see the top of the file); schema 6 -> 7 adds and fills it.
constexpr const char* k_code_blocks_sql =
    "CREATE TABLE IF NOT EXISTS vector_code_blocks(block INTEGER PRIMARY KEY,"
    " chunk_ids BLOB NOT NULL, codes BLOB NOT NULL)";
// Files per block: a one-file change rewrites its block (~18 chunks a file on the kernel,
// so ~180 KB), and the kernel's 78,500 files make ~310 rows.
constexpr std::int64_t k_code_block_files = 256;
// The partitions of the codes (see the top of the file); schema 7 -> 8 adds the tables empty.
constexpr const char* k_partition_tables_sql = R"sql(
CREATE TABLE IF NOT EXISTS vector_centroids(partition INTEGER PRIMARY KEY, centroid BLOB NOT NULL, size INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS vector_partitions(partition INTEGER PRIMARY KEY, chunk_ids BLOB NOT NULL, codes BLOB NOT NULL);
CREATE TABLE IF NOT EXISTS vector_partition_changes(file_id INTEGER PRIMARY KEY);
CREATE TABLE IF NOT EXISTS vector_partition_dead(chunk_id INTEGER PRIMARY KEY);
)sql";
// Below this many chunks (by the largest chunk id) the scan of every code costs a few
// milliseconds and stays exact: no partitions.
constexpr std::int64_t k_partition_min_chunks = 200'000;
// The share of the codes a partitioned scan reads, nearest partitions first. Measured on the
// kernel (1.44M chunks, top 10 of `ask` against the full scan), over bench/run.py's 20 kernel
// questions: semantic 93.5% at 1/16, 95.5% at 1/8, 97% at 3/16, 98% at 1/4, and hybrid 100%
// at 1/4; over its 50 general questions at 1/4, hybrid 98.4% and semantic 91.2% (96.8% at
// 1/2). A semantic ask took 17 ms at 1/16 and 21 at 1/4 instead of 50; search.cpp says which
// mode reads the partitions.
constexpr double k_probe_share = 1.0 / 4;
// Codes per training sample per partition: enough for a majority per bit, and training
// stays well under the assignment of every code.
constexpr std::size_t k_training_codes_per_partition = 32;
// Codes given to the assignment at once (on every core; 2 MB at 256 dimensions).
constexpr std::size_t k_assignment_batch_codes = 65536;
// Bytes of partition rows built at once when partitioning (the rest is read again).
constexpr std::size_t k_partition_build_bytes = 16u << 20;
constexpr const char* k_insert_pack_sql = "INSERT INTO text_packs(data) VALUES(?1)";
constexpr const char* k_pack_by_id_sql = "SELECT data FROM text_packs WHERE id = ?1";

constexpr const char* k_insert_file_sql =
    "INSERT INTO files(path, blob_id, language, size, skip_reason) VALUES(?1, ?2, ?3, ?4, ?5)";
// The stat cache: one row per file whose blob id was computed from its content, with the stat
// data it had (see FileState). Indexes made before it existed get the table on their first
// read-write open; until then they simply have no cached stat data.
constexpr const char* k_stat_cache_sql = R"sql(
CREATE TABLE IF NOT EXISTS stat_cache(
  path TEXT PRIMARY KEY, size INTEGER NOT NULL, mtime_ns INTEGER NOT NULL,
  ctime_ns INTEGER NOT NULL, inode INTEGER NOT NULL
) WITHOUT ROWID)sql";
// The tree ids of the last complete `--rev` run (see Store::tree_ids). Indexes made by an
// earlier build of schema 3 get the table on their first read-write open.
constexpr const char* k_trees_sql =
    "CREATE TABLE IF NOT EXISTS trees(path TEXT PRIMARY KEY, tree_id TEXT NOT NULL) WITHOUT ROWID";
constexpr const char* k_insert_stat_sql =
    "INSERT OR REPLACE INTO stat_cache(path, size, mtime_ns, ctime_ns, inode)"
    " VALUES(?1, ?2, ?3, ?4, ?5)";
constexpr const char* k_insert_chunk_sql =
    "INSERT INTO chunks(file_id, start_line, end_line, kind, symbol, parent, signature, doc, text)"
    " VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)";
constexpr const char* k_insert_fts_sql =
    "INSERT INTO chunks_fts(rowid, symbol, path, doc, body) VALUES(?1, ?2, ?3, ?4, ?5)";
constexpr const char* k_delete_fts_sql =
    "INSERT INTO chunks_fts(chunks_fts, rowid, symbol, path, doc, body)"
    " VALUES('delete', ?1, ?2, ?3, ?4, ?5)";
// kasava_bm25 is bm25() with each row's length from chunk_sizes (see chunk_lengths.hpp).
constexpr const char* k_search_sql =
    "SELECT rowid, kasava_bm25(chunks_fts, ?1, ?2, ?3, ?4) AS score FROM chunks_fts"
    " WHERE chunks_fts MATCH ?5";
// The same rows of an OR query collected (CollectedRows), to be scored after the scan. Here
// and in k_bounded_search_sql the function keeps what it computes and returns 0, in WHERE: no
// row comes back to kasava, where handing each back costs ~5% of a search (110k chunks).
constexpr const char* k_collect_sql =
    "SELECT 1 FROM chunks_fts WHERE chunks_fts MATCH ?5 AND kasava_bm25_rows(chunks_fts, ?1, ?2, ?3, ?4) != 0";
// A bounded lexical search (Store::lexical_search): the terms' statistics, then the rows that
// hold a rarer term, ranked by all terms.
constexpr const char* k_term_stats_sql =
    "SELECT kasava_bm25_stats(chunks_fts) FROM chunks_fts WHERE chunks_fts MATCH ?1 LIMIT 1";
constexpr const char* k_bounded_search_sql =
    "SELECT 1 FROM chunks_fts WHERE chunks_fts MATCH ?5 AND kasava_bm25_terms(chunks_fts, ?1, ?2, ?3, ?4) != 0";
// An index of fewer chunks (by the largest chunk id) is searched by the plain query alone:
// there the bound saves little, and small indexes rank exactly as before, ties included.
constexpr std::int64_t k_bounded_search_min_chunks = 200'000;
// Terms in more than this share of the chunks are left out of the bounded query's match
// (not of its ranking).
constexpr double k_common_term_share = 0.01;
// A bounded search whose rare terms are in more than this share of the chunks first looks for
// its floor among the rows holding every term. On the kernel's 20 questions of bench/run.py
// (1.44M chunks), rare rows from 526 to 61,000 a question: ranking the rare rows first was the
// faster below ~22,000 (1.5%), the rows holding every term above.
constexpr double k_rare_rows_share = 0.015;
constexpr const char* k_insert_vector_sql = "INSERT INTO vectors(chunk_id, vector) VALUES(?1, ?2)";
constexpr const char* k_insert_codes_sql =
    "INSERT OR REPLACE INTO vector_codes(file_id, chunk_ids, codes) VALUES(?1, ?2, ?3)";
constexpr const char* k_insert_pending_sql = "INSERT INTO pending_vectors(chunk_id) VALUES(?1)";
// One statement for all ids (a JSON array), not one execution per id: a few hundred ids per
// query, where each execution's bind/step/reset costs about what its lookup does.
constexpr const char* k_vectors_by_ids_sql =
    "SELECT v.chunk_id, v.vector FROM json_each(?1) j JOIN vectors v ON v.chunk_id = j.value";
// The heads of all ids at once, as vectors are read; the chunk id last (chunks_by_id relies on
// the first seven columns being those of k_chunk_by_id_sql).
constexpr const char* k_chunk_heads_by_ids_sql =
    "SELECT f.path, f.language, c.kind, c.symbol, c.parent, c.start_line, c.end_line, c.id"
    " FROM json_each(?1) j JOIN chunks c ON c.id = j.value JOIN files f ON f.id = c.file_id";
constexpr const char* k_chunk_by_id_sql =
    "SELECT f.path, f.language, c.kind, c.symbol, c.parent, c.start_line, c.end_line,"
    " c.signature, c.doc, c.text FROM chunks c JOIN files f ON f.id = c.file_id WHERE c.id = ?1";

// The FTS column values of a chunk; used for both insert and delete (see the top of the file).
std::string fts_symbol(std::string_view symbol, std::string_view parent) {
  std::string value(symbol);
  if (!parent.empty()) {
    value += ' ';
    value += parent;
  }
  return value;
}

std::string fts_doc(std::string_view doc, std::string_view signature) {
  std::string value(doc);
  if (!signature.empty()) {
    value += '\n';
    value += signature;
  }
  return value;
}

// The first column of the first row of a one-value query (a PRAGMA, a count).
// Steps `rows` (chunk ids and codes, its first two columns) and gives `f` the ids, codes and
// count of each row the scan reads: codes of one length, the first such row's (`bytes`, set
// by that row when 0). Rows of another length, or with no chunk, are left out.
template <typename F>
void each_code_row(sqlite::Query& rows, std::size_t& bytes, F&& f) {
  while (rows.step()) {
    const auto ids = rows.column_blob(0);
    const auto codes = rows.column_blob(1);
    const std::size_t count = ids.size() / sizeof(std::int64_t);
    if (count == 0 || codes.size() % count != 0) continue;
    if (bytes == 0) bytes = codes.size() / count;
    if (codes.size() != count * bytes) continue;
    f(ids.data(), codes.data(), count);
  }
}

// The distinct ids, ascending.
std::vector<std::int64_t> sorted_ids(std::vector<std::int64_t> ids) {
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  return ids;
}

// For each of the distinct `ids`, found(i) where it is known[i] (`known` ascending), else
// missing(id). In ascending order: each lookup starts where the last one ended.
template <typename Found, typename Missing>
void look_up_sorted(const std::vector<std::int64_t>& known, const std::vector<std::int64_t>& ids,
                    Found&& found, Missing&& missing) {
  auto from = known.begin();
  for (const std::int64_t id : sorted_ids(ids)) {
    const auto at = std::lower_bound(from, known.end(), id);
    from = at;
    if (at == known.end() || *at != id) {
      missing(id);
    } else {
      found(static_cast<std::size_t>(at - known.begin()));
    }
  }
}

// The distinct ids as a JSON array, what json_each(?1) reads: ascending, so that the lookups
// it drives visit the b-tree's pages in order.
std::string id_list(const std::vector<std::int64_t>& ids) {
  std::string list = "[";
  for (const std::int64_t id : sorted_ids(ids)) {
    if (list.size() > 1) list += ',';
    list += std::to_string(id);
  }
  list += ']';
  return list;
}

std::int64_t query_int(sqlite::Database& db, const char* sql) {
  auto query = db.query(sql);
  return query.step() ? query.column_int64(0) : 0;
}

// Said of a file SQLite finds malformed (truncated, overwritten): only a rebuild repairs it.
constexpr const char* k_damage_hint = " (the index is damaged: run `kasava verify --repair`)";

// SQLite's message, and for damage the hint.
std::string reason(const sqlite::Error& error) {
  return std::string(error.what()) + (sqlite::is_corruption(error.code()) ? k_damage_hint : "");
}

bool is_empty_database(sqlite::Database& db) {
  return query_int(db, "PRAGMA application_id") == 0 &&
         query_int(db, "SELECT count(*) FROM sqlite_schema") == 0;
}

// Makes one write (put_file, remove_file, put_vectors) all or nothing when something throws.
// Outside a transaction it is a savepoint, rolled back. Inside one (begin()), a savepoint
// would cost a full-text flush: FTS5 writes its pending terms out as a new segment at every
// savepoint, so a first index made a segment per file and spent its time merging them
// (CPython's Lib: 2,228 segments, 146 merges, 11.5G of 78.6G instructions). There a write
// that throws marks the transaction failed instead (`failed`): commit() refuses it, and the
// caller rolls the whole transaction back.
class WriteScope {
public:
  // `counts`: the term counts this write changes, dropped with its savepoint (a transaction's
  // are dropped by rollback()).
  WriteScope(sqlite::Database& db, bool in_transaction, bool& failed, TermDocs& counts)
      : m_db(db), m_failed(failed), m_counts(counts), m_savepoint(!in_transaction) {
    if (m_savepoint) m_db.exec("SAVEPOINT store_write");
  }
  ~WriteScope() {
    if (m_released) return;
    if (!m_savepoint) {
      m_failed = true;
      return;
    }
    m_counts.discard();
    try {
      m_db.exec("ROLLBACK TO store_write; RELEASE store_write");
    } catch (const sqlite::Error&) {
      // Already unwinding from the error that matters; SQLite may have rolled back itself.
    }
  }
  WriteScope(const WriteScope&) = delete;
  WriteScope& operator=(const WriteScope&) = delete;

  void release() {
    if (m_savepoint) m_db.exec("RELEASE store_write");
    m_released = true;
  }

private:
  sqlite::Database& m_db;
  bool& m_failed;
  TermDocs& m_counts;
  bool m_savepoint;
  bool m_released = false;
};

// Brackets the FTS5 write of one row for the kept term counts (term_docs.hpp), also when
// the write throws.
class CountedRow {
public:
  CountedRow(TermDocs& counts, int sign) : m_counts(counts) { m_counts.begin_row(sign); }
  ~CountedRow() { m_counts.end_row(); }
  CountedRow(const CountedRow&) = delete;
  CountedRow& operator=(const CountedRow&) = delete;

private:
  TermDocs& m_counts;
};

} // namespace

// The history field's tables (history.cpp).
void create_history_tables(sqlite::Database& db);

// What training the codes' partitions found (Store::plan_partitions): a code's length, how many
// codes there were, the centroids, and each code's partition, in the order of vector_codes by
// file id.
struct PartitionPlan {
  std::size_t bytes = 0;
  std::size_t total = 0;
  std::vector<std::uint8_t> centroids;
  std::vector<std::uint32_t> assignment;
};

struct Store::Impl {
  // `name`: what SQLite opens, the path or a URI of it (see Store::open).
  Impl(std::string path, const std::string& name, OpenMode mode, int flags)
      : m_path(std::move(path)), m_mode(mode), m_db(name, flags), m_lengths(m_db), m_term_docs(m_db) {}

  std::string m_path;
  OpenMode m_mode;
  // The tokens this connection's FTS5 tokenizer emitted: a chunk's length is the difference
  // across its insert. Declared before the connection, which refers to it until it closes.
  TokenCount m_tokens;
  // The statistics of a bounded lexical search's terms (see lexical_search), which the
  // connection's ranking functions read and write.
  TermStats m_terms;
  // The rows of a plain lexical search, scored once all are seen (see lexical_search).
  CollectedRows m_collected;
  sqlite::Database m_db;
  ChunkLengths m_lengths;
  // The kept document frequencies of common terms: counted by the writer, written at commit.
  TermDocs m_term_docs;
  // Inside begin() … commit()/rollback(): chunk lengths are written at the commit.
  bool m_in_transaction = false;
  bool m_transaction_failed = false;  // a write of the open transaction threw (WriteScope)
  // Whether meta listing_digest is already deleted in the current transaction (see
  // forget_listing_digest).
  bool m_digest_forgotten = false;

  // Every write to files, chunks or vectors makes the indexer's listing digest stale (see
  // core/index/indexer.cpp): delete it, once per transaction. The same write makes the index
  // partial until the run that makes it calls mark_complete().
  void forget_listing_digest() {
    if (m_digest_forgotten) return;
    m_db.query("DELETE FROM meta WHERE key = 'listing_digest'").run();
    write_meta("partial", "1");
    m_digest_forgotten = true;
  }

  // Blocks of vector_code_blocks whose files' codes changed in this transaction.
  std::set<std::int64_t> m_dirty_code_blocks;

  // A partitioned index has no blocks: the partitions replace them (see the top of the file).
  void codes_changed(std::int64_t file_id) {
    if (!m_partitioned) m_dirty_code_blocks.insert(file_id / k_code_block_files);
  }

  // The blocks of every file's codes, built again (when the partitions are dropped).
  void rebuild_all_code_blocks() {
    m_db.exec("DELETE FROM vector_code_blocks");
    auto files = m_db.query("SELECT file_id FROM vector_codes");
    while (files.step()) m_dirty_code_blocks.insert(files.column_int64(0) / k_code_block_files);
    flush_code_blocks();
  }

  // Whether the codes are partitioned (vector_centroids has rows), and the settings of
  // set_partitioning.
  bool m_partitioned = false;
  std::int64_t m_partition_min_chunks = k_partition_min_chunks;
  double m_probe_share = k_probe_share;
  std::shared_ptr<const IndexSnapshot> m_snapshot;  // use_snapshot

  // Before a file's row of vector_codes is written or deleted: when the codes are partitioned,
  // the chunk ids it held are dead in the partitions and the file's row is read beside them
  // (see the top of the file).
  void codes_will_change(std::int64_t file_id) {
    if (!m_partitioned) return;
    auto old = m_db.query("SELECT chunk_ids FROM vector_codes WHERE file_id = ?1");
    old.bind(1, file_id);
    if (old.step()) {
      const auto ids = old.column_blob(0);
      for (std::size_t i = 0; i + sizeof(std::int64_t) <= ids.size(); i += sizeof(std::int64_t)) {
        std::int64_t id = 0;
        std::memcpy(&id, ids.data() + i, sizeof id);
        m_db.query("INSERT OR IGNORE INTO vector_partition_dead(chunk_id) VALUES(?1)").bind(1, id).run();
      }
    }
    m_db.query("INSERT OR IGNORE INTO vector_partition_changes(file_id) VALUES(?1)").bind(1, file_id).run();
  }

  void load_partitioned() {
    m_partitioned = m_db.has_table("vector_centroids") &&
                    query_int(m_db, "SELECT count(*) FROM (SELECT 1 FROM vector_centroids LIMIT 1)") > 0;
  }

  void clear_partitions() {
    m_db.exec(
        "DELETE FROM vector_centroids; DELETE FROM vector_partitions;"
        " DELETE FROM vector_partition_changes; DELETE FROM vector_partition_dead;"
        " DELETE FROM meta WHERE key IN ('partitioned_files', 'partitioned_chunks')");
  }

  // Partitions every code anew (see the top of the file) and empties the blocks, in the open
  // transaction; false (and nothing changed) when there are fewer codes than the threshold.
  bool build_partitions();
  // Its two halves: the training, which reads only (nullopt: fewer codes than `min_chunks`),
  // and the writing, in the open transaction (false, and nothing changed, when the plan is
  // not of the codes there are).
  std::optional<PartitionPlan> plan_partitions(std::int64_t min_chunks);
  bool write_partitions(const PartitionPlan& plan);

  // The rows of codes of the files in file id order, each usable one given to `f` (the
  // scan's rules). Not the blocks: a partitioned index has none.
  template <typename F>
  void for_each_code_row(std::size_t& bytes, F&& f) {
    auto rows = m_db.query("SELECT chunk_ids, codes FROM vector_codes ORDER BY file_id");
    each_code_row(rows, bytes, f);
  }

  // The partitioned scan of nearest_codes, reading the nearest partitions that hold `share`
  // of the codes (all of them from 1); false (nothing scanned) when the codes are not
  // partitioned, or their centroids are not of the query's length.
  template <typename Nearest>
  bool scan_partitions(std::span<const std::uint8_t> code, double share, Nearest& nearest);

  // A count kept in meta; 0 when absent or not a number.
  std::int64_t meta_count(std::string_view key) {
    const std::string value = read_meta(key).value_or("");
    std::int64_t count = 0;
    const auto [end, error] = std::from_chars(value.data(), value.data() + value.size(), count);
    return error == std::errc() && end == value.data() + value.size() ? count : 0;
  }

  // Rebuilds the changed blocks from vector_codes (see the top of the file).
  void flush_code_blocks() {
    for (const std::int64_t block : m_dirty_code_blocks) rebuild_code_block(block);
    m_dirty_code_blocks.clear();
  }

  void rebuild_code_block(std::int64_t block) {
    std::vector<std::uint8_t> ids;
    std::vector<std::uint8_t> codes;
    std::size_t bytes = 0;
    auto rows = m_db.query(
        "SELECT chunk_ids, codes FROM vector_codes WHERE file_id >= ?1 AND file_id < ?2"
        " ORDER BY file_id");
    rows.bind(1, block * k_code_block_files).bind(2, (block + 1) * k_code_block_files);
    // Rows the scan of vector_codes would skip are left out here too.
    each_code_row(rows, bytes, [&](const std::uint8_t* row_ids, const std::uint8_t* row_codes, std::size_t count) {
      ids.insert(ids.end(), row_ids, row_ids + count * sizeof(std::int64_t));
      codes.insert(codes.end(), row_codes, row_codes + count * bytes);
    });
    if (ids.empty()) {
      m_db.query("DELETE FROM vector_code_blocks WHERE block = ?1").bind(1, block).run();
      return;
    }
    m_db.query("INSERT OR REPLACE INTO vector_code_blocks(block, chunk_ids, codes) VALUES(?1, ?2, ?3)")
        .bind(1, block)
        .bind_blob(2, ids.data(), ids.size())
        .bind_blob(3, codes.data(), codes.size())
        .run();
  }

  // From how many chunks lexical_search tries the bound (set_bounded_search).
  std::int64_t m_bounded_min_chunks = k_bounded_search_min_chunks;
  // Whether the trees table is already emptied in the current transaction (see forget_trees).
  bool m_trees_forgotten = false;

  // Every write to files makes the stored tree ids say something the files may no longer be
  // (see Store::tree_ids): empty the table, once per transaction. The indexer writes the rows
  // again at the end of a complete `--rev` run.
  void forget_trees() {
    if (m_trees_forgotten) return;
    m_db.query("DELETE FROM trees").run();
    m_trees_forgotten = true;
  }

  // Runs f; an SQLite failure becomes util::Failure("<doing> index 'path': <reason>").
  template <typename F>
  decltype(auto) guarded(const char* doing, F&& f) {
    try {
      return f();
    } catch (const sqlite::Error& error) {
      throw util::Failure(std::string(doing) + " index '" + m_path + "': " + reason(error));
    }
  }

  // The kept document frequency (term_docs.hpp) of each quoted term of an OR query, or -1
  // for a term not kept or that FTS5 makes more or fewer than one index term of.
  std::vector<std::int64_t> kept_docs(const std::vector<std::string>& quoted) {
    std::vector<std::int64_t> docs(quoted.size(), -1);
    if (!m_db.has_table("term_docs")) return docs;
    std::vector<std::string> texts;
    for (const auto& term : quoted) {
      std::string text;  // inside the quotes, a doubled quote is one
      for (std::size_t i = 1; i + 1 < term.size(); ++i) {
        text += term[i];
        if (term[i] == '"') ++i;
      }
      texts.push_back(std::move(text));
    }
    const auto terms = query_terms_of(m_db.get(), texts);
    if (!terms) return docs;
    for (std::size_t i = 0; i < terms->size() && i < docs.size(); ++i) {
      if ((*terms)[i].size() != 1) continue;
      if (const auto kept = TermDocs::docs(m_db, (*terms)[i].front())) docs[i] = *kept;
    }
    return docs;
  }

  // The scope of one write: a savepoint outside a transaction, else the transaction's flag.
  WriteScope write_scope() { return WriteScope(m_db, m_in_transaction, m_transaction_failed, m_term_docs); }

  // Checks that the file is a kasava index of our schema version; creates the schema in an
  // empty file when writing.
  util::Status prepare() {
    const std::string quoted = "'" + m_path + "'";
    if (is_empty_database(m_db)) {  // the first read: a file that is not SQLite fails here
      if (m_mode == OpenMode::read_only) {
        return util::Error{"no index at " + quoted + ": run `kasava index` first"};
      }
      create_schema();
    }
    if (query_int(m_db, "PRAGMA application_id") != k_application_id || !m_db.has_table("meta")) {
      return util::Error{"opening index " + quoted + ": file is not a kasava index"};
    }
    const auto version = read_meta("schema_version");
    if (!version) return util::Error{"opening index " + quoted + ": file is not a kasava index"};
    bool readable_older = false;
    for (int older = k_oldest_readable_schema_version; older < k_schema_version; ++older) {
      readable_older = readable_older || *version == std::to_string(older);
    }
    if (*version != std::to_string(k_schema_version) && !readable_older) {
      return util::Error{"index " + quoted + " was built by another version of kasava (schema " +
                         *version + ", expected " + std::to_string(k_schema_version) +
                         "): rebuild it with `kasava index --rebuild`"};
    }
    if (m_mode == OpenMode::read_write) {
      // WAL: readers (`ask` while `index` runs) never block and never see a half-written
      // commit; NORMAL sync is durable to the last checkpoint, which a rebuildable cache needs.
      // Foreign keys are not enforced (SQLite's default): a statement that checks them
      // (deleting chunks or files, replacing a row of vector codes) runs in a statement
      // savepoint, and FTS5 writes out its pending terms as a new segment at each savepoint:
      // a segment per file, and merges of them, took 11.5G of 78.6G instructions indexing
      // CPython's Lib. The REFERENCES clauses say what belongs to what; delete_file removes a
      // file's rows children first, and verify reports rows that belong to nothing.
      m_db.exec("PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL");
      if (sqlite3_db_readonly(m_db.get(), "main") == 0) {
        if (!m_db.has_table("stat_cache")) m_db.exec(k_stat_cache_sql);
        if (!m_db.has_table("trees")) m_db.exec(k_trees_sql);
        // The history field (history.cpp) comes without a new schema number: an older kasava
        // neither reads nor updates it, and its meta history_tip tells the next run what to read.
        if (!m_db.has_table("history_fts")) create_history_tables(m_db);
        if (readable_older) upgrade_schema(std::stoi(*version));
        load_partitioned();
        m_term_docs.load();
      }
    }
    m_db.exec(m_mode == OpenMode::read_only ? k_read_cache_size_pragma : k_cache_size_pragma);
    return util::ok_status();
  }

  // Schema 3 → 4: the table of text packs; rows of schema 3 stay readable as they are.
  // Schema 4 → 5: the table of chunk lengths, filled from FTS5's own (its docsize table:
  // one pass, no text read) so that ranking an upgraded index is as fast as a new one.
  // Schema 5 → 6: nothing to convert (LZ77 packs stay, their references say so).
  // Schema 6 → 7: the blocks of vector codes, built from the per-file rows.
  // Schema 7 → 8: the tables of the codes' partitions, empty until the next index run.
  // Schema 8 → 9: the table of kept term counts, empty until the next index run fills it.
  void upgrade_schema(int version) {
    in_write_transaction([&] {
      if (version < 5) upgrade_to_chunk_sizes();
      if (version < 7) {
        m_db.exec(k_code_blocks_sql);
        {
          auto files = m_db.query("SELECT file_id FROM vector_codes");
          while (files.step()) codes_changed(files.column_int64(0));
        }
        flush_code_blocks();
      }
      if (version < 8) m_db.exec(k_partition_tables_sql);
      if (version < 9) m_db.exec(k_term_docs_sql);
      write_meta("schema_version", std::to_string(k_schema_version));
      m_db.exec(("PRAGMA user_version=" + std::to_string(k_schema_version)).c_str());
    });
  }

  // Schemas 3 and 4 → 5 (see upgrade_schema), in its transaction.
  void upgrade_to_chunk_sizes() {
    m_db.exec(k_text_packs_sql);
    m_db.exec(k_chunk_sizes_sql);
    {
      auto sizes = m_db.query("SELECT id, sz FROM chunks_fts_docsize");
      while (sizes.step()) {
        const auto sz = sizes.column_blob(1);
        const auto total = docsize_total(sz.data(), sz.size());
        if (total) m_lengths.record(sizes.column_int64(0), *total);
      }
    }
    m_lengths.flush();
  }

  // Runs f in a write transaction, rolled back when it throws.
  template <typename F>
  void in_write_transaction(F&& f) {
    m_db.exec("BEGIN IMMEDIATE");
    try {
      f();
      m_db.exec("COMMIT");
    } catch (...) {
      if (sqlite3_get_autocommit(m_db.get()) == 0) {
        sqlite3_exec(m_db.get(), "ROLLBACK", nullptr, nullptr, nullptr);
      }
      throw;
    }
  }

  void create_schema() {
    // Both only take effect before the first table exists. 8 KiB pages waste less space
    // than 4 KiB around chunk rows of one to a few KiB (measured: about 7% smaller files);
    // incremental auto-vacuum lets optimize() give back the pages an FTS merge frees.
    m_db.exec("PRAGMA page_size=8192; PRAGMA auto_vacuum=INCREMENTAL");
    m_db.exec("PRAGMA journal_mode=WAL");
    in_write_transaction([&] {
      // Another process may have created it while we waited for the write lock.
      if (query_int(m_db, "SELECT count(*) FROM sqlite_schema") == 0) {
        m_db.exec(k_schema_sql);
        const std::string pragmas = "PRAGMA application_id=" + std::to_string(k_application_id) +
                                    "; PRAGMA user_version=" + std::to_string(k_schema_version);
        m_db.exec(pragmas.c_str());
        write_meta("schema_version", std::to_string(k_schema_version));
      }
    });
  }

  std::optional<std::string> read_meta(std::string_view key) {
    auto query = m_db.query("SELECT value FROM meta WHERE key = ?1");
    query.bind(1, key);
    if (!query.step()) return std::nullopt;
    return std::string(query.column_text(0));
  }

  void write_meta(std::string_view key, std::string_view value) {
    m_db.query(
            "INSERT INTO meta(key, value) VALUES(?1, ?2)"
            " ON CONFLICT(key) DO UPDATE SET value = excluded.value")
        .bind(1, key)
        .bind(2, value)
        .run();
  }

  // Decoded packs by id, for the reads of one call: a file's chunks share a few packs.
  using PackCache = std::unordered_map<std::int64_t, std::string>;

  // The text, signature and doc of the chunk in `row` (chunk `chunk_id`), whose columns at
  // `signature_column`, `doc_column` and `text_column` are as stored: a reference to a pack
  // (a BLOB `text`) or the strings themselves (see the top of the file). Sets `pack_id` to
  // the pack's id, or 0. A reference that does not lead to its strings is a Failure.
  ChunkStrings chunk_strings(const sqlite::Query& row, int signature_column, int doc_column,
                             int text_column, std::int64_t chunk_id, PackCache& cache,
                             std::int64_t* pack_id = nullptr) {
    if (pack_id != nullptr) *pack_id = 0;
    if (!row.column_is_blob(text_column)) {
      return ChunkStrings{std::string(row.column_text(text_column)),
                          std::string(row.column_text(signature_column)),
                          std::string(row.column_text(doc_column))};
    }
    const auto reference = decode_reference(row.column_blob(text_column));
    if (!reference) throw damaged_text(chunk_id, "its reference is malformed");
    if (pack_id != nullptr) *pack_id = reference->pack_id;
    // A pack is decoded up to the end of the first chunk wanted from it (search results are
    // single chunks), and whole when a later chunk needs more.
    const std::size_t needed = bytes_needed(reference->place);
    auto found = cache.find(reference->pack_id);
    if (found == cache.end() || found->second.size() < needed) {
      auto query = m_db.query(k_pack_by_id_sql);
      query.bind(1, reference->pack_id);
      if (!query.step()) throw damaged_text(chunk_id, "its pack is missing");
      auto decoded = unpack(query.column_blob(0), reference->codec,
                            found == cache.end() ? needed : k_max_pack_bytes);
      if (!decoded) throw damaged_text(chunk_id, decoded.error().message);
      found = cache.insert_or_assign(reference->pack_id, std::move(decoded).value()).first;
    }
    auto strings = strings_at(found->second, reference->place);
    if (!strings) throw damaged_text(chunk_id, "it lies outside its pack");
    return std::move(*strings);
  }

  util::Failure damaged_text(std::int64_t chunk_id, const std::string& why) const {
    return util::Failure("reading index '" + m_path + "': the text of chunk " +
                         std::to_string(chunk_id) + " is damaged (" + why +
                         "): rebuild it with `kasava index --rebuild`");
  }

  // Deletes a file's row, its chunks, their text packs, FTS rows and vectors.
  void delete_file(std::string_view file_path) {
    std::int64_t file_id = 0;
    {
      auto query = m_db.query("SELECT id FROM files WHERE path = ?1");
      query.bind(1, file_path);
      if (!query.step()) return;
      file_id = query.column_int64(0);
    }
    std::unordered_set<std::int64_t> packs;
    {
      PackCache cache;
      auto chunks = m_db.query(
          "SELECT id, symbol, parent, signature, doc, text FROM chunks WHERE file_id = ?1");
      chunks.bind(1, file_id);
      while (chunks.step()) {
        const std::int64_t chunk_id = chunks.column_int64(0);
        std::int64_t pack_id = 0;
        const ChunkStrings strings = chunk_strings(chunks, 3, 4, 5, chunk_id, cache, &pack_id);
        if (pack_id != 0) packs.insert(pack_id);
        const CountedRow counted(m_term_docs, -1);
        m_db.query(k_delete_fts_sql)
            .bind(1, chunk_id)
            .bind(2, fts_symbol(chunks.column_text(1), chunks.column_text(2)))
            .bind(3, file_path)
            .bind(4, fts_doc(strings.doc, strings.signature))
            .bind(5, strings.text)
            .run();
      }
    }
    for (const std::int64_t pack_id : packs) {
      m_db.query("DELETE FROM text_packs WHERE id = ?1").bind(1, pack_id).run();
    }
    m_db.query("DELETE FROM vectors WHERE chunk_id IN (SELECT id FROM chunks WHERE file_id = ?1)")
        .bind(1, file_id)
        .run();
    codes_will_change(file_id);
    m_db.query("DELETE FROM vector_codes WHERE file_id = ?1").bind(1, file_id).run();
    codes_changed(file_id);
    m_db.query(
            "DELETE FROM pending_vectors WHERE chunk_id IN (SELECT id FROM chunks WHERE file_id = ?1)")
        .bind(1, file_id)
        .run();
    m_db.query("DELETE FROM chunks WHERE file_id = ?1").bind(1, file_id).run();
    m_db.query("DELETE FROM files WHERE id = ?1").bind(1, file_id).run();
    m_db.query("DELETE FROM stat_cache WHERE path = ?1").bind(1, file_path).run();
  }
};

Store::Store(std::unique_ptr<Impl> impl) : m_impl(std::move(impl)) {}
Store::~Store() = default;

util::Result<std::unique_ptr<Store>> Store::open(const std::string& path, OpenMode mode) {
  namespace fs = std::filesystem;
  std::error_code error;
  const std::string quoted = "'" + path + "'";
  const bool exists = path != ":memory:" && fs::exists(path, error);
  // SQLite would wait forever for a writer to open a FIFO; a directory or a device is no index.
  if (exists && !fs::is_regular_file(path, error)) {
    return util::Error{"index " + quoted + " is not a regular file"};
  }
  std::string name = path;
  int flags = SQLITE_OPEN_NOMUTEX;  // one Store per thread: no need for SQLite's mutexes
  bool query_only = false;
  if (mode == OpenMode::read_only) {
    if (!exists) return util::Error{"no index at " + quoted + ": run `kasava index` first"};
    // Opened so that it needs no write access and leaves no -wal or -shm file behind (see
    // sqlite::reader_opening): another user's index, a read-only folder, a mounted artifact.
    try {
      sqlite::ReaderOpening opening = sqlite::reader_opening(path);
      name = std::move(opening.name);
      flags |= opening.flags;
      query_only = opening.kind == sqlite::ReaderKind::shared;
    } catch (const sqlite::Error& failure) {
      return util::Error{"opening index " + quoted + ": " + failure.what()};
    }
  } else {
    // SQLite would open a file it may not write read-only, and fail at the first write.
    if (exists && ::faccessat(AT_FDCWD, path.c_str(), W_OK, AT_EACCESS) != 0) {
      return util::Error{"opening index " + quoted + " for writing: " + std::strerror(errno)};
    }
    const fs::path parent = fs::path(path).parent_path();
    if (!parent.empty()) {
      fs::create_directories(parent, error);
      if (error) {
        return util::Error{"creating directory '" + parent.string() + "': " + error.message()};
      }
    }
    flags |= SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE;
  }

  const std::string context = "opening index " + quoted + ": ";
  try {
    auto impl = std::make_unique<Impl>(path, name, mode, flags);
    sqlite3_busy_timeout(impl->m_db.get(), k_busy_timeout_ms);
    if (query_only) impl->m_db.exec("PRAGMA query_only=1");
    // A writer sees the terms of the rows it adds and deletes (term_docs.hpp).
    TermTap* tap = mode == OpenMode::read_write && !query_only ? impl->m_term_docs.tap() : nullptr;
    if (const std::string failure = register_tokenizer(impl->m_db.get(), &impl->m_tokens, tap);
        !failure.empty()) {
      return util::Error{context + failure};
    }
    if (const std::string failure =
            register_ranking(impl->m_db.get(), &impl->m_lengths, &impl->m_terms, &impl->m_collected);
        !failure.empty()) {
      return util::Error{context + failure};
    }
    if (auto status = impl->prepare(); !status) return status.error();
    return std::unique_ptr<Store>(new Store(std::move(impl)));
  } catch (const sqlite::Error& failure) {
    return util::Error{context + reason(failure)};
  }
}

bool Store::may_write(const std::string& path) {
  return sqlite::may_write_with_companions(path);
}

bool is_damage(const util::Error& error) {
  return error.message.find(k_damage_hint) != std::string::npos;
}

namespace {

// Deletes the WAL, shared-memory and rollback journal files of the database at `path`.
util::Status remove_companions(const std::string& path) {
  for (const char* suffix : {"-wal", "-shm", "-journal"}) {
    const std::string file = path + suffix;
    std::error_code error;
    std::filesystem::remove(file, error);
    if (error) return util::Error{"removing '" + file + "': " + error.message()};
  }
  return util::ok_status();
}

} // namespace

util::Status Store::remove(const std::string& path) {
  for (const char* suffix : {"", "-wal", "-shm", "-journal"}) {
    const std::string file = path + suffix;
    std::error_code error;
    std::filesystem::remove(file, error);
    if (error) return util::Error{"removing '" + file + "': " + error.message()};
  }
  return util::ok_status();
}

util::Status Store::swap_in(const std::string& built, const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code error;
  const std::string doing = "replacing index '" + path + "': ";
  if (fs::is_regular_file(path, error)) {
    int result = SQLITE_OK;
    try {
      sqlite::Database source(built, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX);
      sqlite::Database target(path, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX);
      sqlite3_busy_timeout(target.get(), k_busy_timeout_ms);
      sqlite3_backup* backup = sqlite3_backup_init(target.get(), "main", source.get(), "main");
      if (backup == nullptr) {
        result = sqlite3_errcode(target.get());
      } else {
        // All pages in one step, one transaction. Busy: a reader recovering the WAL, or a
        // writer that takes no index lock (another kasava); wait for it as a reader would.
        for (int waited = 0; waited < k_busy_timeout_ms; waited += 20) {
          result = sqlite3_backup_step(backup, -1);
          if (result != SQLITE_BUSY && result != SQLITE_LOCKED) break;
          sqlite3_sleep(20);
        }
        sqlite3_backup_finish(backup);
      }
      if (result == SQLITE_DONE) {
        // The copy sits in the WAL, as large as the index: fold it into the file now if no
        // reader holds an older snapshot (else the last connection to close does it).
        sqlite3_busy_timeout(target.get(), 0);
        sqlite3_exec(target.get(), "PRAGMA wal_checkpoint(TRUNCATE)", nullptr, nullptr, nullptr);
      }
    } catch (const sqlite::Error&) {
      result = SQLITE_NOTADB;  // the target cannot even be opened: renamed over below
    }
    if (result == SQLITE_DONE) return remove(built);
    // Not a database (a damaged file, which nobody can be reading), or one SQLite cannot
    // write in place (a read-only file; another page size, which a WAL database cannot
    // change): replaced by a rename. Anything else (a full disk) is an error.
    if (result != SQLITE_NOTADB && result != SQLITE_CORRUPT && result != SQLITE_READONLY) {
      return util::Error{doing + sqlite3_errstr(result)};
    }
  }
  if (auto removed = remove_companions(path); !removed) return removed;
  fs::rename(built, path, error);
  if (error) return util::Error{doing + "renaming '" + built + "': " + error.message()};
  return remove(built);
}

std::optional<std::string> Store::peek_meta(const std::string& path, std::string_view key) {
  std::error_code error;
  if (!std::filesystem::is_regular_file(path, error)) return std::nullopt;
  try {
    const sqlite::ReaderOpening opening = sqlite::reader_opening(path);
    sqlite::Database db(opening.name, opening.flags);
    sqlite3_busy_timeout(db.get(), k_busy_timeout_ms);
    if (opening.kind == sqlite::ReaderKind::shared) db.exec("PRAGMA query_only=1");
    if (query_int(db, "PRAGMA application_id") != k_application_id || !db.has_table("meta")) {
      return std::nullopt;
    }
    auto query = db.query("SELECT value FROM meta WHERE key = ?1");
    query.bind(1, key);
    if (!query.step()) return std::nullopt;
    return std::string(query.column_text(0));
  } catch (const sqlite::Error&) {  // not SQLite, or unreadable
    return std::nullopt;
  }
}

std::optional<int> Store::schema_version(const std::string& path) {
  const auto version = peek_meta(path, "schema_version");
  if (!version) return std::nullopt;
  try {
    return std::stoi(*version);
  } catch (const std::exception&) {  // a version that is no number
    return std::nullopt;
  }
}

const std::string& Store::path() const {
  return m_impl->m_path;
}

sqlite::Database& Store::database() const {
  return m_impl->m_db;
}

std::optional<std::string> Store::meta(std::string_view key) const {
  return m_impl->guarded("reading", [&] { return m_impl->read_meta(key); });
}

bool Store::marked_complete() const {
  return !meta("partial").has_value();
}

void Store::mark_complete() {
  if (marked_complete()) return;
  m_impl->guarded("writing", [&] { m_impl->m_db.query("DELETE FROM meta WHERE key = 'partial'").run(); });
  m_impl->m_digest_forgotten = false;  // the next write marks it partial again
}

void Store::set_meta(std::string_view key, std::string_view value) {
  m_impl->guarded("writing", [&] { m_impl->write_meta(key, value); });
  if (key == "listing_digest") m_impl->m_digest_forgotten = false;
}

std::map<std::string, FileState> Store::file_states() const {
  return m_impl->guarded("reading", [&] {
    // Two plain scans rather than a join in path order: that cost two b-tree lookups per
    // file (the path index, then the row; 10,000 files: 20M instructions of 37M in all, now
    // 9M), and in a git work tree the stat cache is mostly empty.
    std::map<std::string, FileState> states;
    auto files = m_impl->m_db.query("SELECT path, blob_id, skip_reason FROM files");
    while (files.step()) {
      // Rows are mostly in path order (a run writes files in listing order): the hint makes
      // those insertions constant time, and the others are placed by the map as usual.
      states.emplace_hint(states.end(), std::string(files.column_text(0)),
                          FileState{std::string(files.column_text(1)), std::string(files.column_text(2))});
    }
    // An index made before the stat cache, opened read-only, has no stat_cache table yet.
    if (!m_impl->m_db.has_table("stat_cache")) return states;
    auto stats = m_impl->m_db.query("SELECT path, size, mtime_ns, ctime_ns, inode FROM stat_cache");
    while (stats.step()) {
      const auto found = states.find(std::string(stats.column_text(0)));
      if (found == states.end()) continue;
      FileState& state = found->second;
      state.size = static_cast<std::uint64_t>(stats.column_int64(1));
      state.mtime_ns = stats.column_int64(2);
      state.ctime_ns = stats.column_int64(3);
      state.inode = static_cast<std::uint64_t>(stats.column_int64(4));
    }
    return states;
  });
}

void Store::begin() {
  // IMMEDIATE takes the write lock now (waiting up to the busy timeout) rather than failing
  // halfway through a batch when another writer got there first.
  m_impl->guarded("writing", [&] { m_impl->m_db.exec("BEGIN IMMEDIATE"); });
  m_impl->m_digest_forgotten = false;
  m_impl->m_trees_forgotten = false;
  m_impl->m_in_transaction = true;
  m_impl->m_transaction_failed = false;
}

Store::ReadSnapshot::ReadSnapshot(const Store& store) : m_store(store) {
  // Only outside a transaction; a snapshot that cannot start leaves reads as they were.
  if (sqlite3_get_autocommit(store.m_impl->m_db.get()) == 0) return;
  m_open = sqlite3_exec(store.m_impl->m_db.get(), "BEGIN", nullptr, nullptr, nullptr) == SQLITE_OK;
}

Store::ReadSnapshot::~ReadSnapshot() {
  if (m_open) sqlite3_exec(m_store.m_impl->m_db.get(), "COMMIT", nullptr, nullptr, nullptr);
}

void Store::commit() {
  m_impl->guarded("writing", [&] {
    if (m_impl->m_transaction_failed) {
      throw util::Failure("writing index '" + m_impl->m_path +
                          "': a write of this transaction failed; it must be rolled back");
    }
    m_impl->m_lengths.flush();
    m_impl->m_term_docs.flush();
    m_impl->flush_code_blocks();
    m_impl->m_db.exec("COMMIT");
  });
  m_impl->m_in_transaction = false;
}

void Store::rollback() {
  // Tolerates "no transaction": rollback runs on error paths where SQLite may already have
  // rolled back on its own.
  m_impl->m_digest_forgotten = false;  // the delete, if any, is undone too
  m_impl->m_trees_forgotten = false;
  m_impl->m_in_transaction = false;
  m_impl->m_transaction_failed = false;
  m_impl->m_lengths.discard();
  m_impl->m_term_docs.discard();
  m_impl->m_dirty_code_blocks.clear();
  if (sqlite3_get_autocommit(m_impl->m_db.get()) != 0) return;
  m_impl->guarded("writing", [&] { m_impl->m_db.exec("ROLLBACK"); });
}

void Store::put_file(const FileRecord& record, const std::vector<types::Chunk>& chunks,
                     const std::vector<QuantizedVector>& vectors, const PackedTexts& texts) {
  if (!vectors.empty() && vectors.size() != chunks.size()) {
    throw util::Failure("writing index '" + m_impl->m_path + "': " + record.path + " has " +
                        std::to_string(chunks.size()) + " chunks but " +
                        std::to_string(vectors.size()) + " vectors");
  }
  if (!texts.entries.empty() && texts.entries.size() != chunks.size()) {
    throw util::Failure("writing index '" + m_impl->m_path + "': " + record.path + " has " +
                        std::to_string(chunks.size()) + " chunks but packed texts of " +
                        std::to_string(texts.entries.size()));
  }
  const PackedTexts packed_here =
      texts.entries.empty() && record.skip_reason.empty() ? pack_texts(chunks) : PackedTexts{};
  const PackedTexts& strings = texts.entries.empty() ? packed_here : texts;
  m_impl->guarded("writing", [&] {
    auto& db = m_impl->m_db;
    WriteScope scope = m_impl->write_scope();
    m_impl->forget_listing_digest();
    m_impl->forget_trees();
    m_impl->delete_file(record.path);
    db.query(k_insert_file_sql)
        .bind(1, record.path)
        .bind(2, record.blob_id)
        .bind(3, record.language)
        .bind(4, static_cast<std::int64_t>(record.size))
        .bind(5, record.skip_reason)
        .run();
    const std::int64_t file_id = db.last_insert_id();
    if (record.mtime_ns != 0) {
      db.query(k_insert_stat_sql)
          .bind(1, record.path)
          .bind(2, static_cast<std::int64_t>(record.size))
          .bind(3, record.mtime_ns)
          .bind(4, record.ctime_ns)
          .bind(5, static_cast<std::int64_t>(record.inode))
          .run();
    }
    if (record.skip_reason.empty()) {
      std::vector<std::int64_t> chunk_ids;
      std::vector<std::uint8_t> codes;
      if (!vectors.empty()) {
        chunk_ids.reserve(chunks.size());
        codes.reserve(chunks.size() * vectors.front().code.size());
      }
      std::vector<std::int64_t> pack_ids;
      pack_ids.reserve(strings.packs.size());
      for (const std::string& pack : strings.packs) {
        db.query(k_insert_pack_sql).bind_blob(1, pack.data(), pack.size()).run();
        pack_ids.push_back(db.last_insert_id());
      }
      for (std::size_t i = 0; i < chunks.size(); ++i) {
        const auto& chunk = chunks[i];
        auto insert = db.query(k_insert_chunk_sql);
        insert.bind(1, file_id)
            .bind(2, static_cast<std::int64_t>(chunk.start_line))
            .bind(3, static_cast<std::int64_t>(chunk.end_line))
            .bind(4, chunk.kind)
            .bind(5, chunk.symbol)
            .bind(6, chunk.parent);
        const PackedTexts::Entry* entry = i < strings.entries.size() ? &strings.entries[i] : nullptr;
        if (entry != nullptr && entry->packed && entry->pack < pack_ids.size()) {
          const std::string reference =
              encode_reference(TextReference{pack_ids[entry->pack], entry->place, PackCodec::zstd});
          insert.bind(7, std::string_view(""))  // '', not NULL: a default view has no data
              .bind(8, std::string_view(""))
              .bind_blob(9, reference.data(), reference.size());
        } else {
          insert.bind(7, chunk.signature).bind(8, chunk.doc).bind(9, chunk.text);
        }
        insert.run();
        const std::int64_t chunk_id = db.last_insert_id();
        const std::uint64_t tokens_before = m_impl->m_tokens.tokens;
        {
          const CountedRow counted(m_impl->m_term_docs, +1);
          db.query(k_insert_fts_sql)
              .bind(1, chunk_id)
              .bind(2, fts_symbol(chunk.symbol, chunk.parent))
              .bind(3, record.path)
              .bind(4, fts_doc(chunk.doc, chunk.signature))
              .bind(5, chunk.text)
              .run();
        }
        m_impl->m_lengths.record(chunk_id, m_impl->m_tokens.tokens - tokens_before);
        if (!vectors.empty() && vectors[i].values.empty()) {
          db.query(k_insert_pending_sql).bind(1, chunk_id).run();
        } else if (!vectors.empty()) {
          const std::vector<std::uint8_t> packed = pack_values(vectors[i]);
          db.query(k_insert_vector_sql).bind(1, chunk_id).bind_blob(2, packed.data(), packed.size()).run();
          chunk_ids.push_back(chunk_id);
          codes.insert(codes.end(), vectors[i].code.begin(), vectors[i].code.end());
        }
      }
      if (!chunk_ids.empty()) {
        m_impl->codes_will_change(file_id);
        db.query(k_insert_codes_sql)
            .bind(1, file_id)
            .bind_blob(2, chunk_ids.data(), chunk_ids.size() * sizeof(std::int64_t))
            .bind_blob(3, codes.data(), codes.size())
            .run();
        m_impl->codes_changed(file_id);
      }
    }
    if (!m_impl->m_in_transaction) {
      m_impl->m_lengths.flush();
      m_impl->m_term_docs.flush();
      m_impl->flush_code_blocks();
    }
    scope.release();
  });
}

void Store::put_vectors(const std::vector<std::int64_t>& chunk_ids,
                        const std::vector<QuantizedVector>& vectors) {
  if (chunk_ids.size() != vectors.size()) {
    throw util::Failure("writing index '" + m_impl->m_path + "': " +
                        std::to_string(chunk_ids.size()) + " chunks but " +
                        std::to_string(vectors.size()) + " vectors");
  }
  m_impl->guarded("writing", [&] {
    auto& db = m_impl->m_db;
    WriteScope scope = m_impl->write_scope();
    m_impl->forget_listing_digest();
    // The new codes of each file, appended to its row once all its vectors are in.
    std::map<std::int64_t, std::pair<std::vector<std::int64_t>, std::vector<std::uint8_t>>> added;
    for (std::size_t i = 0; i < chunk_ids.size(); ++i) {
      if (vectors[i].values.empty()) continue;
      std::int64_t file_id = 0;
      {
        auto query = db.query(
            "SELECT c.file_id FROM pending_vectors p JOIN chunks c ON c.id = p.chunk_id"
            " WHERE p.chunk_id = ?1");
        query.bind(1, chunk_ids[i]);
        if (!query.step()) continue;
        file_id = query.column_int64(0);
      }
      db.query("DELETE FROM pending_vectors WHERE chunk_id = ?1").bind(1, chunk_ids[i]).run();
      const std::vector<std::uint8_t> packed = pack_values(vectors[i]);
      db.query(k_insert_vector_sql).bind(1, chunk_ids[i]).bind_blob(2, packed.data(), packed.size()).run();
      auto& [ids, codes] = added[file_id];
      ids.push_back(chunk_ids[i]);
      codes.insert(codes.end(), vectors[i].code.begin(), vectors[i].code.end());
    }
    for (auto& [file_id, row] : added) {
      auto& [ids, codes] = row;
      auto query = db.query("SELECT chunk_ids, codes FROM vector_codes WHERE file_id = ?1");
      query.bind(1, file_id);
      if (query.step()) {
        const auto old_ids = query.column_blob(0);
        const auto old_codes = query.column_blob(1);
        std::vector<std::int64_t> merged(old_ids.size() / sizeof(std::int64_t));
        if (!merged.empty()) std::memcpy(merged.data(), old_ids.data(), merged.size() * sizeof(std::int64_t));
        merged.insert(merged.end(), ids.begin(), ids.end());
        ids = std::move(merged);
        codes.insert(codes.begin(), old_codes.begin(), old_codes.end());
      }
      m_impl->codes_will_change(file_id);
      db.query(k_insert_codes_sql)
          .bind(1, file_id)
          .bind_blob(2, ids.data(), ids.size() * sizeof(std::int64_t))
          .bind_blob(3, codes.data(), codes.size())
          .run();
      m_impl->codes_changed(file_id);
    }
    if (!m_impl->m_in_transaction) m_impl->flush_code_blocks();
    scope.release();
  });
}

std::vector<ChunkRecord> Store::pending_chunks(std::int64_t after_id, int limit) const {
  return m_impl->guarded("reading", [&] {
    std::vector<std::int64_t> ids;
    auto query = m_impl->m_db.query(
        "SELECT chunk_id FROM pending_vectors WHERE chunk_id > ?1"
        " ORDER BY chunk_id LIMIT ?2");
    query.bind(1, after_id).bind(2, static_cast<std::int64_t>(limit));
    while (query.step()) ids.push_back(query.column_int64(0));
    auto records = chunks_by_id(ids);
    std::sort(records.begin(), records.end(),
              [](const ChunkRecord& a, const ChunkRecord& b) { return a.id < b.id; });
    return records;
  });
}

void Store::put_stat(const FileRecord& record) {
  m_impl->guarded("writing", [&] {
    m_impl->m_db
        .query("INSERT OR REPLACE INTO stat_cache(path, size, mtime_ns, ctime_ns, inode)"
               " SELECT ?1, ?2, ?3, ?4, ?5 WHERE EXISTS (SELECT 1 FROM files WHERE path = ?1)")
        .bind(1, record.path)
        .bind(2, static_cast<std::int64_t>(record.size))
        .bind(3, record.mtime_ns)
        .bind(4, record.ctime_ns)
        .bind(5, static_cast<std::int64_t>(record.inode))
        .run();
  });
}

std::vector<std::pair<std::string, std::string>> Store::tree_ids() const {
  return m_impl->guarded("reading", [&] {
    std::vector<std::pair<std::string, std::string>> trees;
    // An index made before the table existed, opened read-only, has none.
    if (!m_impl->m_db.has_table("trees")) return trees;
    auto query = m_impl->m_db.query("SELECT path, tree_id FROM trees ORDER BY path");
    while (query.step()) {
      trees.emplace_back(std::string(query.column_text(0)), std::string(query.column_text(1)));
    }
    return trees;
  });
}

void Store::set_tree_ids(const std::vector<std::pair<std::string, std::string>>& trees) {
  m_impl->guarded("writing", [&] {
    auto& db = m_impl->m_db;
    WriteScope scope = m_impl->write_scope();
    db.query("DELETE FROM trees").run();
    for (const auto& [path, id] : trees) {
      db.query("INSERT OR REPLACE INTO trees(path, tree_id) VALUES(?1, ?2)")
          .bind(1, path)
          .bind(2, id)
          .run();
    }
    scope.release();
  });
  m_impl->m_trees_forgotten = false;  // a later write in this transaction empties it again
}

void Store::remove_file(std::string_view path) {
  m_impl->guarded("writing", [&] {
    WriteScope scope = m_impl->write_scope();
    m_impl->forget_listing_digest();
    m_impl->forget_trees();
    m_impl->delete_file(path);
    if (!m_impl->m_in_transaction) {
      m_impl->m_term_docs.flush();
      m_impl->flush_code_blocks();
    }
    scope.release();
  });
}

void Store::optimize() {
  m_impl->guarded("optimizing", [&] {
    // 'optimize' rewrites the index as one segment and frees the old ones' pages;
    // incremental_vacuum returns those to the file system instead of leaving the file larger.
    m_impl->m_db.exec(
        "INSERT INTO chunks_fts(chunks_fts) VALUES('optimize');"
        " PRAGMA incremental_vacuum; PRAGMA optimize");
  });
}

void Store::set_merging(Merging merging) {
  m_impl->guarded("writing", [&] {
    // 4 is FTS5's default automerge; crisismerge still bounds the segments of each level.
    m_impl->m_db.exec(merging == Merging::deferred
                          ? "INSERT INTO chunks_fts(chunks_fts, rank) VALUES('automerge', 0)"
                          : "INSERT INTO chunks_fts(chunks_fts, rank) VALUES('automerge', 4)");
  });
}

void Store::set_page_cache(std::int64_t kib) {
  m_impl->guarded("setting the page cache", [&] {
    m_impl->m_db.exec(("PRAGMA cache_size=-" + std::to_string(kib)).c_str());
    return 0;
  });
}

std::int64_t Store::data_version() const {
  return m_impl->guarded("reading", [&] { return query_int(m_impl->m_db, "PRAGMA data_version"); });
}

namespace {

// The quoted terms of an expression `"a" OR "b" OR …` (search::Query's form), each with its
// quotes; nullopt for any other form.
std::optional<std::vector<std::string>> or_terms(std::string_view expression) {
  std::vector<std::string> terms;
  std::size_t i = 0;
  while (i < expression.size()) {
    if (!terms.empty()) {
      if (expression.substr(i, 4) != " OR ") return std::nullopt;
      i += 4;
    }
    if (i >= expression.size() || expression[i] != '"') return std::nullopt;
    std::size_t end = i + 1;
    for (;;) {
      end = expression.find('"', end);
      if (end == std::string_view::npos) return std::nullopt;
      if (end + 1 < expression.size() && expression[end + 1] == '"') {
        end += 2;
        continue;
      }
      break;
    }
    terms.emplace_back(expression.substr(i, end + 1 - i));
    i = end + 1;
  }
  return terms;
}

// Binds a lexical statement's parameters (k_search_sql, k_bounded_search_sql, k_collect_sql):
// the field weights as ?1-?4, the expression as ?5.
void bind_ranking(sqlite::Query& query, const FieldWeights& weights, std::string_view expression) {
  query.bind(1, weights.symbol).bind(2, weights.path).bind(3, weights.doc).bind(4, weights.body).bind(5, expression);
}

// The best `limit` rows of a lexical statement (rowid, score: bm25's sign, lower = better),
// ordered as `ORDER BY score LIMIT n` ordered them (ties by rowid, the order FTS5 visits) and
// as hits (higher = better). BestScores rather than SQLite's sorter: each matching row cost
// an insert into an ephemeral index there; 110k-chunk synthetic tree, 10 questions: 2.1% fewer
// instructions in all, the same results.
std::vector<LexicalHit> best_rows(sqlite::Query& query, int limit) {
  BestScores best(limit);
  while (query.step()) best.offer(query.column_double(1), query.column_int64(0));
  std::vector<LexicalHit> hits;
  for (const auto& [score, id] : best.take()) hits.push_back(LexicalHit{id, -score});
  return hits;
}

// Terms of a query (indexes into its list of terms), every one of which a row must hold.
using TermGroup = std::vector<std::size_t>;

// The groups of `members` whose bounds (`bound` per term, positive) sum to at least `floor`
// while, without any one of their terms, they sum below it: a row holding those terms
// alone can score `floor` only if it holds every term of such a group. nullopt when there
// are too many members to try every group, or too many groups for one query.
std::optional<std::vector<TermGroup>> groups_reaching(const std::vector<std::size_t>& members,
                                                      const std::vector<double>& bound, double floor) {
  constexpr std::size_t k_max_members = 12;  // 4,096 groups to try
  constexpr std::size_t k_max_groups = 16;
  if (members.size() > k_max_members) return std::nullopt;
  // Sums are compared with a margin far above their rounding, toward keeping a group.
  const double margin = 1e-9 * floor;
  std::vector<TermGroup> groups;
  for (std::uint32_t mask = 1; mask < (1u << members.size()); ++mask) {
    double sum = 0.0;
    double smallest = 0.0;
    for (std::size_t m = 0; m < members.size(); ++m) {
      if ((mask & (1u << m)) == 0) continue;
      const double b = bound[members[m]];
      smallest = sum == 0.0 ? b : std::min(smallest, b);
      sum += b;
    }
    // Minimal: without its smallest bound, the group falls below the floor.
    if (sum < floor - margin || sum - smallest >= floor + margin) continue;
    if (groups.size() == k_max_groups) return std::nullopt;
    TermGroup group;
    for (std::size_t m = 0; m < members.size(); ++m) {
      if ((mask & (1u << m)) != 0) group.push_back(members[m]);
    }
    groups.push_back(std::move(group));
  }
  return groups;
}

}  // namespace

std::optional<std::vector<LexicalHit>> Store::bounded_lexical_search(
    std::string_view match_expression, const FieldWeights& weights, int limit) const {
  // MaxScore's argument, made with FTS5: a term adds at most idf × (k1 + 1) to a row's BM25
  // (its saturation), so once some page of rows is known, a row whose terms' bounds sum below
  // that page's last score cannot enter the true page. Such rows are never visited: the
  // final query matches the rows holding every term of a group whose bounds reach that score
  // (a rare term alone may be one), AND-ed with all terms so that each row found is ranked by
  // all of them (kasava_bm25_terms, the same score to the bit). The page comes first from the
  // rows holding every term, else from those holding a rarer term. Otherwise the caller runs
  // the plain query.
  const auto terms = or_terms(match_expression);
  if (!terms || terms->size() < 2) return std::nullopt;
  auto& db = m_impl->m_db;
  if (query_int(db, "SELECT max(id) FROM chunks") < m_impl->m_bounded_min_chunks) return std::nullopt;
  TermStats& stats = m_impl->m_terms;
  stats = TermStats{};
  stats.kept_docs = m_impl->kept_docs(*terms);
  {
    auto query = db.query(k_term_stats_sql);
    query.bind(1, match_expression);
    if (!query.step()) return std::vector<LexicalHit>{};  // no row holds any term
  }
  if (!stats.ready || stats.idf.size() != terms->size()) return std::nullopt;
  constexpr double k1_plus_1 = 2.2;  // kasava_bm25's k1 + 1
  const std::size_t n = terms->size();
  std::vector<double> bound(n);
  std::vector<std::size_t> all(n);
  for (std::size_t i = 0; i < n; ++i) {
    bound[i] = stats.idf[i] * k1_plus_1;
    all[i] = i;
  }
  // The best rows holding every term of one of `groups`, ranked by all terms; its expression
  // names the groups' terms first, AND-ed with the whole expression (whose phrases follow).
  // Groups of one term each, one for every term, are the plain query's rows.
  const auto search = [&](const std::vector<TermGroup>& groups) {
    const auto and_of = [&](const TermGroup& group) {
      std::string text;
      for (const std::size_t i : group) text += (text.empty() ? "" : " AND ") + (*terms)[i];
      return text;
    };
    std::string expression;
    int phrases = 0;
    for (const auto& group : groups) {
      expression += expression.empty() ? "(" : " OR ";
      expression += group.size() > 1 ? '(' + and_of(group) + ')' : and_of(group);
      phrases += static_cast<int>(group.size());
    }
    if (static_cast<std::size_t>(phrases) == n && groups.size() == n) {  // (groups are distinct)
      expression = match_expression;
      phrases = 0;
    } else if (groups.size() == 1 && groups.front() == all) {
      // A row found holds every term, whose phrases are then the terms in order: the whole
      // expression's need not be walked as well.
      expression = and_of(all);
      phrases = 0;
    } else {
      expression += ") AND (";
      expression += match_expression;
      expression += ')';
    }
    stats.first_phrase = phrases;
    stats.best.emplace(limit);
    auto query = db.query(k_bounded_search_sql);
    bind_ranking(query, weights, expression);
    while (query.step()) {
    }
    std::vector<LexicalHit> hits;
    for (const auto& [score, id] : stats.best->take()) hits.push_back(LexicalHit{id, -score});
    stats.best.reset();
    return hits;
  };
  const auto singles = [](const std::vector<std::size_t>& members) {
    std::vector<TermGroup> groups;
    for (const std::size_t i : members) groups.push_back({i});
    return groups;
  };
  // The common terms: those in more than k_common_term_share of the rows, all but the rarest
  // term. None: the plain query.
  std::size_t rarest = 0;
  for (std::size_t i = 0; i < n; ++i) {
    if (stats.matching[i] < stats.matching[rarest]) rarest = i;
  }
  std::vector<std::size_t> common, rare;
  for (std::size_t i = 0; i < n; ++i) {
    const bool is_common = i != rarest && static_cast<double>(stats.matching[i]) >
                                              k_common_term_share * static_cast<double>(stats.rows);
    (is_common ? common : rare).push_back(i);
  }
  if (common.empty()) return search(singles(all));
  // `page` is full and holds rows of `members` and `given` groups: the rows that can enter
  // the true page hold a given group or a group of members reaching its last score.
  const auto finish = [&](std::vector<LexicalHit> page, const std::vector<std::size_t>& members,
                          std::vector<TermGroup> given) {
    const double floor = page.back().score;
    auto groups = groups_reaching(members, bound, floor);
    if (!groups) {
      // Too many groups: the members with the lowest bounds, as many as sum below the floor,
      // are left out (together they cannot reach it); each of the others is a group.
      std::vector<std::size_t> by_bound = members;
      std::sort(by_bound.begin(), by_bound.end(), [&](std::size_t a, std::size_t b) {
        return bound[a] != bound[b] ? bound[a] < bound[b] : a < b;
      });
      double sum = 0.0;
      std::size_t kept = 0;
      while (kept < by_bound.size() && sum + bound[by_bound[kept]] < floor) sum += bound[by_bound[kept++]];
      groups = singles(std::vector<std::size_t>(by_bound.begin() + static_cast<std::ptrdiff_t>(kept), by_bound.end()));
    }
    // No group, or only the one already searched: the page is the true one.
    if (groups->empty() || (given.empty() && *groups == std::vector<TermGroup>{all})) return page;
    given.insert(given.end(), groups->begin(), groups->end());
    return search(given);
  };
  // The rows holding a rare term give a floor at least as high as those holding every term
  // (which they include), but when they are many, the rows holding every term give one for
  // less: FTS5 finds them by the rarest term's rows, and only they are ranked.
  std::int64_t rare_rows = 0;
  for (const std::size_t i : rare) rare_rows += stats.matching[i];
  if (static_cast<double>(rare_rows) > k_rare_rows_share * static_cast<double>(stats.rows)) {
    auto page = search({all});
    if (static_cast<int>(page.size()) >= limit) return finish(std::move(page), all, {});
  }
  auto page = search(singles(rare));
  if (static_cast<int>(page.size()) < limit) return search(singles(all));  // every row
  return finish(std::move(page), common, singles(rare));
}

util::Result<std::vector<LexicalHit>> Store::lexical_search(std::string_view match_expression,
                                                            const FieldWeights& weights,
                                                            int limit) const {
  std::vector<LexicalHit> hits;
  if (limit <= 0 || match_expression.find_first_not_of(" \t\r\n") == std::string_view::npos) {
    return hits;
  }
  try {
    m_impl->m_lengths.forget_read();
    std::optional<std::vector<LexicalHit>> bounded;
    try {
      bounded = bounded_lexical_search(match_expression, weights, limit);
    } catch (const sqlite::Error&) {
      // An expression the bound does not fit (a term FTS5 reads as no phrase): the plain
      // query answers, or reports what is wrong.
    }
    if (bounded) return std::move(*bounded);
    if (or_terms(match_expression)) {
      // Its rows are every row holding a term, which gives the terms' document frequencies
      // without kasava_bm25's second walk of each term's rows (9% of a lexical-heavy ask).
      CollectedRows& rows = m_impl->m_collected;
      rows.reset();
      auto query = m_impl->m_db.query(k_collect_sql);
      bind_ranking(query, weights, match_expression);
      while (query.step()) {
      }
      const auto best = best_collected(rows, limit);
      rows.reset();  // a large collection's memory back now, not at the next search
      for (const auto& [score, id] : best) hits.push_back(LexicalHit{id, -score});
      return hits;
    }
    auto query = m_impl->m_db.query(k_search_sql);
    bind_ranking(query, weights, match_expression);
    hits = best_rows(query, limit);
  } catch (const sqlite::Error& error) {
    return util::Error{"searching index '" + m_impl->m_path + "' for '" +
                       std::string(match_expression) + "': " + reason(error)};
  }
  return hits;
}

struct IndexSnapshot {
  // The codes as the unfiltered scan reads them: chunk ids (int64, as stored) and codes of
  // `code_bytes` each, back to back.
  std::string chunk_ids;
  std::string codes;
  std::size_t code_bytes = 0;
  // The stored vectors by chunk id: `vector_ids` ascending, vector i is
  // values[offsets[i], offsets[i + 1]).
  std::vector<std::int64_t> vector_ids;
  std::vector<std::size_t> offsets{0};
  std::string values;
  // Every chunk's head (chunks_by_id, Detail::head) by id: `head_ids` ascending, head i is
  // heads[i], its names in `names`, its file's path and language in files[heads[i].file].
  struct Head {
    std::uint32_t file = 0;
    int start_line = 0;
    int end_line = 0;
    std::uint32_t names = 0;  // kind, symbol and parent back to back from here
    std::uint32_t kind_size = 0;
    std::uint32_t symbol_size = 0;
    std::uint32_t parent_size = 0;
  };
  std::vector<std::int64_t> head_ids;
  std::vector<Head> heads;
  std::string names;
  std::vector<std::pair<std::string, std::string>> files;

  // The head of chunk `head_ids[i]`, as chunks_by_id reads it.
  ChunkRecord record(std::size_t i) const {
    const Head& head = heads[i];
    ChunkRecord record;
    record.id = head_ids[i];
    record.path = files[head.file].first;
    record.language = files[head.file].second;
    const std::string_view text(names);
    record.chunk.kind = text.substr(head.names, head.kind_size);
    record.chunk.symbol = text.substr(head.names + head.kind_size, head.symbol_size);
    record.chunk.parent = text.substr(head.names + head.kind_size + head.symbol_size, head.parent_size);
    record.chunk.start_line = head.start_line;
    record.chunk.end_line = head.end_line;
    return record;
  }
};

std::vector<ChunkRecord> Store::chunks_by_id(const std::vector<std::int64_t>& ids,
                                            Detail detail) const {
  return m_impl->guarded("reading", [&] {
    std::vector<ChunkRecord> records;
    records.reserve(ids.size());
    // The path, language, kind, names and lines: the first seven columns of both statements.
    auto read_head = [](sqlite::Query& query, std::int64_t id) {
      ChunkRecord record;
      record.id = id;
      record.path = query.column_text(0);
      record.language = query.column_text(1);
      record.chunk.kind = query.column_text(2);
      record.chunk.symbol = query.column_text(3);
      record.chunk.parent = query.column_text(4);
      record.chunk.start_line = static_cast<int>(query.column_int64(5));
      record.chunk.end_line = static_cast<int>(query.column_int64(6));
      return record;
    };
    if (detail == Detail::head) {
      if (ids.empty()) return records;
      std::vector<std::int64_t> unknown;  // to the snapshot: written since it was read
      if (const auto& snapshot = m_impl->m_snapshot) {
        look_up_sorted(
            snapshot->head_ids, ids, [&](std::size_t i) { records.push_back(snapshot->record(i)); },
            [&](std::int64_t id) { unknown.push_back(id); });
        if (unknown.empty()) return records;
      }
      // Hundreds of candidates per search: one statement over them all, not one execution
      // per id (each costs its bind, step and reset on top of two lookups).
      auto query = m_impl->m_db.query(k_chunk_heads_by_ids_sql);
      query.bind(1, id_list(m_impl->m_snapshot ? unknown : ids));
      while (query.step()) records.push_back(read_head(query, query.column_int64(7)));
      return records;
    }
    std::unordered_set<std::int64_t> seen;
    Impl::PackCache cache;
    for (const std::int64_t id : ids) {
      if (!seen.insert(id).second) continue;
      auto query = m_impl->m_db.query(k_chunk_by_id_sql);
      query.bind(1, id);
      if (!query.step()) continue;
      ChunkRecord record = read_head(query, id);
      ChunkStrings strings = m_impl->chunk_strings(query, 7, 8, 9, id, cache);
      record.chunk.signature = std::move(strings.signature);
      record.chunk.doc = std::move(strings.doc);
      record.chunk.text = std::move(strings.text);
      records.push_back(std::move(record));
    }
    return records;
  });
}

namespace {

// The best `limit` code hits seen so far by (distance, chunk id), nearest first when taken.
class NearestCodes {
public:
  NearestCodes(std::span<const std::uint8_t> code, int limit)
      : m_code(code), m_capacity(static_cast<std::size_t>(std::max(limit, 0))) {
    m_heap.reserve(m_capacity);
  }

  // `count` codes back to back with their chunk ids (int64, unaligned); those whose file
  // `skip(i)` says so are left out.
  template <typename Skip>
  void scan(const std::uint8_t* ids, const std::uint8_t* codes, std::size_t count, Skip&& skip) {
    if (m_capacity == 0) return;
    const std::size_t bytes = m_code.size();
    m_distances.resize(count);
    const std::uint16_t* distances = m_distances.data();
    util::hamming_distances(codes, count, m_code.data(), bytes, m_distances.data());
    // Nearly every code is farther than the heap's top: that test reads locals, not the heap
    // (nor the vector's data pointer, which the heap's writes could change as far as the
    // compiler knows).
    int farthest = farthest_kept();
    for (std::size_t i = 0; i < count; ++i) {
      // A block none of whose codes is near enough is passed by one vectorised test.
      if (i % k_block == 0 && i + k_block <= count) {
        std::uint16_t nearest = 0xFFFF;
        for (std::size_t j = i; j < i + k_block; ++j) nearest = std::min(nearest, distances[j]);
        if (nearest > farthest) {
          i += k_block - 1;
          continue;
        }
      }
      const int distance = distances[i];
      if (distance > farthest) continue;
      if (skip(i)) continue;
      std::int64_t chunk_id = 0;
      std::memcpy(&chunk_id, ids + i * sizeof chunk_id, sizeof chunk_id);
      const CodeHit hit{chunk_id, distance};
      if (m_heap.size() < m_capacity) {
        m_heap.push_back(hit);
        std::push_heap(m_heap.begin(), m_heap.end(), worse);
      } else if (worse(hit, m_heap.front())) {
        std::pop_heap(m_heap.begin(), m_heap.end(), worse);
        m_heap.back() = hit;
        std::push_heap(m_heap.begin(), m_heap.end(), worse);
      }
      farthest = farthest_kept();
    }
  }

  std::vector<CodeHit> take() {
    std::sort_heap(m_heap.begin(), m_heap.end(), worse);
    return std::move(m_heap);
  }

private:
  static constexpr std::size_t k_block = 32;
  // Codes farther than this cannot enter the heap: its top's distance once it is full.
  int farthest_kept() const {
    return m_heap.size() == m_capacity ? m_heap.front().distance : std::numeric_limits<int>::max();
  }
  static bool worse(const CodeHit& a, const CodeHit& b) {
    return a.distance != b.distance ? a.distance < b.distance : a.chunk_id < b.chunk_id;
  }
  std::span<const std::uint8_t> m_code;
  std::size_t m_capacity;
  std::vector<CodeHit> m_heap;  // a max-heap: its top is the one to beat
  std::vector<std::uint16_t> m_distances;
};

}  // namespace

std::optional<PartitionPlan> Store::Impl::plan_partitions(std::int64_t min_chunks) {
  PartitionPlan plan;
  std::size_t& bytes = plan.bytes;
  const auto each_block = [&](auto&& f) { for_each_code_row(bytes, f); };
  std::size_t total = 0;
  each_block([&](const std::uint8_t*, const std::uint8_t*, std::size_t count) { total += count; });
  // The largest chunk id overstates an index that changed a lot: the codes decide.
  if (total == 0 || static_cast<std::int64_t>(total) < min_chunks) return std::nullopt;
  plan.total = total;

  const int k = util::partition_count(total);
  const std::size_t wanted = static_cast<std::size_t>(k) * k_training_codes_per_partition;
  const std::size_t step = std::max<std::size_t>(1, total / wanted);
  std::vector<std::uint8_t> sample;
  std::size_t position = 0;
  each_block([&](const std::uint8_t*, const std::uint8_t* codes, std::size_t count) {
    for (std::size_t i = 0; i < count; ++i, ++position) {
      if (position % step == 0 && sample.size() < wanted * bytes) {
        sample.insert(sample.end(), codes + i * bytes, codes + (i + 1) * bytes);
      }
    }
  });
  plan.centroids = util::train_centroids(sample.data(), sample.size() / bytes, bytes, k);

  // Assigned a batch of rows at a time: a file's row is too few codes to share among threads.
  plan.assignment.reserve(total);
  std::vector<std::uint8_t> batch;
  const auto assign_batch = [&] {
    const auto part = util::assign_partitions(batch.data(), batch.size() / bytes, plan.centroids, bytes);
    plan.assignment.insert(plan.assignment.end(), part.begin(), part.end());
    batch.clear();
  };
  each_block([&](const std::uint8_t*, const std::uint8_t* codes, std::size_t count) {
    batch.insert(batch.end(), codes, codes + count * bytes);
    if (batch.size() >= k_assignment_batch_codes * bytes) assign_batch();
  });
  if (!batch.empty()) assign_batch();
  return plan;
}

bool Store::Impl::write_partitions(const PartitionPlan& plan) {
  const std::size_t bytes = plan.bytes;
  std::size_t row_bytes = bytes;  // set: rows of another length are left out, as the plan left them
  const auto each_block = [&](auto&& f) { for_each_code_row(row_bytes, f); };
  // The plan is of these codes, in this order: a plan of other codes is refused, not written.
  std::size_t total = 0;
  each_block([&](const std::uint8_t*, const std::uint8_t*, std::size_t count) { total += count; });
  if (total != plan.total || plan.assignment.size() != total) return false;
  clear_partitions();
  const std::vector<std::uint8_t>& centroids = plan.centroids;
  const std::vector<std::uint32_t>& assignment = plan.assignment;
  std::vector<std::int64_t> sizes(centroids.size() / bytes, 0);
  for (const std::uint32_t p : assignment) ++sizes[p];
  for (std::size_t p = 0; p < sizes.size(); ++p) {
    m_db.query("INSERT INTO vector_centroids(partition, centroid, size) VALUES(?1, ?2, ?3)")
        .bind(1, static_cast<std::int64_t>(p))
        .bind_blob(2, centroids.data() + p * bytes, bytes)
        .bind(3, sizes[p])
        .run();
  }

  // The rows of the partitions [first, last) at a time, within k_partition_build_bytes.
  const std::size_t entry_bytes = sizeof(std::int64_t) + bytes;
  for (std::size_t first = 0; first < sizes.size();) {
    std::size_t last = first;
    std::size_t group_bytes = 0;
    while (last < sizes.size() &&
           (last == first || group_bytes + static_cast<std::size_t>(sizes[last]) * entry_bytes <= k_partition_build_bytes)) {
      group_bytes += static_cast<std::size_t>(sizes[last]) * entry_bytes;
      ++last;
    }
    std::vector<std::vector<std::uint8_t>> ids(last - first);
    std::vector<std::vector<std::uint8_t>> codes_of(last - first);
    std::size_t at = 0;
    each_block([&](const std::uint8_t* block_ids, const std::uint8_t* codes, std::size_t count) {
      for (std::size_t i = 0; i < count; ++i, ++at) {
        const std::uint32_t p = assignment[at];
        if (p < first || p >= last) continue;
        ids[p - first].insert(ids[p - first].end(), block_ids + i * sizeof(std::int64_t),
                              block_ids + (i + 1) * sizeof(std::int64_t));
        codes_of[p - first].insert(codes_of[p - first].end(), codes + i * bytes, codes + (i + 1) * bytes);
      }
    });
    for (std::size_t p = first; p < last; ++p) {
      if (ids[p - first].empty()) continue;
      m_db.query("INSERT INTO vector_partitions(partition, chunk_ids, codes) VALUES(?1, ?2, ?3)")
          .bind(1, static_cast<std::int64_t>(p))
          .bind_blob(2, ids[p - first].data(), ids[p - first].size())
          .bind_blob(3, codes_of[p - first].data(), codes_of[p - first].size())
          .run();
    }
    first = last;
  }
  write_meta("partitioned_files", std::to_string(query_int(m_db, "SELECT count(*) FROM vector_codes")));
  write_meta("partitioned_chunks", std::to_string(total));
  m_db.exec("DELETE FROM vector_code_blocks");
  m_dirty_code_blocks.clear();
  return true;
}

bool Store::Impl::build_partitions() {
  const std::optional<PartitionPlan> plan = plan_partitions(m_partition_min_chunks);
  return plan && write_partitions(*plan);
}

template <typename Nearest>
bool Store::Impl::scan_partitions(std::span<const std::uint8_t> code, double share, Nearest& nearest) {
  if (!m_db.has_table("vector_centroids")) return false;
  const std::size_t bytes = code.size();
  std::vector<std::uint8_t> centroids;
  std::vector<std::int64_t> sizes;
  {
    auto rows = m_db.query("SELECT partition, centroid, size FROM vector_centroids ORDER BY partition");
    while (rows.step()) {
      const auto centroid = rows.column_blob(1);
      if (rows.column_int64(0) != static_cast<std::int64_t>(sizes.size()) || centroid.size() != bytes) {
        return false;
      }
      centroids.insert(centroids.end(), centroid.begin(), centroid.end());
      sizes.push_back(std::max<std::int64_t>(0, rows.column_int64(2)));
    }
  }
  if (sizes.empty()) return false;
  double total = 0;
  for (const std::int64_t size : sizes) total += static_cast<double>(size);
  const bool every = share >= 1.0;
  const double wanted = std::ceil(total * share);
  std::unordered_set<std::int64_t> dead;
  {
    auto rows = m_db.query("SELECT chunk_id FROM vector_partition_dead");
    while (rows.step()) dead.insert(rows.column_int64(0));
  }
  const auto scan_rows = [&](sqlite::Query& rows, bool skip_dead) {
    std::size_t row_bytes = bytes;  // the query's: other lengths are left out
    each_code_row(rows, row_bytes, [&](const std::uint8_t* ids, const std::uint8_t* codes, std::size_t count) {
      nearest.scan(ids, codes, count, [&](std::size_t i) {
        if (!skip_dead || dead.empty()) return false;
        std::int64_t id = 0;
        std::memcpy(&id, ids + i * sizeof id, sizeof id);
        return dead.contains(id);
      });
    });
  };
  double seen = 0;
  for (const std::uint32_t p : util::partitions_by_distance(centroids, code.data(), bytes)) {
    if (!every && seen >= wanted) break;
    seen += static_cast<double>(sizes[p]);
    auto rows = m_db.query("SELECT chunk_ids, codes FROM vector_partitions WHERE partition = ?1");
    rows.bind(1, static_cast<std::int64_t>(p));
    scan_rows(rows, true);
  }
  auto changed = m_db.query(
      "SELECT c.chunk_ids, c.codes FROM vector_partition_changes f"
      " JOIN vector_codes c ON c.file_id = f.file_id");
  scan_rows(changed, false);
  return true;
}

std::shared_ptr<const IndexSnapshot> Store::read_snapshot(std::int64_t max_chunks) const {
  return m_impl->guarded("reading", [&]() -> std::shared_ptr<const IndexSnapshot> {
    auto& db = m_impl->m_db;
    db.exec("BEGIN");
    struct End {
      sqlite::Database& db;
      ~End() {
        try {
          db.exec("COMMIT");
        } catch (...) {  // a read transaction has nothing to lose
        }
      }
    } end{db};
    const bool partitioned =
        db.has_table("vector_centroids") &&
        query_int(db, "SELECT count(*) FROM (SELECT 1 FROM vector_centroids LIMIT 1)") > 0;
    if (partitioned || !db.has_table("vector_code_blocks")) return nullptr;
    // Sized first (lengths come from the records' headers): growing by doubling would hold
    // up to three times the copy for a moment.
    auto vector_sizes = db.query("SELECT count(*), coalesce(sum(length(vector)), 0) FROM vectors");
    if (!vector_sizes.step() || vector_sizes.column_int64(0) > max_chunks) return nullptr;
    auto snapshot = std::make_shared<IndexSnapshot>();
    const auto vector_count = static_cast<std::size_t>(vector_sizes.column_int64(0));
    snapshot->vector_ids.reserve(vector_count);
    snapshot->offsets.reserve(vector_count + 1);
    snapshot->values.reserve(static_cast<std::size_t>(vector_sizes.column_int64(1)));
    auto code_sizes = db.query("SELECT coalesce(sum(length(chunk_ids)), 0), coalesce(sum(length(codes)), 0)"
                               " FROM vector_code_blocks");
    if (code_sizes.step()) {
      snapshot->chunk_ids.reserve(static_cast<std::size_t>(code_sizes.column_int64(0)));
      snapshot->codes.reserve(static_cast<std::size_t>(code_sizes.column_int64(1)));
    }
    // The rows the block scan reads, by its rules: nearest_codes uses the copy only for a
    // query code of the same length.
    auto blocks = db.query("SELECT chunk_ids, codes FROM vector_code_blocks");
    each_code_row(blocks, snapshot->code_bytes, [&](const std::uint8_t* ids, const std::uint8_t* codes, std::size_t count) {
      snapshot->chunk_ids.append(reinterpret_cast<const char*>(ids), count * sizeof(std::int64_t));
      snapshot->codes.append(reinterpret_cast<const char*>(codes), count * snapshot->code_bytes);
    });
    auto vectors = db.query("SELECT chunk_id, vector FROM vectors ORDER BY chunk_id");
    while (vectors.step()) {
      const auto bytes = vectors.column_blob(1);
      snapshot->vector_ids.push_back(vectors.column_int64(0));
      snapshot->values.append(reinterpret_cast<const char*>(bytes.data()), bytes.size());
      snapshot->offsets.push_back(snapshot->values.size());
    }
    std::unordered_map<std::int64_t, std::uint32_t> file_of_id;
    auto files = db.query("SELECT id, path, language FROM files");
    while (files.step()) {
      file_of_id.emplace(files.column_int64(0), static_cast<std::uint32_t>(snapshot->files.size()));
      snapshot->files.emplace_back(files.column_text(1), files.column_text(2));
    }
    auto heads = db.query(
        "SELECT id, file_id, kind, symbol, parent, start_line, end_line FROM chunks ORDER BY id");
    while (heads.step()) {
      const auto file = file_of_id.find(heads.column_int64(1));
      if (file == file_of_id.end()) continue;  // chunks_by_id's join leaves it out too
      const std::string_view kind = heads.column_text(2);
      const std::string_view symbol = heads.column_text(3);
      const std::string_view parent = heads.column_text(4);
      if (snapshot->names.size() + kind.size() + symbol.size() + parent.size() > 0xFFFFFFFFu) {
        return nullptr;  // offsets are 32-bit; no index served from memory holds as much
      }
      IndexSnapshot::Head head;
      head.file = file->second;
      head.start_line = static_cast<int>(heads.column_int64(5));
      head.end_line = static_cast<int>(heads.column_int64(6));
      head.names = static_cast<std::uint32_t>(snapshot->names.size());
      head.kind_size = static_cast<std::uint32_t>(kind.size());
      head.symbol_size = static_cast<std::uint32_t>(symbol.size());
      head.parent_size = static_cast<std::uint32_t>(parent.size());
      snapshot->names.append(kind).append(symbol).append(parent);
      snapshot->head_ids.push_back(heads.column_int64(0));
      snapshot->heads.push_back(head);
    }
    return snapshot;
  });
}

void Store::use_snapshot(std::shared_ptr<const IndexSnapshot> snapshot) {
  m_impl->m_snapshot = std::move(snapshot);
}

std::vector<CodeHit> Store::nearest_codes(std::span<const std::uint8_t> code, int limit,
                                          const FileFilter& accept, CodeScan scan) const {
  return m_impl->guarded("reading", [&] {
    NearestCodes nearest(code, limit);
    if (limit <= 0 || code.empty()) return nearest.take();
    const std::size_t bytes = code.size();
    auto& db = m_impl->m_db;
    const double share = scan == CodeScan::nearest_partitions ? m_impl->m_probe_share : 1.0;
    if (!accept && m_impl->scan_partitions(code, share, nearest)) return nearest.take();
    if (const auto& snapshot = m_impl->m_snapshot; !accept && snapshot && snapshot->code_bytes == bytes) {
      nearest.scan(reinterpret_cast<const std::uint8_t*>(snapshot->chunk_ids.data()),
                   reinterpret_cast<const std::uint8_t*>(snapshot->codes.data()),
                   snapshot->chunk_ids.size() / sizeof(std::int64_t), [](std::size_t) { return false; });
      return nearest.take();
    }
    if (!accept && db.has_table("vector_code_blocks")) {
      auto blocks = db.query("SELECT chunk_ids, codes FROM vector_code_blocks");
      while (blocks.step()) {
        const auto ids = blocks.column_blob(0);
        const auto codes = blocks.column_blob(1);
        const std::size_t count = ids.size() / sizeof(std::int64_t);
        if (count == 0 || codes.size() != count * bytes) continue;
        nearest.scan(ids.data(), codes.data(), count, [](std::size_t) { return false; });
      }
      return nearest.take();
    }
    auto query = db.query(
        accept ? "SELECT c.chunk_ids, c.codes, f.path, f.language FROM vector_codes c"
                 " JOIN files f ON f.id = c.file_id"
               : "SELECT chunk_ids, codes FROM vector_codes");
    while (query.step()) {
      const auto ids = query.column_blob(0);
      const auto codes = query.column_blob(1);
      const std::size_t count = ids.size() / sizeof(std::int64_t);
      if (count == 0 || codes.size() != count * bytes) continue;
      if (accept && !accept(query.column_text(2), query.column_text(3))) continue;
      nearest.scan(ids.data(), codes.data(), count, [](std::size_t) { return false; });
    }
    return nearest.take();
  });
}

void Store::set_bounded_search(std::int64_t min_chunks) { m_impl->m_bounded_min_chunks = min_chunks; }

void Store::set_partitioning(std::int64_t min_chunks, double probe_share) {
  m_impl->m_partition_min_chunks = min_chunks;
  m_impl->m_probe_share = probe_share;
}

void Store::update_partitions() { update_partitions(nullptr); }

std::optional<std::int64_t> Store::partitions_due() const {
  return m_impl->guarded("partitioning the vectors of", [&]() -> std::optional<std::int64_t> {
    Impl& impl = *m_impl;
    if (!impl.m_db.has_table("vector_centroids")) return std::nullopt;
    const std::int64_t chunks = query_int(impl.m_db, "SELECT coalesce(max(id), 0) FROM chunks");
    if (chunks < impl.m_partition_min_chunks) return std::nullopt;
    if (impl.m_partitioned) {
      const std::int64_t changed = query_int(impl.m_db, "SELECT count(*) FROM vector_partition_changes");
      const std::int64_t dead = query_int(impl.m_db, "SELECT count(*) FROM vector_partition_dead");
      if (changed * 10 <= impl.meta_count("partitioned_files") &&
          dead * 10 <= impl.meta_count("partitioned_chunks")) {
        return std::nullopt;
      }
    }
    return impl.m_partition_min_chunks;
  });
}

std::shared_ptr<const PartitionPlan> Store::plan_partitions(std::int64_t min_chunks) const {
  return m_impl->guarded("partitioning the vectors of", [&]() -> std::shared_ptr<const PartitionPlan> {
    auto plan = m_impl->plan_partitions(min_chunks);
    return plan ? std::make_shared<const PartitionPlan>(std::move(*plan)) : nullptr;
  });
}

void Store::update_partitions(const std::shared_ptr<const PartitionPlan>& trained) {
  m_impl->guarded("partitioning the vectors of", [&] {
    Impl& impl = *m_impl;
    if (!impl.m_db.has_table("vector_centroids")) return;
    const auto drop = [&] {
      if (impl.m_partitioned) {
        impl.in_write_transaction([&] {
          impl.clear_partitions();
          impl.m_partitioned = false;  // so that the blocks are built
          impl.rebuild_all_code_blocks();
        });
      }
      impl.m_partitioned = false;
    };
    if (!partitions_due()) {
      const std::int64_t chunks = query_int(impl.m_db, "SELECT coalesce(max(id), 0) FROM chunks");
      if (chunks < impl.m_partition_min_chunks) drop();
      return;
    }
    bool partitioned = false;
    impl.in_write_transaction([&] {
      partitioned = (trained && impl.write_partitions(*trained)) || impl.build_partitions();
    });
    if (partitioned) {
      impl.m_partitioned = true;
      // Give the blocks' pages back to the file system (58 MB on the kernel), as optimize()
      // does after a first index.
      impl.m_db.exec("PRAGMA incremental_vacuum");
    } else {
      drop();
    }
  });
}

std::optional<Store::TermDocsRefill> Store::term_docs_refill_due() const {
  return m_impl->guarded("counting the terms of", [&]() -> std::optional<TermDocsRefill> {
    Impl& impl = *m_impl;
    if (!impl.m_db.has_table("term_docs")) return std::nullopt;
    // By the largest chunk id, as the bounded search decides whether it runs.
    const std::int64_t largest = query_int(impl.m_db, "SELECT coalesce(max(id), 0) FROM chunks");
    if (largest < impl.m_bounded_min_chunks) return std::nullopt;
    // Refilled when the largest id grew by a quarter since (a count of the chunks would cost
    // every run ~25 ms on the kernel): the terms that are common may have changed. The counts
    // of those kept are exact whatever happened.
    const std::int64_t then = impl.meta_count("term_docs_chunks");
    if (impl.m_term_docs.size() != 0 && then > 0 && largest * 4 <= then * 5) return std::nullopt;
    const auto min_docs = std::max<std::int64_t>(
        1, static_cast<std::int64_t>(k_term_docs_min_share * static_cast<double>(largest)));
    return TermDocsRefill{min_docs, largest};
  });
}

std::vector<std::pair<std::string, std::int64_t>> Store::count_common_terms(std::int64_t min_docs) const {
  return m_impl->guarded("counting the terms of", [&] { return TermDocs::count(m_impl->m_db, min_docs); });
}

void Store::refill_term_docs(const TermDocsRefill& due,
                             const std::vector<std::pair<std::string, std::int64_t>>& counts) {
  m_impl->guarded("counting the terms of", [&] {
    Impl& impl = *m_impl;
    try {
      impl.in_write_transaction([&] { impl.m_term_docs.fill(counts, due.largest_id); });
    } catch (...) {
      impl.m_term_docs.load();  // what the rolled-back fill left in memory is not the table's
      throw;
    }
  });
}

void Store::update_term_docs() {
  const std::optional<TermDocsRefill> due = term_docs_refill_due();
  if (due) return refill_term_docs(*due, count_common_terms(due->min_docs));
  m_impl->guarded("counting the terms of", [&] {
    Impl& impl = *m_impl;
    // An index that shrank below the bounded search's size keeps no counts.
    if (impl.m_term_docs.size() != 0 && impl.m_db.has_table("term_docs") &&
        query_int(impl.m_db, "SELECT coalesce(max(id), 0) FROM chunks") < impl.m_bounded_min_chunks) {
      impl.in_write_transaction([&] { impl.m_term_docs.clear(); });
    }
  });
}

std::vector<StoredVector> Store::vectors_by_id(const std::vector<std::int64_t>& ids,
                                               int dims) const {
  return m_impl->guarded("reading", [&] {
    std::vector<StoredVector> vectors;
    if (ids.empty()) return vectors;
    vectors.reserve(ids.size());
    if (const auto& snapshot = m_impl->m_snapshot) {
      look_up_sorted(
          snapshot->vector_ids, ids,
          [&](std::size_t i) {
            const std::span<const std::uint8_t> bytes(
                reinterpret_cast<const std::uint8_t*>(snapshot->values.data()) + snapshot->offsets[i],
                snapshot->offsets[i + 1] - snapshot->offsets[i]);
            StoredVector vector;
            vector.chunk_id = snapshot->vector_ids[i];
            if (unpack_values(bytes, dims, vector.values, vector.scale)) vectors.push_back(std::move(vector));
          },
          [](std::int64_t) {});
      return vectors;
    }
    auto query = m_impl->m_db.query(k_vectors_by_ids_sql);
    query.bind(1, id_list(ids));
    while (query.step()) {
      StoredVector vector;
      vector.chunk_id = query.column_int64(0);
      if (unpack_values(query.column_blob(1), dims, vector.values, vector.scale)) {
        vectors.push_back(std::move(vector));
      }
    }
    return vectors;
  });
}

std::optional<FileExport> Store::file_export(std::string_view path) const {
  return m_impl->guarded("reading", [&]() -> std::optional<FileExport> {
    auto file = m_impl->m_db.query("SELECT id FROM files WHERE path = ?1 AND skip_reason = ''");
    file.bind(1, path);
    if (!file.step()) return std::nullopt;
    const std::int64_t file_id = file.column_int64(0);
    std::vector<std::int64_t> ids;
    auto chunks = m_impl->m_db.query("SELECT id FROM chunks WHERE file_id = ?1 ORDER BY id");
    chunks.bind(1, file_id);
    while (chunks.step()) ids.push_back(chunks.column_int64(0));
    FileExport out;
    std::map<std::int64_t, std::size_t> position;
    for (ChunkRecord& record : chunks_by_id(ids)) {
      position[record.id] = out.chunks.size();
      out.chunks.push_back(std::move(record.chunk));
    }
    out.codes.resize(out.chunks.size());
    out.values.resize(out.chunks.size());
    auto codes = m_impl->m_db.query("SELECT chunk_ids, codes FROM vector_codes WHERE file_id = ?1");
    codes.bind(1, file_id);
    if (codes.step()) {
      const auto chunk_ids = codes.column_blob(0);
      const auto bytes = codes.column_blob(1);
      const std::size_t count = chunk_ids.size() / sizeof(std::int64_t);
      if (count > 0 && bytes.size() % count == 0) {
        const std::size_t size = bytes.size() / count;
        for (std::size_t i = 0; i < count; ++i) {
          std::int64_t id = 0;
          std::memcpy(&id, chunk_ids.data() + i * sizeof id, sizeof id);
          const auto found = position.find(id);
          if (found == position.end()) continue;
          out.codes[found->second].assign(bytes.begin() + static_cast<std::ptrdiff_t>(i * size),
                                          bytes.begin() + static_cast<std::ptrdiff_t>((i + 1) * size));
        }
      }
    }
    auto vectors = m_impl->m_db.query(
        "SELECT v.chunk_id, v.vector FROM chunks c JOIN vectors v ON v.chunk_id = c.id WHERE c.file_id = ?1");
    vectors.bind(1, file_id);
    while (vectors.step()) {
      const auto found = position.find(vectors.column_int64(0));
      if (found == position.end()) continue;
      const auto blob = vectors.column_blob(1);
      out.values[found->second].assign(blob.begin(), blob.end());
    }
    return out;
  });
}

std::vector<IndexedFile> Store::indexed_files() const {
  return m_impl->guarded("reading", [&] {
    std::vector<IndexedFile> files;
    auto query = m_impl->m_db.query(
        "SELECT path, blob_id, language FROM files WHERE skip_reason = '' ORDER BY path");
    while (query.step()) {
      files.push_back(IndexedFile{std::string(query.column_text(0)), std::string(query.column_text(1)),
                                  std::string(query.column_text(2))});
    }
    return files;
  });
}

Store::Counts Store::counts() const {
  return m_impl->guarded("reading", [&] {
    Counts counts;
    counts.files = query_int(m_impl->m_db, "SELECT count(*) FROM files WHERE skip_reason = ''");
    counts.chunks = query_int(m_impl->m_db, "SELECT count(*) FROM chunks");
    return counts;
  });
}

std::map<std::string, std::size_t> Store::skipped_files() const {
  return m_impl->guarded("reading", [&] {
    std::map<std::string, std::size_t> skipped;
    auto query = m_impl->m_db.query(
        "SELECT skip_reason, count(*) FROM files WHERE skip_reason <> '' GROUP BY skip_reason");
    while (query.step()) {
      skipped.emplace(std::string(query.column_text(0)), static_cast<std::size_t>(query.column_int64(1)));
    }
    return skipped;
  });
}

std::int64_t Store::pending_count() const {
  return m_impl->guarded("reading",
                         [&] { return query_int(m_impl->m_db, "SELECT count(*) FROM pending_vectors"); });
}

std::int64_t Store::last_chunk_id() const {
  return m_impl->guarded("reading",
                         [&] { return query_int(m_impl->m_db, "SELECT coalesce(max(id), 0) FROM chunks"); });
}

Stats Store::stats() const {
  return m_impl->guarded("reading", [&] {
    auto& db = m_impl->m_db;
    Stats stats;
    {
      auto query = db.query(
          "SELECT count(*) FILTER (WHERE skip_reason = ''),"
          " count(*) FILTER (WHERE skip_reason <> ''),"
          " coalesce(sum(size) FILTER (WHERE skip_reason = ''), 0) FROM files");
      query.step();
      stats.files = query.column_int64(0);
      stats.skipped_files = query.column_int64(1);
      stats.source_bytes = static_cast<std::uint64_t>(query.column_int64(2));
    }
    stats.chunks = query_int(db, "SELECT count(*) FROM chunks");
    stats.vectors = query_int(db, "SELECT count(*) FROM vectors");
    stats.pending_vectors = query_int(db, "SELECT count(*) FROM pending_vectors");
    {
      auto query =
          db.query("SELECT language, count(*) FROM files WHERE skip_reason = '' GROUP BY language");
      while (query.step()) {
        stats.files_per_language.emplace(std::string(query.column_text(0)), query.column_int64(1));
      }
    }
    stats.index_bytes = static_cast<std::uint64_t>(query_int(db, "PRAGMA page_count") *
                                                   query_int(db, "PRAGMA page_size"));
    return stats;
  });
}

} // namespace kasava::store
