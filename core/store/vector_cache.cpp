// The vector cache of remote models' vectors (see vector_cache.hpp): its SQLite schema, how
// several processes share it, and the SHA-256 of its keys.
#include "core/store/vector_cache.hpp"

#include <chrono>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <thread>

#include "core/store/sqlite.hpp"
#include "core/util/files.hpp"

namespace kasava::store {
namespace {

// "KSVC": marks a SQLite file as a kasava vector cache (PRAGMA application_id), so we never
// write into somebody else's database.
constexpr std::int64_t k_application_id = 0x4B535643;
// The schema's version (PRAGMA user_version); a cache of another version is reported, not
// converted: it is only a cache, and kasava versions sharing one file must not fight over it.
constexpr std::int64_t k_cache_version = 1;
// Writers (other kasava processes indexing at the same time) hold the lock for one batch of
// vectors; wait rather than fail with "database is locked".
constexpr int k_busy_timeout_ms = 10000;
// More dimensions than any embedding model has: a row claiming more is damaged.
constexpr std::int64_t k_max_dims = 1 << 16;

// One row per (model, input). WITHOUT ROWID: the 32-byte key is the B-tree key, no second
// index. `value` is pack_values(): the values and the float scale.
constexpr const char* k_schema_sql = R"sql(
CREATE TABLE vectors(key BLOB PRIMARY KEY, dims INTEGER NOT NULL, code BLOB NOT NULL,
                     value BLOB NOT NULL) WITHOUT ROWID;
)sql";

// --- SHA-256 (FIPS 180-4), for keys only: a few hundred bytes per chunk, far cheaper than the
// remote call it saves; core/util has no hash of its own (git blob ids come from libgit2).
constexpr std::array<std::uint32_t, 64> k_sha256_rounds = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2};

class Sha256 {
public:
  void update(const void* data, std::size_t size) {
    const auto* bytes = static_cast<const std::uint8_t*>(data);
    m_length += size;
    while (size > 0) {
      const std::size_t take = std::min(size, m_block.size() - m_filled);
      std::memcpy(m_block.data() + m_filled, bytes, take);
      m_filled += take;
      bytes += take;
      size -= take;
      if (m_filled == m_block.size()) {
        compress();
        m_filled = 0;
      }
    }
  }

  std::array<std::uint8_t, 32> finish() {
    const std::uint64_t bits = m_length * 8;
    const std::uint8_t one = 0x80;
    update(&one, 1);
    const std::uint8_t zero = 0;
    while (m_filled != 56) update(&zero, 1);
    std::uint8_t length[8];
    for (int i = 0; i < 8; ++i) length[i] = static_cast<std::uint8_t>(bits >> (56 - 8 * i));
    update(length, 8);
    std::array<std::uint8_t, 32> digest{};
    for (std::size_t i = 0; i < 8; ++i) {
      for (std::size_t j = 0; j < 4; ++j) {
        digest[i * 4 + j] = static_cast<std::uint8_t>(m_state[i] >> (24 - 8 * j));
      }
    }
    return digest;
  }

private:
  static std::uint32_t rotate(std::uint32_t x, int n) { return (x >> n) | (x << (32 - n)); }

  void compress() {
    std::array<std::uint32_t, 64> w{};
    for (std::size_t i = 0; i < 16; ++i) {
      w[i] = static_cast<std::uint32_t>(m_block[i * 4]) << 24 |
             static_cast<std::uint32_t>(m_block[i * 4 + 1]) << 16 |
             static_cast<std::uint32_t>(m_block[i * 4 + 2]) << 8 |
             static_cast<std::uint32_t>(m_block[i * 4 + 3]);
    }
    for (std::size_t i = 16; i < 64; ++i) {
      const std::uint32_t s0 = rotate(w[i - 15], 7) ^ rotate(w[i - 15], 18) ^ (w[i - 15] >> 3);
      const std::uint32_t s1 = rotate(w[i - 2], 17) ^ rotate(w[i - 2], 19) ^ (w[i - 2] >> 10);
      w[i] = w[i - 16] + s0 + w[i - 7] + s1;
    }
    auto [a, b, c, d, e, f, g, h] = m_state;
    for (std::size_t i = 0; i < 64; ++i) {
      const std::uint32_t s1 = rotate(e, 6) ^ rotate(e, 11) ^ rotate(e, 25);
      const std::uint32_t choice = (e & f) ^ (~e & g);
      const std::uint32_t t1 = h + s1 + choice + k_sha256_rounds[i] + w[i];
      const std::uint32_t s0 = rotate(a, 2) ^ rotate(a, 13) ^ rotate(a, 22);
      const std::uint32_t majority = (a & b) ^ (a & c) ^ (b & c);
      const std::uint32_t t2 = s0 + majority;
      h = g;
      g = f;
      f = e;
      e = d + t1;
      d = c;
      c = b;
      b = a;
      a = t1 + t2;
    }
    const std::array<std::uint32_t, 8> add = {a, b, c, d, e, f, g, h};
    for (std::size_t i = 0; i < 8; ++i) m_state[i] += add[i];
  }

