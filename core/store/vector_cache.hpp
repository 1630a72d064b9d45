// The vector cache: vectors of remote embedding models by (model id, input text), in one SQLite
// file shared by every index and every kasava process of the user, so re-indexing, switching
// branches or two repositories sharing files never pay a remote provider twice.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/store/vectors.hpp"
#include "core/util/result.hpp"

namespace kasava::store {

namespace sqlite {
class Database;
}

/// The key of one cached vector: SHA-256 of the model id's length (8 bytes, little-endian),
/// the model id and the input text. Only this hash is stored, never the text.
std::array<std::uint8_t, 32> vector_cache_key(std::string_view model, std::string_view input);

/// A cache of quantized vectors (store::quantize) by model and input, in one SQLite file.
///
/// Each row holds the key (vector_cache_key), the number of dimensions, the binary code and the
/// quantized values with their scale (pack_values). The code is stored rather than recomputed
/// from the values' signs because a small positive component rounds to the value 0 but keeps its
/// code bit: what comes out is exactly what was put in. The model id must name everything that
/// changes the vector (kasava's ids carry "@<dims>" for an output dimension); callers that
/// cache query vectors as well as documents must tell them apart in the id.
///
/// Several processes (and several instances in one process) may use one file at once: WAL, a
/// busy timeout, and writes in IMMEDIATE transactions. One instance may be shared by threads
/// (its calls are serialized). The cache must never fail indexing: open() reports a file it
/// cannot use as an error for the caller to print as a warning; after that, get() turns any
/// failure into misses and put() returns an error to be warned about, never an exception.
class VectorCache {
public:
  /// Opens or creates the cache at `path` (with its parent folders). Errors name the path:
  /// "opening vector cache '/x/vectors.db': file is not a database".
  static util::Result<std::unique_ptr<VectorCache>> open(const std::string& path);
  /// The default location: <util::cache_directory()>/vectors.db, i.e.
  /// $XDG_CACHE_HOME/kasava/vectors.db or ~/.cache/kasava/vectors.db.
  static std::string default_path();

  ~VectorCache();
  VectorCache(const VectorCache&) = delete;
  VectorCache& operator=(const VectorCache&) = delete;

  const std::string& path() const { return m_path; }

  /// result[i] = the cached vector of `inputs[i]` under `model`, or nullopt: not cached, a row
  /// of another length than `dims` (when dims > 0), a damaged row, or an unreadable file. All
  /// inputs are read in one read transaction.
  std::vector<std::optional<QuantizedVector>> get(std::string_view model,
                                                  const std::vector<std::string_view>& inputs,
                                                  int dims = 0);
  /// Stores vectors[i] for inputs[i] under `model`, replacing what was cached, in one
  /// transaction; empty vectors (no values) are skipped. Errors: different counts of inputs
  /// and vectors, a code of the wrong length, a write that failed (the file, locks held past
  /// the busy timeout) — nothing is written then.
  util::Status put(std::string_view model, const std::vector<std::string_view>& inputs,
                   const std::vector<QuantizedVector>& vectors);

  /// Summary figures for `kasava status`.
  struct Counts {
    std::int64_t entries = 0;  ///< cached vectors
    std::uint64_t bytes = 0;   ///< size of the database (page_count * page_size)
  };
  /// Zeros when the file cannot be read.
  Counts counts() const;

private:
  VectorCache(std::string path, std::unique_ptr<sqlite::Database> db);

  std::string m_path;
  std::unique_ptr<sqlite::Database> m_db;
  mutable std::mutex m_mutex;  // the connection and its statement cache serve one call at a time
};

}  // namespace kasava::store
