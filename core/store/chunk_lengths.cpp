// Chunk lengths for ranking, and the kasava_bm25 function: see chunk_lengths.hpp.
#include "core/store/chunk_lengths.hpp"

#include <algorithm>
#include <cmath>
#include <new>

#include "core/store/sqlite.hpp"

namespace kasava::store {
namespace {

constexpr const char* k_block_sql = "SELECT sizes FROM chunk_sizes WHERE block = ?1";
constexpr const char* k_write_block_sql =
    "INSERT OR REPLACE INTO chunk_sizes(block, sizes) VALUES(?1, ?2)";
constexpr std::uint64_t k_max_entry = 0xFFFF;

// bm25()'s parameters in FTS5 (fts5_aux.c), which kasava_bm25 must equal.
constexpr double k_bm25_k1 = 1.2;
constexpr double k_bm25_b = 0.75;

std::int64_t block_of(std::int64_t chunk_id) {
  return chunk_id / k_lengths_per_block;
}

std::size_t slot_of(std::int64_t chunk_id) {
  return static_cast<std::size_t>(chunk_id % k_lengths_per_block);
}

// What bm25() works out once per query: each phrase's IDF and the average row length.
struct QueryStats {
  std::vector<double> idf;
  double average_length = 1.0;
  std::vector<double> frequency;  // per phrase, for the current row (reused: no allocation)
};

int count_row(const Fts5ExtensionApi* /*api*/, Fts5Context* /*fts*/, void* rows) {
  ++*static_cast<std::int64_t*>(rows);
  return SQLITE_OK;
}

// Fills stats as fts5Bm25GetData does; an SQLite result code.
int compute_stats(const Fts5ExtensionApi* api, Fts5Context* fts, QueryStats& stats) {
  const int phrases = api->xPhraseCount(fts);
  sqlite3_int64 rows = 0;
  sqlite3_int64 total_tokens = 0;
  int result = api->xRowCount(fts, &rows);
  if (result == SQLITE_OK) result = api->xColumnTotalSize(fts, -1, &total_tokens);
  if (result != SQLITE_OK) return result;
  stats.average_length = static_cast<double>(total_tokens) / static_cast<double>(rows);
  stats.idf.assign(static_cast<std::size_t>(phrases), 0.0);
  stats.frequency.assign(static_cast<std::size_t>(phrases), 0.0);
  for (int i = 0; i < phrases; ++i) {
    std::int64_t hits = 0;
    result = api->xQueryPhrase(fts, i, &hits, count_row);
    if (result != SQLITE_OK) return result;
    // IDF = log((N - n + 0.5) / (n + 0.5)), at least 1e-6 (a word in over half the rows).
    double idf = std::log((static_cast<double>(rows) - static_cast<double>(hits) + 0.5) /
                          (static_cast<double>(hits) + 0.5));
    if (idf <= 0.0) idf = 1e-6;
    stats.idf[static_cast<std::size_t>(i)] = idf;
  }
  return SQLITE_OK;
}

void delete_stats(void* stats) {
  delete static_cast<QueryStats*>(stats);
}

void kasava_bm25(const Fts5ExtensionApi* api, Fts5Context* fts, sqlite3_context* context,
                 int argument_count, sqlite3_value** arguments) {
  auto* stats = static_cast<QueryStats*>(api->xGetAuxdata(fts, 0));
  if (stats == nullptr) {
    auto* fresh = new (std::nothrow) QueryStats;
    if (fresh == nullptr) return sqlite3_result_error_nomem(context);
    int result = SQLITE_NOMEM;
    try {
      result = compute_stats(api, fts, *fresh);
    } catch (const std::bad_alloc&) {
    }
    if (result != SQLITE_OK) {
      delete fresh;
      return sqlite3_result_error_code(context, result);
    }
    // FTS5 owns it from here, also when this fails (it deletes it then).
    result = api->xSetAuxdata(fts, fresh, delete_stats);
    if (result != SQLITE_OK) return sqlite3_result_error_code(context, result);
    stats = fresh;
  }
  // The row's frequency of each phrase, weighted by the column it is in. Each phrase's
  // instances are walked on their own (xPhraseFirst), in the same order as bm25()'s walk of
  // all instances (xInst) meets them, so the sums are the same to the bit; xInstCount would
  // first merge the instances of all phrases into one sorted list, which cost half again.
  std::vector<double>& frequency = stats->frequency;
  for (std::size_t phrase = 0; phrase < frequency.size(); ++phrase) {
    double sum = 0.0;
    Fts5PhraseIter iterator;
    int column = 0, offset = 0;
    const int result =
        api->xPhraseFirst(fts, static_cast<int>(phrase), &iterator, &column, &offset);
    if (result != SQLITE_OK) return sqlite3_result_error_code(context, result);
    for (; column >= 0; api->xPhraseNext(fts, &iterator, &column, &offset)) {
      sum += argument_count > column ? sqlite3_value_double(arguments[column]) : 1.0;
    }
    frequency[phrase] = sum;
  }
  int result = SQLITE_OK;
  auto* lengths = static_cast<ChunkLengths*>(api->xUserData(fts));
  double length = lengths != nullptr ? lengths->tokens(api->xRowid(fts)) : 0;
  if (length == 0) {
    int tokens = 0;
    result = api->xColumnSize(fts, -1, &tokens);
    if (result != SQLITE_OK) return sqlite3_result_error_code(context, result);
    length = tokens;
  }
  double score = 0.0;
  for (std::size_t i = 0; i < frequency.size(); ++i) {
    score += stats->idf[i] * ((frequency[i] * (k_bm25_k1 + 1.0)) /
                              (frequency[i] + k_bm25_k1 * (1 - k_bm25_b + k_bm25_b * length /
                                                                             stats->average_length)));
  }
  sqlite3_result_double(context, -1.0 * score);
}

} // namespace

ChunkLengths::Block ChunkLengths::load(std::int64_t block) {
  if (!m_has_table) m_has_table = m_db.has_table("chunk_sizes");
  if (!*m_has_table) return {};
  auto query = m_db.query(k_block_sql);
  query.bind(1, block);
  if (!query.step()) return {};
  return decode_lengths(query.column_blob(0));
}

std::vector<std::uint16_t> decode_lengths(std::span<const std::uint8_t> bytes) {
  std::vector<std::uint16_t> values(static_cast<std::size_t>(k_lengths_per_block), 0);
  for (std::size_t i = 0; i < values.size() && 2 * i + 1 < bytes.size(); ++i) {
    values[i] = static_cast<std::uint16_t>(bytes[2 * i] | (bytes[2 * i + 1] << 8));
  }
  return values;
}

std::uint32_t ChunkLengths::tokens(std::int64_t chunk_id) noexcept {
  if (chunk_id < 0) return 0;
  try {
    const std::int64_t block = block_of(chunk_id);
    // FTS5 visits rows in rowid order: most calls ask for the block of the call before.
    if (m_last_read == nullptr || block != m_last_block) {
      auto found = m_read.find(block);
      if (found == m_read.end()) found = m_read.emplace(block, load(block)).first;
      m_last_block = block;
      m_last_read = &found->second;
    }
    return m_last_read->empty() ? 0 : (*m_last_read)[slot_of(chunk_id)];
  } catch (...) {  // a failed read or no memory: FTS5 knows the length too
    return 0;
  }
}

void ChunkLengths::record(std::int64_t chunk_id, std::uint64_t tokens) {
  if (chunk_id < 0) return;
  const std::int64_t block = block_of(chunk_id);
  auto found = m_written.find(block);
  if (found == m_written.end()) {
    Block values = load(block);
    if (values.empty()) values.assign(static_cast<std::size_t>(k_lengths_per_block), 0);
    found = m_written.emplace(block, std::move(values)).first;
  }
  found->second[slot_of(chunk_id)] = static_cast<std::uint16_t>(tokens <= k_max_entry ? tokens : 0);
}

void ChunkLengths::flush() {
  std::vector<std::uint8_t> bytes;
  for (const auto& [block, values] : m_written) {
    bytes.resize(2 * values.size());
    for (std::size_t i = 0; i < values.size(); ++i) {
      bytes[2 * i] = static_cast<std::uint8_t>(values[i] & 0xFF);
      bytes[2 * i + 1] = static_cast<std::uint8_t>(values[i] >> 8);
    }
    m_db.query(k_write_block_sql).bind(1, block).bind_blob(2, bytes.data(), bytes.size()).run();
  }
  m_written.clear();
  forget_read();  // what this connection reads next includes what it wrote
}

std::string register_ranking(sqlite3* db, ChunkLengths* lengths) {
  std::string error;
  fts5_api* api = sqlite::fts5_api_of(db, error);
  if (api == nullptr) return error;
  const int result = api->xCreateFunction(api, k_rank_function_name, lengths, kasava_bm25, nullptr);
  if (result != SQLITE_OK) {
    return std::string("registering the ranking function: ") + sqlite3_errstr(result);
  }
  return "";
}

std::optional<std::uint64_t> docsize_total(const std::uint8_t* data, std::size_t size) {
  // SQLite's varint: big-endian groups of 7 bits, high bit set on all but the last byte; the
  // ninth byte, if any, gives all 8 bits.
  std::uint64_t total = 0;
  std::size_t at = 0;
  while (at < size) {
    std::uint64_t value = 0;
    std::size_t length = 0;
    for (;;) {
      if (at >= size) return std::nullopt;
      const std::uint8_t byte = data[at++];
      ++length;
      if (length == 9) {
        value = (value << 8) | byte;
        break;
      }
      value = (value << 7) | (byte & 0x7F);
      if ((byte & 0x80) == 0) break;
    }
    total += value;
  }
  return total;
}

} // namespace kasava::store