  std::array<std::uint32_t, 8> m_state = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                                          0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
  std::array<std::uint8_t, 64> m_block{};
  std::size_t m_filled = 0;
  std::uint64_t m_length = 0;
};

// The first column of the first row of a one-value query (a PRAGMA, a count).
std::int64_t query_int(sqlite::Database& db, const char* sql) {
  auto query = db.query(sql);
  return query.step() ? query.column_int64(0) : 0;
}

void rollback_if_open(sqlite::Database& db) {
  // SQLite may have rolled back by itself (a full disk, an I/O error): only roll back an open one.
  if (sqlite3_get_autocommit(db.get()) == 0) {
    sqlite3_exec(db.get(), "ROLLBACK", nullptr, nullptr, nullptr);
  }
}

// Creates the schema in an empty file. Another process may be doing the same: the check is
// repeated under the write lock.
// Switches the file to WAL (kept in the file: a no-op once done). SQLite answers "database is
// locked" at once, not after its busy handler, when two connections switch the same new file
// at the same moment (two processes opening the cache for the first time): tried again then,
// for up to the busy timeout.
void enable_wal(sqlite::Database& db) {
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::milliseconds(k_busy_timeout_ms);
  for (;;) {
    try {
      db.exec("PRAGMA journal_mode=WAL");
      return;
    } catch (const sqlite::Error& error) {
      if ((error.code() & 0xFF) != SQLITE_BUSY || std::chrono::steady_clock::now() >= deadline) {
        throw;
      }
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
}

void create_schema(sqlite::Database& db) {
  enable_wal(db);
  db.exec("BEGIN IMMEDIATE");
  try {
    if (query_int(db, "SELECT count(*) FROM sqlite_schema") == 0) {
      db.exec(k_schema_sql);
      const std::string pragmas = "PRAGMA application_id=" + std::to_string(k_application_id) +
                                  "; PRAGMA user_version=" + std::to_string(k_cache_version);
      db.exec(pragmas.c_str());
    }
    db.exec("COMMIT");
  } catch (...) {
    rollback_if_open(db);
    throw;
  }
}

// A row read back, or nullopt when it is damaged or of another length than `dims` (> 0).
std::optional<QuantizedVector> decode_row(const sqlite::Query& row, int dims) {
  const std::int64_t stored_dims = row.column_int64(0);
  if (stored_dims <= 0 || stored_dims > k_max_dims) return std::nullopt;
  if (dims > 0 && stored_dims != dims) return std::nullopt;
  const auto code = row.column_blob(1);
  if (code.size() != code_bytes(static_cast<int>(stored_dims))) return std::nullopt;
  QuantizedVector vector;
  if (!unpack_values(row.column_blob(2), static_cast<int>(stored_dims), vector.values,
                     vector.scale)) {
    return std::nullopt;
  }
  if (!std::isfinite(vector.scale) || vector.scale < 0.0f) return std::nullopt;
  vector.code.assign(code.begin(), code.end());
  return vector;
}

}  // namespace

std::array<std::uint8_t, 32> vector_cache_key(std::string_view model, std::string_view input) {
  // The model's length first, so no (model, input) pair reads as another one.
  std::uint8_t length[8];
  for (int i = 0; i < 8; ++i) {
    length[i] = static_cast<std::uint8_t>(static_cast<std::uint64_t>(model.size()) >> (8 * i));
  }
  Sha256 hash;
  hash.update(length, sizeof length);
  hash.update(model.data(), model.size());
  hash.update(input.data(), input.size());
  return hash.finish();
}

VectorCache::VectorCache(std::string path, std::unique_ptr<sqlite::Database> db)
    : m_path(std::move(path)), m_db(std::move(db)) {}

VectorCache::~VectorCache() = default;

std::string VectorCache::default_path() {
  return util::cache_directory() + "/vectors.db";
}

util::Result<std::unique_ptr<VectorCache>> VectorCache::open(const std::string& path) {
  namespace fs = std::filesystem;
  const std::string context = "opening vector cache '" + path + "': ";
  const fs::path parent = fs::path(path).parent_path();
  if (!parent.empty()) {
    std::error_code error;
    fs::create_directories(parent, error);
    if (error) {
      return util::Error{context + "creating directory '" + parent.string() +
                         "': " + error.message()};
    }
  }
  try {
    // NOMUTEX: the instance's own mutex serializes calls (the statement cache needs it anyway).
    auto db = std::make_unique<sqlite::Database>(
        path, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX);
    sqlite3_busy_timeout(db->get(), k_busy_timeout_ms);
    // The first read of the file: one that is not SQLite fails here ("file is not a database").
    if (query_int(*db, "PRAGMA application_id") == 0 &&
        query_int(*db, "SELECT count(*) FROM sqlite_schema") == 0) {
      create_schema(*db);
    }
    if (query_int(*db, "PRAGMA application_id") != k_application_id) {
      return util::Error{context + "file is not a kasava vector cache"};
    }
    if (const std::int64_t version = query_int(*db, "PRAGMA user_version");
        version != k_cache_version) {
      return util::Error{context + "written by another version of kasava (cache version " +
                         std::to_string(version) + ", expected " + std::to_string(k_cache_version) +
                         ")"};
    }
    // WAL: readers never wait for a writer; NORMAL sync loses at most the last commits in a
    // power cut, which a cache can afford.
    enable_wal(*db);
    db->exec("PRAGMA synchronous=NORMAL");
    return std::unique_ptr<VectorCache>(new VectorCache(path, std::move(db)));
  } catch (const sqlite::Error& error) {
    return util::Error{context + error.what()};
  }
}

std::vector<std::optional<QuantizedVector>> VectorCache::get(
    std::string_view model, const std::vector<std::string_view>& inputs, int dims) {
  std::vector<std::optional<QuantizedVector>> found(inputs.size());
  if (inputs.empty()) return found;
  const std::lock_guard lock(m_mutex);
  try {
    // One read transaction: one snapshot for all inputs, and the WAL index is read once.
    m_db->exec("BEGIN");
    for (std::size_t i = 0; i < inputs.size(); ++i) {
      const auto key = vector_cache_key(model, inputs[i]);
      try {
        auto row = m_db->query("SELECT dims, code, value FROM vectors WHERE key = ?1");
        row.bind_blob(1, key.data(), key.size());
        if (row.step()) found[i] = decode_row(row, dims);
      } catch (const sqlite::Error& error) {
        // A damaged page loses the rows on it, not the whole lookup.
        if ((error.code() & 0xff) != SQLITE_CORRUPT) throw;
      }
    }
    m_db->exec("COMMIT");
  } catch (const sqlite::Error&) {
    // Unreadable (I/O error, locked past the timeout): the rest are misses, embedded anew.
    rollback_if_open(*m_db);
  }
  return found;
}

util::Status VectorCache::put(std::string_view model, const std::vector<std::string_view>& inputs,
                              const std::vector<QuantizedVector>& vectors) {
  const std::string context = "writing vector cache '" + m_path + "': ";
  if (inputs.size() != vectors.size()) {
    return util::Error{context + std::to_string(inputs.size()) + " inputs but " +
                       std::to_string(vectors.size()) + " vectors"};
  }
  bool any = false;
  for (std::size_t i = 0; i < vectors.size(); ++i) {
    const auto& vector = vectors[i];
    if (vector.values.empty()) continue;
    any = true;
    const int dims = static_cast<int>(vector.values.size());
    if (vector.code.size() != code_bytes(dims)) {
      return util::Error{context + "vector " + std::to_string(i) + " has a code of " +
                         std::to_string(vector.code.size()) + " bytes for " + std::to_string(dims) +
                         " dimensions"};
    }
  }
  if (!any) return util::ok_status();

  const std::lock_guard lock(m_mutex);
  try {
    // IMMEDIATE takes the write lock now, waiting up to the busy timeout for another
    // process's batch, rather than failing when a read transaction tries to become a write.
    m_db->exec("BEGIN IMMEDIATE");
    for (std::size_t i = 0; i < vectors.size(); ++i) {
      const auto& vector = vectors[i];
      if (vector.values.empty()) continue;
      const auto key = vector_cache_key(model, inputs[i]);
      const auto packed = pack_values(vector);
      m_db->query("INSERT OR REPLACE INTO vectors(key, dims, code, value) VALUES(?1, ?2, ?3, ?4)")
          .bind_blob(1, key.data(), key.size())
          .bind(2, static_cast<std::int64_t>(vector.values.size()))
          .bind_blob(3, vector.code.data(), vector.code.size())
          .bind_blob(4, packed.data(), packed.size())
          .run();
    }
    m_db->exec("COMMIT");
    return util::ok_status();
  } catch (const sqlite::Error& error) {
    rollback_if_open(*m_db);
    return util::Error{context + error.what()};
  }
}

VectorCache::Counts VectorCache::counts() const {
  const std::lock_guard lock(m_mutex);
  Counts counts;
  try {
    counts.entries = query_int(*m_db, "SELECT count(*) FROM vectors");
    counts.bytes = static_cast<std::uint64_t>(query_int(*m_db, "PRAGMA page_count") *
                                              query_int(*m_db, "PRAGMA page_size"));
  } catch (const sqlite::Error&) {
    return {};
  }
  return counts;
}

}  // namespace kasava::store
