// check_index(): the index file checked against itself, for `kasava verify`.
//
// Three layers, each catching what the one before cannot: SQLite's own integrity_check (the
// b-trees and indexes of the file), FTS5's 'integrity-check' (the inverted index's internal
// structure — for a contentless table it cannot compare with the text), and kasava's own
// invariants between tables: every chunk has its file row and exactly one FTS row (by rowid),
// every FTS row belongs to a chunk, no file remembered as skipped has chunks, every vector
// belongs to a chunk and vectors only exist with a model stamp; with a stamp, every chunk has
// either one vector of the stamped dimensions or a pending_vectors row (its embedding failed;
// never both), and its file's row of binary codes lists exactly its chunks with vectors (a
// missing or wrong vector is repaired by re-indexing the file). A chunk without its FTS row is
// repaired by re-indexing its file; an FTS row without a chunk cannot be deleted from a
// contentless table without the original text, so it calls for a rebuild. For the same
// reason a chunk whose packed text does not decode (a malformed reference, a missing or
// damaged pack, a place outside it) calls for a rebuild, and so does a pack no chunk refers
// to (space nothing would ever free). A chunk length kept for ranking that differs from
// FTS5's own (chunk_lengths.hpp) is repaired by re-indexing its file. A block of vector codes
// (schema 7) that is not its files' rows back to back is repaired by re-indexing those files
// (a partitioned index has none).
// The partitions of the codes (schema 8) must hold the current code of every chunk of a file
// not listed as changed since they were made, once, and nothing else but dead ids: a file
// whose chunks they get wrong is re-indexed (which lists it as changed), an entry of no
// chunk calls for a rebuild.
#include "core/store/store.hpp"

#include <algorithm>
#include <cstring>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "core/store/chunk_lengths.hpp"
#include "core/store/sqlite.hpp"
#include "core/store/tokenizer.hpp"

