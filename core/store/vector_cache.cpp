// The vector cache of remote models' vectors (see vector_cache.hpp): its SQLite schema, how
// several processes share it, and its keys (SHA-256, from OpenSSL's libcrypto).
#include "core/store/vector_cache.hpp"

#include <chrono>
#include <cmath>
#include <filesystem>
#include <memory>
#include <thread>

#include <openssl/evp.h>

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
  // Fetched once: in OpenSSL 3, EVP_sha256() would look the implementation up on every digest.
  static EVP_MD* const sha256 = EVP_MD_fetch(nullptr, "SHA256", nullptr);
  // The model's length first, so no (model, input) pair reads as another one.
  std::uint8_t length[8];
  for (int i = 0; i < 8; ++i) {
    length[i] = static_cast<std::uint8_t>(static_cast<std::uint64_t>(model.size()) >> (8 * i));
  }
  const std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)> context(EVP_MD_CTX_new(),
                                                                        &EVP_MD_CTX_free);
  std::array<std::uint8_t, 32> digest{};
  unsigned size = 0;
  if (sha256 == nullptr || !context || EVP_DigestInit_ex(context.get(), sha256, nullptr) != 1 ||
      EVP_DigestUpdate(context.get(), length, sizeof length) != 1 ||
      EVP_DigestUpdate(context.get(), model.data(), model.size()) != 1 ||
      EVP_DigestUpdate(context.get(), input.data(), input.size()) != 1 ||
      EVP_DigestFinal_ex(context.get(), digest.data(), &size) != 1 || size != digest.size()) {
    // Only out of memory: OpenSSL's default provider always has SHA-256.
    throw util::Failure("computing a vector cache key: sha-256 failed in libcrypto");
  }
  return digest;
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
