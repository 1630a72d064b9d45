// Chunk lengths for ranking, and the kasava_bm25 function: see chunk_lengths.hpp.
#include "core/store/chunk_lengths.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <new>

#include "core/store/sqlite.hpp"

namespace kasava::store {
namespace {

constexpr const char* k_block_sql = "SELECT sizes FROM chunk_sizes WHERE block = ?1";
constexpr const char* k_blocks_sql = "SELECT block, sizes FROM chunk_sizes WHERE block >= ?1 AND block < ?2";
// Blocks a search reads at once when it needs one it has not read. FTS5 visits rows in rowid
// order, so a query with common terms needs nearly every block in turn, and the next ones
// cost a step each instead of a lookup each (the kernel's 1.45M chunks are 1,418 blocks).
constexpr std::int64_t k_read_ahead_blocks = 16;
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
  std::vector<std::int64_t> matching;  // per phrase, the rows holding it
  std::int64_t rows = 0;
};

int count_row(const Fts5ExtensionApi* /*api*/, Fts5Context* /*fts*/, void* rows) {
  ++*static_cast<std::int64_t*>(rows);
  return SQLITE_OK;
}

// IDF = log((N - n + 0.5) / (n + 0.5)), at least 1e-6 (a word in over half the rows).
double idf_of(std::int64_t rows, std::int64_t hits) {
  const double idf = std::log((static_cast<double>(rows) - static_cast<double>(hits) + 0.5) /
                              (static_cast<double>(hits) + 0.5));
  return idf <= 0.0 ? 1e-6 : idf;
}

// Fills stats as fts5Bm25GetData does; an SQLite result code.
int compute_stats(const Fts5ExtensionApi* api, Fts5Context* fts, QueryStats& stats,
                  const std::vector<std::int64_t>* kept_docs = nullptr) {
  const int phrases = api->xPhraseCount(fts);
  // Kept counts (term_docs.hpp) stand for phrases of one term, when they are one per phrase.
  if (kept_docs != nullptr && kept_docs->size() != static_cast<std::size_t>(phrases)) kept_docs = nullptr;
  sqlite3_int64 rows = 0;
  sqlite3_int64 total_tokens = 0;
  int result = api->xRowCount(fts, &rows);
  if (result == SQLITE_OK) result = api->xColumnTotalSize(fts, -1, &total_tokens);
  if (result != SQLITE_OK) return result;
  stats.average_length = static_cast<double>(total_tokens) / static_cast<double>(rows);
  stats.idf.assign(static_cast<std::size_t>(phrases), 0.0);
  stats.frequency.assign(static_cast<std::size_t>(phrases), 0.0);
  stats.matching.assign(static_cast<std::size_t>(phrases), 0);
  stats.rows = rows;
  for (int i = 0; i < phrases; ++i) {
    std::int64_t hits = 0;
    const std::int64_t kept = kept_docs != nullptr ? (*kept_docs)[static_cast<std::size_t>(i)] : -1;
    // A count no row total allows comes from a damaged or hostile file: walked instead.
    if (kept >= 0 && kept <= rows && api->xPhraseSize(fts, i) == 1) {
      hits = kept;
    } else {
      result = api->xQueryPhrase(fts, i, &hits, count_row);
      if (result != SQLITE_OK) return result;
    }
    stats.matching[static_cast<std::size_t>(i)] = hits;
    stats.idf[static_cast<std::size_t>(i)] = idf_of(rows, hits);
  }
  return SQLITE_OK;
}

// The functions' user data: the connection's lengths and term statistics.
struct RankingData {
  ChunkLengths* lengths = nullptr;
  TermStats* terms = nullptr;
  CollectedRows* collected = nullptr;
};

// One SQLite varint from [at, end) into `value` (its low 32 bits, as FTS5 reads a position
// list); false at the end or in a varint cut short.
bool read_varint(const unsigned char*& at, const unsigned char* end, std::uint32_t& value) {
  if (at < end && *at < 0x80) {
    value = *at++;
    return true;
  }
  std::uint64_t result = 0;
  for (int i = 0; i < 9; ++i) {
    if (at >= end) return false;
    const unsigned char byte = *at++;
    if (i == 8) {
      result = (result << 8) | byte;
      break;
    }
    result = (result << 7) | (byte & 0x7F);
    if (byte < 0x80) break;
  }
  value = static_cast<std::uint32_t>(result);
  return true;
}

// The sum of the column weights of a phrase's instances in the row, in their order: the
// first, which xPhraseFirst found in `column`, then the rest read from the position list the
// iterator holds, as xPhraseNext would hand them over one call each (fts5ApiPhraseNext: a
// varint per instance; 1 starts another column, whose number follows — clamped to the last
// column — and then the instance). `weight` gives a column's weight.
template <typename Weight>
double weigh_instances(const Fts5PhraseIter& iterator, int column, int columns, Weight&& weight) {
  double current = weight(column);
  double sum = 0.0;
  sum += current;
  const unsigned char* at = iterator.a;
  const unsigned char* const end = iterator.b;
  if (at == nullptr) return sum;
  std::uint32_t value = 0;
  while (read_varint(at, end, value)) {
    if (value == 1) {
      if (!read_varint(at, end, value)) break;
      column = value >= static_cast<std::uint32_t>(columns) ? columns - 1 : static_cast<int>(value);
      current = weight(column);
      if (!read_varint(at, end, value)) break;
    }
    sum += current;
  }
  return sum;
}

// The row's weighted frequency of phrases [first, first + frequency.size()) into `frequency`
// and its length; an SQLite result code.
int row_figures(const Fts5ExtensionApi* api, Fts5Context* fts, int argument_count,
                sqlite3_value** arguments, int first, ChunkLengths* lengths,
                std::span<double> frequency, double& length, std::int64_t* matching = nullptr) {
  // Each phrase's instances are walked on their own (xPhraseFirst), in the same order as
  // bm25()'s walk of all instances (xInst) meets them, so the sums are the same to the bit;
  // xInstCount would first merge the instances of all phrases into one sorted list, which
  // cost half again. The weights are read once per row, not once per instance.
  constexpr int k_weighed_columns = 8;
  double weights[k_weighed_columns];
  const int weighed = std::min(argument_count, k_weighed_columns);
  for (int column = 0; column < weighed; ++column) weights[column] = sqlite3_value_double(arguments[column]);
  const auto weight = [&](int column) {
    return column < weighed              ? weights[column]
           : argument_count > column ? sqlite3_value_double(arguments[column])
                                     : 1.0;
  };
  const int columns = api->xColumnCount(fts);
  for (std::size_t phrase = 0; phrase < frequency.size(); ++phrase) {
    Fts5PhraseIter iterator;
    int column = 0, offset = 0;
    const int result =
        api->xPhraseFirst(fts, first + static_cast<int>(phrase), &iterator, &column, &offset);
    if (result != SQLITE_OK) return result;
    if (column < 0) {
      frequency[phrase] = 0.0;
      continue;
    }
    if (matching != nullptr) ++matching[phrase];
    frequency[phrase] = weigh_instances(iterator, column, columns, weight);
  }
  length = lengths != nullptr ? lengths->tokens(api->xRowid(fts)) : 0;
  if (length == 0) {
    int tokens = 0;
    const int result = api->xColumnSize(fts, -1, &tokens);
    if (result != SQLITE_OK) return result;
    length = tokens;
  }
  return SQLITE_OK;
}

double bm25_of(const std::vector<double>& idf, std::span<const double> frequency, double length,
               double average_length) {
  double score = 0.0;
  for (std::size_t i = 0; i < frequency.size(); ++i) {
    score += idf[i] * ((frequency[i] * (k_bm25_k1 + 1.0)) /
                       (frequency[i] + k_bm25_k1 * (1 - k_bm25_b + k_bm25_b * length / average_length)));
  }
  return score;
}

// kasava_bm25_stats(chunks_fts): fills the connection's TermStats from this query (see
// chunk_lengths.hpp); returns 0.
void kasava_bm25_stats(const Fts5ExtensionApi* api, Fts5Context* fts, sqlite3_context* context,
                       int /*argument_count*/, sqlite3_value** /*arguments*/) {
  auto* data = static_cast<RankingData*>(api->xUserData(fts));
  if (data->terms == nullptr) return sqlite3_result_error(context, "kasava_bm25_stats: no statistics", -1);
  TermStats& terms = *data->terms;
  if (!terms.ready) {
    QueryStats stats;
    int result = SQLITE_NOMEM;
    try {
      result = compute_stats(api, fts, stats, &terms.kept_docs);
      if (result == SQLITE_OK) {
        terms.rows = stats.rows;
        terms.matching = std::move(stats.matching);
        terms.idf = std::move(stats.idf);
        terms.average_length = stats.average_length;
        terms.ready = true;
      }
    } catch (const std::bad_alloc&) {
    }
    if (result != SQLITE_OK) return sqlite3_result_error_code(context, result);
  }
  sqlite3_result_int(context, 0);
}

// kasava_bm25_terms(chunks_fts, weights...): offers the row's kasava_bm25 for the terms of the
// connection's TermStats to its `best` (see chunk_lengths.hpp); returns 0.
void kasava_bm25_terms(const Fts5ExtensionApi* api, Fts5Context* fts, sqlite3_context* context,
                       int argument_count, sqlite3_value** arguments) {
  auto* data = static_cast<RankingData*>(api->xUserData(fts));
  if (data->terms == nullptr) return sqlite3_result_error(context, "kasava_bm25_terms: no statistics", -1);
  TermStats& terms = *data->terms;
  if (!terms.ready || api->xPhraseCount(fts) != terms.first_phrase + static_cast<int>(terms.idf.size())) {
    return sqlite3_result_error(context, "kasava_bm25_terms: no statistics for these terms", -1);
  }
  if (!terms.best) return sqlite3_result_error(context, "kasava_bm25_terms: nowhere to keep the scores", -1);
  try {
    terms.frequency.resize(terms.idf.size());
    double length = 0;
    const int result = row_figures(api, fts, argument_count, arguments, terms.first_phrase,
                                   data->lengths, terms.frequency, length);
    if (result != SQLITE_OK) return sqlite3_result_error_code(context, result);
    terms.best->offer(-1.0 * bm25_of(terms.idf, terms.frequency, length, terms.average_length),
                      api->xRowid(fts));
  } catch (const std::bad_alloc&) {
    return sqlite3_result_error_nomem(context);
  }
  sqlite3_result_int(context, 0);
}

// kasava_bm25_rows(chunks_fts, weights...): adds the row to the connection's CollectedRows
// (see chunk_lengths.hpp); returns 0.
void kasava_bm25_rows(const Fts5ExtensionApi* api, Fts5Context* fts, sqlite3_context* context,
                      int argument_count, sqlite3_value** arguments) {
  auto* data = static_cast<RankingData*>(api->xUserData(fts));
  if (data->collected == nullptr) return sqlite3_result_error(context, "kasava_bm25_rows: nowhere to collect", -1);
  CollectedRows& rows = *data->collected;
  try {
    if (!rows.started) {
      sqlite3_int64 count = 0;
      sqlite3_int64 total_tokens = 0;
      int result = api->xRowCount(fts, &count);
      if (result == SQLITE_OK) result = api->xColumnTotalSize(fts, -1, &total_tokens);
      if (result != SQLITE_OK) return sqlite3_result_error_code(context, result);
      rows.phrases = api->xPhraseCount(fts);
      rows.rows = count;
      rows.average_length = static_cast<double>(total_tokens) / static_cast<double>(count);
      rows.matching.assign(static_cast<std::size_t>(rows.phrases), 0);
      rows.started = true;
    }
    const auto phrases = static_cast<std::size_t>(rows.phrases);
    rows.frequency.resize(rows.frequency.size() + phrases);
    double length = 0;
    const int result = row_figures(api, fts, argument_count, arguments, 0, data->lengths,
                                   std::span(rows.frequency).last(phrases), length, rows.matching.data());
    if (result != SQLITE_OK) return sqlite3_result_error_code(context, result);
    rows.ids.push_back(api->xRowid(fts));
    rows.lengths.push_back(length);
  } catch (const std::bad_alloc&) {
    return sqlite3_result_error_nomem(context);
  }
  sqlite3_result_int(context, 0);
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
  // The row's frequency of each phrase, weighted by the column it is in.
  auto* data = static_cast<RankingData*>(api->xUserData(fts));
  double length = 0;
  const int result = row_figures(api, fts, argument_count, arguments, 0,
                                 data != nullptr ? data->lengths : nullptr, stats->frequency, length);
  if (result != SQLITE_OK) return sqlite3_result_error_code(context, result);
  sqlite3_result_double(context, -1.0 * bm25_of(stats->idf, stats->frequency, length, stats->average_length));
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

const ChunkLengths::Block& ChunkLengths::read_from(std::int64_t block) {
  if (!m_has_table) m_has_table = m_db.has_table("chunk_sizes");
  if (*m_has_table) {
    auto query = m_db.query(k_blocks_sql);
    query.bind(1, block).bind(2, block + k_read_ahead_blocks);
    while (query.step()) {
      const std::int64_t read = query.column_int64(0);
      if (!m_read.contains(read)) m_read.emplace(read, decode_lengths(query.column_blob(1)));
    }
  }
  return m_read[block];  // a block without a row: empty, so its chunks' lengths are not known
}

std::vector<std::uint16_t> decode_lengths(std::span<const std::uint8_t> bytes) {
  std::vector<std::uint16_t> values(static_cast<std::size_t>(k_lengths_per_block), 0);
  const std::size_t count = std::min(values.size(), bytes.size() / 2);
  if (count == 0) return values;  // an empty blob's data() may be null, which memcpy must not get
  if constexpr (std::endian::native == std::endian::little) {
    std::memcpy(values.data(), bytes.data(), 2 * count);  // the stored form is little-endian
  } else {
    for (std::size_t i = 0; i < count; ++i) {
      values[i] = static_cast<std::uint16_t>(bytes[2 * i] | (bytes[2 * i + 1] << 8));
    }
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
      m_last_read = found != m_read.end() ? &found->second : &read_from(block);
      m_last_block = block;
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

std::string register_ranking(sqlite3* db, ChunkLengths* lengths, TermStats* terms,
                             CollectedRows* collected) {
  std::string error;
  fts5_api* api = sqlite::fts5_api_of(db, error);
  if (api == nullptr) return error;
  auto* data = new (std::nothrow) RankingData{lengths, terms, collected};
  if (data == nullptr) return "registering the ranking function: out of memory";
  // The last function's destructor frees the shared data when the connection closes.
  int result = api->xCreateFunction(api, k_rank_function_name, data, kasava_bm25, nullptr);
  if (result == SQLITE_OK) result = api->xCreateFunction(api, "kasava_bm25_stats", data, kasava_bm25_stats, nullptr);
  if (result == SQLITE_OK) result = api->xCreateFunction(api, "kasava_bm25_rows", data, kasava_bm25_rows, nullptr);
  if (result == SQLITE_OK) {
    result = api->xCreateFunction(api, "kasava_bm25_terms", data, kasava_bm25_terms,
                                  [](void* shared) { delete static_cast<RankingData*>(shared); });
  } else {
    delete data;
  }
  if (result != SQLITE_OK) {
    return std::string("registering the ranking function: ") + sqlite3_errstr(result);
  }
  return "";
}

BestScores::BestScores(int limit) : m_capacity(static_cast<std::size_t>(std::max(limit, 0))) {}

void BestScores::offer(double score, std::int64_t rowid) {
  const std::pair<double, std::int64_t> row{score, rowid};
  if (m_heap.size() < m_capacity) {
    m_heap.push_back(row);
    std::push_heap(m_heap.begin(), m_heap.end());
  } else if (m_capacity > 0 && row < m_heap.front()) {
    std::pop_heap(m_heap.begin(), m_heap.end());
    m_heap.back() = row;
    std::push_heap(m_heap.begin(), m_heap.end());
  }
}

std::vector<std::pair<double, std::int64_t>> BestScores::take() {
  std::sort_heap(m_heap.begin(), m_heap.end());
  return std::move(m_heap);
}

void CollectedRows::reset() {
  const std::size_t bytes = ids.capacity() * sizeof(std::int64_t) + lengths.capacity() * sizeof(double) +
                            frequency.capacity() * sizeof(double);
  if (bytes > k_kept_bytes) {
    *this = CollectedRows{};
    return;
  }
  phrases = 0;
  rows = 0;
  average_length = 1.0;
  started = false;
  matching.clear();
  ids.clear();
  lengths.clear();
  frequency.clear();
}

std::vector<std::pair<double, std::int64_t>> best_collected(const CollectedRows& rows, int limit) {
  BestScores best(limit);
  const auto phrases = static_cast<std::size_t>(rows.phrases);
  std::vector<double> idf(phrases);
  for (std::size_t i = 0; i < phrases; ++i) idf[i] = idf_of(rows.rows, rows.matching[i]);
  for (std::size_t r = 0; r < rows.ids.size(); ++r) {
    const std::span<const double> frequency(rows.frequency.data() + r * phrases, phrases);
    best.offer(-1.0 * bm25_of(idf, frequency, rows.lengths[r], rows.average_length), rows.ids[r]);
  }
  return best.take();
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