namespace kasava::store {
namespace {

constexpr int k_busy_timeout_ms = 5000;
// How many rows of a kind of damage to name before summing up the rest.
constexpr std::size_t k_max_listed = 5;

std::int64_t count(sqlite::Database& db, const char* sql) {
  auto query = db.query(sql);
  return query.step() ? query.column_int64(0) : 0;
}

// Opens path as a reader that leaves nothing behind (sqlite::reader_opening); read-write where
// we may write it, since FTS5's integrity-check is a write statement (rolled back here). Sets
// `writable`.
std::unique_ptr<sqlite::Database> open_for_check(const std::string& path, bool& writable) {
  const sqlite::ReaderOpening opening = sqlite::reader_opening(path);
  auto db = std::make_unique<sqlite::Database>(opening.name, opening.flags);
  writable = opening.kind == sqlite::ReaderKind::shared &&
             sqlite3_db_readonly(db->get(), "main") == 0;
  return db;
}

void check_sqlite_integrity(sqlite::Database& db, IndexCheck& check) {
  auto query = db.query("PRAGMA integrity_check(20)");
  while (query.step()) {
    const std::string row(query.column_text(0));
    if (row == "ok") continue;
    // One row may hold several lines ("*** in database main ***\nPage 13: ...").
    std::size_t begin = 0;
    while (begin < row.size()) {
      const std::size_t end = std::min(row.find('\n', begin), row.size());
      if (end > begin && row.compare(begin, 3, "***") != 0) {
        check.problems.push_back("sqlite integrity: " + row.substr(begin, end - begin));
      }
      begin = end + 1;
    }
  }
}

void check_fts_integrity(sqlite::Database& db, IndexCheck& check) {
  db.exec("BEGIN");
  try {
    db.exec("INSERT INTO chunks_fts(chunks_fts) VALUES('integrity-check')");
  } catch (const sqlite::Error& error) {
    check.problems.push_back(std::string("full-text index integrity: ") + error.what());
  }
  // The history field's full-text index (history.cpp): its own structure.
  if (db.has_table("history_fts")) {
    try {
      db.exec("INSERT INTO history_fts(history_fts) VALUES('integrity-check')");
    } catch (const sqlite::Error& error) {
      check.problems.push_back(std::string("history full-text index integrity: ") + error.what());
    }
  }
  sqlite3_exec(db.get(), "ROLLBACK", nullptr, nullptr, nullptr);
}

// Rows of a one-column query, as a sorted set of ids.
std::set<std::int64_t> ids(sqlite::Database& db, const char* sql) {
  std::set<std::int64_t> result;
  auto query = db.query(sql);
  while (query.step()) result.insert(query.column_int64(0));
  return result;
}

void check_code_blocks(sqlite::Database& db, IndexCheck& check, std::set<std::string>& inconsistent);
void check_code_partitions(sqlite::Database& db, IndexCheck& check, std::set<std::string>& inconsistent);

void check_tables(sqlite::Database& db, IndexCheck& check) {
  check.files = count(db, "SELECT count(*) FROM files");
  check.chunks = count(db, "SELECT count(*) FROM chunks");
  check.vectors = count(db, "SELECT count(*) FROM vectors");
  check.pending_vectors = count(db, "SELECT count(*) FROM pending_vectors");
  {
    auto query = db.query("SELECT value FROM meta WHERE key = 'embedding_model'");
    if (query.step()) check.embedding_model = std::string(query.column_text(0));
  }

  const auto orphan_chunks =
      count(db, "SELECT count(*) FROM chunks WHERE file_id NOT IN (SELECT id FROM files)");
  if (orphan_chunks > 0) {
    check.problems.push_back(std::to_string(orphan_chunks) + " chunks belong to no file");
  }

  // Chunks and FTS rows share ids: compare the two sets both ways.
  const std::set<std::int64_t> fts = ids(db, "SELECT rowid FROM chunks_fts");
  check.fts_rows = static_cast<std::int64_t>(fts.size());
  std::set<std::string> inconsistent;
  std::int64_t fts_matched = 0;
  {
    auto query = db.query(
        "SELECT c.id, f.path FROM chunks c JOIN files f ON f.id = c.file_id ORDER BY c.id");
    while (query.step()) {
      if (fts.count(query.column_int64(0)) != 0) {
        ++fts_matched;
      } else {
        inconsistent.insert(std::string(query.column_text(1)));
      }
    }
  }
  const std::int64_t stray_fts = check.fts_rows - fts_matched;
  if (stray_fts > 0) {
    check.problems.push_back(std::to_string(stray_fts) +
                             " full-text rows belong to no chunk (search would return them)");
  }
  {
    auto query = db.query(
        "SELECT DISTINCT f.path FROM files f JOIN chunks c ON c.file_id = f.id"
        " WHERE f.skip_reason != ''");
    while (query.step()) inconsistent.insert(std::string(query.column_text(0)));
  }
  check.inconsistent_paths.assign(inconsistent.begin(), inconsistent.end());

  const auto orphan_vectors =
      count(db, "SELECT count(*) FROM vectors WHERE chunk_id NOT IN (SELECT id FROM chunks)");
  if (orphan_vectors > 0) {
    check.problems.push_back(std::to_string(orphan_vectors) + " vectors belong to no chunk");
  }
  const auto orphan_pending = count(
      db, "SELECT count(*) FROM pending_vectors WHERE chunk_id NOT IN (SELECT id FROM chunks)");
  if (orphan_pending > 0) {
    check.problems.push_back(std::to_string(orphan_pending) +
                             " pending vectors belong to no chunk");
  }
  if (check.vectors > 0 && check.embedding_model.empty()) {
    check.problems.push_back(std::to_string(check.vectors) +
                             " vectors but no model stamp (meta embedding_model)");
  }
  {
    auto query = db.query("SELECT value FROM meta WHERE key = 'embedding_dims'");
    if (query.step()) {
      try {
        check.embedding_dims = std::stoi(std::string(query.column_text(0)));
      } catch (const std::exception&) {
        check.embedding_dims = -1;
      }
    }
  }
  const auto orphan_codes =
      count(db, "SELECT count(*) FROM vector_codes WHERE file_id NOT IN (SELECT id FROM files)");
  if (orphan_codes > 0) {
    check.problems.push_back(std::to_string(orphan_codes) + " rows of vector codes belong to no file");
  }
  if (check.embedding_model.empty()) return;
  if (check.embedding_dims <= 0) {
    check.problems.push_back("model stamp '" + check.embedding_model +
                             "' without its dimensions (meta embedding_dims)");
    return;
  }
  // Every chunk has a vector of the stamped dimensions (pack_values: 4-bit values, or one int8
  // value per byte as older indexes hold them, and a 4-byte scale) or is pending, not both.
  {
    auto query = db.query(
        "SELECT DISTINCT f.path FROM chunks c JOIN files f ON f.id = c.file_id"
        " LEFT JOIN vectors v ON v.chunk_id = c.id"
        " LEFT JOIN pending_vectors p ON p.chunk_id = c.id"
        " WHERE (v.chunk_id IS NULL AND p.chunk_id IS NULL)"
        " OR (v.chunk_id IS NOT NULL AND p.chunk_id IS NOT NULL)"
        " OR length(v.vector) NOT IN (?1, ?2)");
    const std::int64_t dims = check.embedding_dims;
    query.bind(1, dims + 4);
    query.bind(2, (dims + 1) / 2 + 4);
    while (query.step()) inconsistent.insert(std::string(query.column_text(0)));
  }
  // Each file's row of codes lists exactly its chunks, with one code of the right size each.
  {
    const std::size_t bytes = code_bytes(check.embedding_dims);
    std::map<std::int64_t, std::set<std::int64_t>> chunks_of_file;
    std::map<std::int64_t, std::string> path_of_file;
    {
      auto query = db.query(
          "SELECT c.file_id, c.id, f.path FROM chunks c JOIN files f ON f.id = c.file_id"
          " WHERE c.id NOT IN (SELECT chunk_id FROM pending_vectors)");
      while (query.step()) {
        chunks_of_file[query.column_int64(0)].insert(query.column_int64(1));
        path_of_file.emplace(query.column_int64(0), std::string(query.column_text(2)));
      }
    }
    auto query = db.query("SELECT file_id, chunk_ids, codes FROM vector_codes");
    while (query.step()) {
      const std::int64_t file_id = query.column_int64(0);
      const auto ids_blob = query.column_blob(1);
      const std::size_t count = ids_blob.size() / sizeof(std::int64_t);
      std::set<std::int64_t> listed;
      for (std::size_t i = 0; i < count; ++i) {
        std::int64_t id = 0;
        std::memcpy(&id, ids_blob.data() + i * sizeof id, sizeof id);
        listed.insert(id);
      }
      const auto found = chunks_of_file.find(file_id);
      const bool sound = ids_blob.size() % sizeof(std::int64_t) == 0 && listed.size() == count &&
                         query.column_blob(2).size() == count * bytes &&
                         found != chunks_of_file.end() && found->second == listed;
      if (!sound && path_of_file.count(file_id) != 0) inconsistent.insert(path_of_file[file_id]);
      if (found != chunks_of_file.end()) chunks_of_file.erase(found);
    }
    for (const auto& [file_id, ids] : chunks_of_file) inconsistent.insert(path_of_file[file_id]);
  }
  check_code_blocks(db, check, inconsistent);
  check_code_partitions(db, check, inconsistent);
  check.inconsistent_paths.assign(inconsistent.begin(), inconsistent.end());
}

// Each row of vector_code_blocks (schema 7) is its files' vector_codes rows back to back, in
// file id order, as store.cpp rebuilds it; a block that differs is repaired by re-indexing
// its files (which rebuilds it), one with no file of codes calls for a rebuild.
void check_code_blocks(sqlite::Database& db, IndexCheck& check, std::set<std::string>& inconsistent) {
  if (!db.has_table("vector_code_blocks")) return;
  // A partitioned index keeps no blocks (check_code_partitions checks what replaces them).
  if (db.has_table("vector_centroids") &&
      count(db, "SELECT count(*) FROM (SELECT 1 FROM vector_centroids LIMIT 1)") != 0) {
    return;
  }
  constexpr std::int64_t files_per_block = 256;  // store.cpp's k_code_block_files
  struct Block {
    std::vector<std::uint8_t> ids, codes;
    std::vector<std::string> paths;
  };
  std::map<std::int64_t, Block> expected;
  {
    auto query = db.query(
        "SELECT c.file_id, c.chunk_ids, c.codes, coalesce(f.path, '') FROM vector_codes c"
        " LEFT JOIN files f ON f.id = c.file_id ORDER BY c.file_id");
    std::map<std::int64_t, std::size_t> bytes_of_block;
    while (query.step()) {
      const std::int64_t block_id = query.column_int64(0) / files_per_block;
      const auto ids = query.column_blob(1);
      const auto codes = query.column_blob(2);
      Block& block = expected[block_id];
      if (!query.column_text(3).empty()) block.paths.emplace_back(query.column_text(3));
      const std::size_t count = ids.size() / sizeof(std::int64_t);
      if (count == 0 || codes.size() % count != 0) continue;
      std::size_t& bytes = bytes_of_block[block_id];
      if (bytes == 0) bytes = codes.size() / count;
      if (codes.size() != count * bytes) continue;
      block.ids.insert(block.ids.end(), ids.begin(),
                       ids.begin() + static_cast<std::ptrdiff_t>(count * sizeof(std::int64_t)));
      block.codes.insert(block.codes.end(), codes.begin(), codes.end());
    }
  }
  std::int64_t orphan_blocks = 0;
  auto damaged = [&](std::int64_t block_id) {
    const auto found = expected.find(block_id);
    if (found == expected.end() || found->second.paths.empty()) {
      ++orphan_blocks;
      return;
    }
    inconsistent.insert(found->second.paths.begin(), found->second.paths.end());
  };
  std::set<std::int64_t> stored;
  auto query = db.query("SELECT block, chunk_ids, codes FROM vector_code_blocks");
  while (query.step()) {
    const std::int64_t block_id = query.column_int64(0);
    stored.insert(block_id);
    const auto ids = query.column_blob(1);
    const auto codes = query.column_blob(2);
    const auto found = expected.find(block_id);
    const bool same = found != expected.end() && !found->second.ids.empty() &&
                      std::equal(ids.begin(), ids.end(), found->second.ids.begin(), found->second.ids.end()) &&
                      std::equal(codes.begin(), codes.end(), found->second.codes.begin(),
                                 found->second.codes.end());
    if (!same) damaged(block_id);
  }
  for (const auto& [block_id, block] : expected) {
    if (!block.ids.empty() && stored.count(block_id) == 0) damaged(block_id);
  }
  if (orphan_blocks > 0) {
    check.problems.push_back(std::to_string(orphan_blocks) +
                             " rows of vector code blocks belong to no file's codes");
  }
}

// See the top of the file. Both sides become (chunk id, digest of the code) sorted by id, so
// the kernel's 1.4M codes take about 50 MB, not a map per chunk.
void check_code_partitions(sqlite::Database& db, IndexCheck& check, std::set<std::string>& inconsistent) {
  for (const char* table : {"vector_centroids", "vector_partitions", "vector_partition_changes", "vector_partition_dead"}) {
    if (!db.has_table(table)) return;
  }
  // Without centroids the scan reads no partition.
  if (count(db, "SELECT count(*) FROM (SELECT 1 FROM vector_centroids LIMIT 1)") == 0) return;
  const auto digest = [](const std::uint8_t* code, std::size_t bytes) {
    std::uint64_t hash = 14695981039346656037ull;  // FNV-1a
    for (std::size_t i = 0; i < bytes; ++i) hash = (hash ^ code[i]) * 1099511628211ull;
    return hash;
  };
  const auto id_at = [](const std::uint8_t* ids, std::size_t i) {
    std::int64_t id = 0;
    std::memcpy(&id, ids + i * sizeof id, sizeof id);
    return id;
  };
  std::set<std::int64_t> changed;
  std::set<std::int64_t> dead;
  {
    auto query = db.query("SELECT file_id FROM vector_partition_changes");
    while (query.step()) changed.insert(query.column_int64(0));
    auto dead_query = db.query("SELECT chunk_id FROM vector_partition_dead");
    while (dead_query.step()) dead.insert(dead_query.column_int64(0));
  }
  struct Entry {
    std::int64_t chunk_id;
    std::uint64_t digest;
    std::int64_t file_id;
  };
  std::vector<Entry> current;              // chunks of files not changed since
  std::map<std::int64_t, std::int64_t> file_of_changed_chunk;
  {
    auto query = db.query("SELECT file_id, chunk_ids, codes FROM vector_codes");
    while (query.step()) {
      const std::int64_t file_id = query.column_int64(0);
      const auto ids = query.column_blob(1);
      const auto codes = query.column_blob(2);
      const std::size_t count = ids.size() / sizeof(std::int64_t);
      if (count == 0 || codes.size() % count != 0) continue;  // check_index reports the row
      const std::size_t bytes = codes.size() / count;
      for (std::size_t i = 0; i < count; ++i) {
        if (changed.count(file_id) != 0) {
          file_of_changed_chunk[id_at(ids.data(), i)] = file_id;
        } else {
          current.push_back({id_at(ids.data(), i), digest(codes.data() + i * bytes, bytes), file_id});
        }
      }
    }
  }
  std::vector<std::pair<std::int64_t, std::uint64_t>> partitioned;
  {
    auto query = db.query("SELECT chunk_ids, codes FROM vector_partitions");
    while (query.step()) {
      const auto ids = query.column_blob(0);
      const auto codes = query.column_blob(1);
      const std::size_t count = ids.size() / sizeof(std::int64_t);
      if (count == 0 || codes.size() % count != 0) {
        check.problems.push_back("a row of the vector partitions holds malformed codes");
        continue;
      }
      const std::size_t bytes = codes.size() / count;
      for (std::size_t i = 0; i < count; ++i) {
        const std::int64_t id = id_at(ids.data(), i);
        if (dead.count(id) == 0) partitioned.emplace_back(id, digest(codes.data() + i * bytes, bytes));
      }
    }
  }
  std::sort(current.begin(), current.end(), [](const Entry& a, const Entry& b) { return a.chunk_id < b.chunk_id; });
  std::sort(partitioned.begin(), partitioned.end());
  std::set<std::int64_t> wrong_files;
  std::int64_t orphans = 0;
  std::size_t j = 0;
  for (const Entry& entry : current) {
    while (j < partitioned.size() && partitioned[j].first < entry.chunk_id) {
      const auto found = file_of_changed_chunk.find(partitioned[j].first);
      if (found != file_of_changed_chunk.end()) {
        wrong_files.insert(found->second);
      } else {
        ++orphans;
      }
      ++j;
    }
    std::size_t copies = 0;
    bool same = true;
    for (; j < partitioned.size() && partitioned[j].first == entry.chunk_id; ++j) {
      ++copies;
      same = same && partitioned[j].second == entry.digest;
    }
    if (copies != 1 || !same) wrong_files.insert(entry.file_id);
  }
  for (; j < partitioned.size(); ++j) {
    const auto found = file_of_changed_chunk.find(partitioned[j].first);
    if (found != file_of_changed_chunk.end()) {
      wrong_files.insert(found->second);
    } else {
      ++orphans;
    }
  }
  for (const std::int64_t file_id : wrong_files) {
    auto query = db.query("SELECT path FROM files WHERE id = ?1");
    query.bind(1, file_id);
    if (query.step()) {
      inconsistent.insert(std::string(query.column_text(0)));
    } else {
      ++orphans;
    }
  }
  if (orphans > 0) {
    check.problems.push_back(std::to_string(orphans) + " codes in the vector partitions belong to no chunk");
  }
}

// Every packed chunk's text decodes, and every pack belongs to a chunk (see text_packs.hpp).
void check_texts(sqlite::Database& db, IndexCheck& check) {
  std::set<std::int64_t> referenced;
  std::int64_t damaged = 0;
  std::string first;  // the first damaged chunk, named
  {
    // Chunks of one pack are consecutive ids: keep the last pack decoded.
    std::int64_t decoded_id = 0;
    util::Result<std::string> decoded = std::string();
    auto query = db.query(
        "SELECT c.id, c.text, coalesce(f.path, '') FROM chunks c LEFT JOIN files f"
        " ON f.id = c.file_id WHERE typeof(c.text) = 'blob' ORDER BY c.id");
    while (query.step()) {
      const std::int64_t chunk_id = query.column_int64(0);
      std::string why;
      const auto reference = decode_reference(query.column_blob(1));
      if (!reference) {
        why = "its reference is malformed";
      } else {
        referenced.insert(reference->pack_id);
        if (reference->pack_id != decoded_id) {
          decoded_id = reference->pack_id;
          auto pack = db.query("SELECT data FROM text_packs WHERE id = ?1");
          pack.bind(1, decoded_id);
          decoded = pack.step() ? unpack(pack.column_blob(0), reference->codec)
                                : util::Result<std::string>(util::Error{"its pack is missing"});
        }
        if (!decoded) {
          why = decoded.error().message;
        } else if (!strings_at(*decoded, reference->place)) {
          why = "it lies outside its pack";
        }
      }
      if (why.empty()) continue;
      if (damaged++ == 0) {
        first = "chunk " + std::to_string(chunk_id) + " of '" +
                std::string(query.column_text(2)) + "': " + why;
      }
    }
  }
  if (damaged > 0) {
    check.problems.push_back(std::to_string(damaged) + " chunks' text does not decode (" + first +
                             ")");
  }
  std::int64_t unreferenced = 0;
  auto query = db.query("SELECT id FROM text_packs");
  while (query.step()) unreferenced += referenced.count(query.column_int64(0)) == 0 ? 1 : 0;
  if (unreferenced > 0) {
    check.problems.push_back(std::to_string(unreferenced) + " packs of chunk text belong to no chunk");
  }
}

// Each chunk length kept for ranking equals the one FTS5 keeps (its docsize table): a wrong
// one would rank the chunk as longer or shorter than it is. Indexing the file again mends it.
void check_lengths(sqlite::Database& db, IndexCheck& check) {
  std::map<std::int64_t, std::vector<std::uint16_t>> blocks;
  std::map<std::int64_t, bool> whole;  // a block row of the right size
  {
    auto query = db.query("SELECT block, sizes FROM chunk_sizes");
    while (query.step()) {
      const auto sizes = query.column_blob(1);
      blocks.emplace(query.column_int64(0), decode_lengths(sizes));
      whole.emplace(query.column_int64(0),
                    sizes.size() == 2 * static_cast<std::size_t>(k_lengths_per_block));
    }
  }
  std::set<std::string> inconsistent(check.inconsistent_paths.begin(),
                                     check.inconsistent_paths.end());
  auto query = db.query(
      "SELECT d.id, d.sz, f.path FROM chunks_fts_docsize d JOIN chunks c ON c.id = d.id"
      " JOIN files f ON f.id = c.file_id");
  while (query.step()) {
    const std::int64_t chunk_id = query.column_int64(0);
    const auto found = blocks.find(chunk_id / k_lengths_per_block);
    if (found == blocks.end()) continue;  // not kept: ranking asks FTS5
    if (!whole[found->first]) {
      inconsistent.insert(std::string(query.column_text(2)));
      continue;
    }
    const std::uint32_t kept = found->second[static_cast<std::size_t>(chunk_id % k_lengths_per_block)];
    const auto sz = query.column_blob(1);
    const auto total = docsize_total(sz.data(), sz.size());
    if (kept != 0 && (!total || *total != kept)) inconsistent.insert(std::string(query.column_text(2)));
  }
  check.inconsistent_paths.assign(inconsistent.begin(), inconsistent.end());
}

// The kept counts of common terms (term_docs.hpp) against FTS5's vocabulary: a wrong one
// would rank every query of its term with a wrong frequency. Needs a writable connection
// (the vocabulary is a temporary virtual table); reads each kept term's rows once.
void check_term_docs(sqlite::Database& db, IndexCheck& check) {
  db.exec("CREATE VIRTUAL TABLE IF NOT EXISTS temp.kasava_check_vocabulary USING fts5vocab(main, chunks_fts, row)");
  auto query = db.query(
      "SELECT count(*), min(t.term) FROM term_docs t LEFT JOIN temp.kasava_check_vocabulary v"
      " ON v.term = t.term WHERE t.docs != coalesce(v.doc, 0)");
  if (query.step() && query.column_int64(0) > 0) {
    check.problems.push_back("the kept document counts of " + std::to_string(query.column_int64(0)) +
                             " terms (first '" + std::string(query.column_text(1)) +
                             "') differ from the full-text index");
  }
}

} // namespace

util::Result<IndexCheck> check_index(const std::string& path) {
  IndexCheck check;
  try {
    bool writable = false;
    auto db = open_for_check(path, writable);
    sqlite3_busy_timeout(db->get(), k_busy_timeout_ms);
    const std::string registered = register_tokenizer(db->get());
    if (!registered.empty()) {
      return util::Error{"checking index '" + path + "': " + registered};
    }
    // Past opening, an SQLite error ("database disk image is malformed") is damage found,
    // not a failure to check.
    try {
      check_sqlite_integrity(*db, check);
      // When the file is damaged, its tables cannot be trusted to read.
      if (check.problems.empty()) {
        if (writable) check_fts_integrity(*db, check);
        check_tables(*db, check);
        // An index of schema 3 has no packs (see k_oldest_readable_schema_version).
        if (db->has_table("text_packs")) check_texts(*db, check);
        // Nor has an index of schema 3 or 4 chunk lengths.
        if (db->has_table("chunk_sizes")) check_lengths(*db, check);
        if (writable && db->has_table("term_docs")) check_term_docs(*db, check);
      }
    } catch (const sqlite::Error& error) {
      check.problems.push_back(std::string("reading the index: ") + error.what());
    }
    if (check.problems.size() > k_max_listed) {
      const auto more = check.problems.size() - k_max_listed;
      check.problems.resize(k_max_listed);
      check.problems.push_back("… and " + std::to_string(more) + " more");
    }
  } catch (const sqlite::Error& error) {
    return util::Error{"checking index '" + path + "': " + error.what()};
  }
  return check;
}

} // namespace kasava::store
