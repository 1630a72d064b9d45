// The read side of the shared store for `ask --store`: see search.hpp. Lists travel as array
// parameters (blob ids as hex), never spliced into SQL.
#include "core/pgstore/search.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <initializer_list>
#include <limits>
#include <sstream>
#include <string_view>

#include "core/pgstore/connection.hpp"
#include "core/pgstore/partitions.hpp"
#include "core/pgstore/store.hpp"
#include "core/util/compression.hpp"

namespace kasava::pgstore {
namespace {

// A PostgreSQL array literal of numbers; text elements: text_array (connection.hpp).
template <typename Number>
std::string array_of(const std::vector<Number>& numbers) {
  std::string literal = "{";
  for (const Number n : numbers) {
    if (literal.size() > 1) literal += ',';
    literal += std::to_string(n);
  }
  return literal + "}";
}

// A chunk's fields and vector as ChunkRow holds them (`c` the chunk), and their reading from
// a row's columns from `first` on.
constexpr const char* k_row_columns =
    "c.kind, c.symbol, c.parent, c.signature, c.doc, c.start_line, c.end_line, coalesce(encode(c.vector, 'hex'), '')";

ChunkRow row_of(const std::vector<std::string>& row, ChunkKey key, std::size_t first) {
  ChunkRow chunk;
  chunk.key = std::move(key);
  chunk.chunk.kind = row.at(first);
  chunk.chunk.symbol = row.at(first + 1);
  chunk.chunk.parent = row.at(first + 2);
  chunk.chunk.signature = row.at(first + 3);
  chunk.chunk.doc = row.at(first + 4);
  chunk.chunk.start_line = static_cast<int>(to_int(row.at(first + 5)));
  chunk.chunk.end_line = static_cast<int>(to_int(row.at(first + 6)));
  chunk.vector = from_hex(row.at(first + 7)).value_or("");
  return chunk;
}

// The candidates of a lexical search: the chunks of the refs' snapshots that hold all the terms
// of one of `subsets` (GIN, `?&`; with `from_refs`, among the refs' chunks read by blob), or
// any term when there are no subsets (`?|`); each term's
// counts read with one lookup into the chunk's terms, scored by BM25 with FTS5's k1 (1.2) and
// b (0.75) as FTS5's bm25() (and core/store's kasava_bm25) has them: the SQL score only
// chooses which candidates to send, core/search ranks them with the same numbers. The
// lookups sit in a subquery kept apart (OFFSET 0) so that each is made once per chunk, not
// once per use. Parameters: $1 model, $2 refs, $3 the terms, $4..$7 the field weights, $8 the
// average length, $9 the limit, then per term its text and its IDF, then per subset its terms.
// With `best_of_store` (the sets' chunks found through the terms' index, not `from_refs`):
// the best 2 × $9 of the whole store, then the refs' among them, each row with how many the
// store's best were (a column before the score); see Reader::match_terms. After the score,
// each row carries the chunk's fields and vector (k_row_columns, as Reader::chunks reads
// them), read by key for the rows sent only: the search needs them of every candidate, and
// a statement of its own for them cost a round trip and a plan after this one.
std::string match_sql(std::size_t terms, const std::vector<std::vector<std::size_t>>& subsets,
                      bool from_refs, bool best_of_store) {
  // Appends pieces: `"literal" + std::string` trips GCC 12's -Wrestrict.
  const auto add = [](std::string& out, std::initializer_list<std::string_view> pieces) {
    for (const std::string_view piece : pieces) out.append(piece);
  };
  // BM25's length part, in float8: numeric arithmetic on every row took ~1 ms of a
  // one-repository statement's 12.
  std::string lookups = "SELECT 1.2::float8 * (0.25::float8 + 0.75::float8 * c.length / $8::float8) AS k";
  std::string counts, score, outer_counts;
  for (std::size_t i = 0; i < terms; ++i) {
    const std::string v = std::to_string(i);
    const std::string term = std::to_string(10 + 2 * i);
    const std::string idf = std::to_string(11 + 2 * i);
    add(lookups, {", coalesce((c.terms ->> $", term, ")::int, 0) AS v", v});
    add(counts, {", v", v});
    add(outer_counts, {", r.v", v});
    if (!score.empty()) score += " + ";
    add(score, {"CASE WHEN v", v, " = 0 THEN 0 ELSE $", idf, "::float8 * 2.2 / (1 + k / (((v", v,
                " >> 21) & 127) * $4::float8 + ((v", v, " >> 14) & 127) * $5::float8 + ((v", v,
                " >> 7) & 127) * $6::float8 + (v", v, " & 127) * $7::float8)) END"});
  }
  std::string condition;
  for (std::size_t i = 0; i < subsets.size(); ++i) {
    add(condition, {i == 0 ? "(" : " OR ", "c.terms ?& $", std::to_string(10 + 2 * terms + i), "::text[]"});
  }
  condition += ")";
  std::string sql;
  const bool refs_first = subsets.empty() || from_refs;
  if (refs_first) {
    // With sets, their condition is made one the terms' index cannot answer (IS TRUE), so
    // that the planner reads the refs' chunks by blob rather than the sets' in all the store.
    add(sql, {"WITH b AS MATERIALIZED (SELECT DISTINCT blob_id FROM snapshot_files\n"
              "  WHERE ref_id = ANY($2::bigint[])),\n"
              "m AS (\n  SELECT c.blob_id, c.ordinal, c.length, x.*\n  FROM chunks c\n"
              "  CROSS JOIN LATERAL (", lookups, " OFFSET 0) x\n  WHERE c.model_id = $1 AND ",
              subsets.empty() ? "c.terms ?| $3::text[]"
                              : condition + " IS TRUE AND cardinality($3::text[]) > 0",
              " AND c.blob_id IN (SELECT blob_id FROM b))\n"});
  } else {
    // The sets' chunks found on their own, through the GIN index (joined with the refs'
    // blobs, the planner, not knowing how few chunks hold all terms of a set, would rather
    // read every chunk of every blob); then the refs' ones among them. $3 is named for its type.
    add(sql, {"WITH m AS MATERIALIZED (\n  SELECT c.blob_id, c.ordinal, c.length, x.*\n  FROM chunks c\n"
              "  CROSS JOIN LATERAL (", lookups, " OFFSET 0) x\n  WHERE c.model_id = $1 AND ", condition,
              " AND cardinality($3::text[]) > 0)\n"});
  }
  std::string best;
  if (!refs_first && best_of_store) {
    // Whether a chunk's blob is the refs' is asked of those best only: a join with the refs'
    // files took ~12 of a statement's ~80 ms across the 561,000 chunks of bench/store.py.
    add(sql, {",\ntop AS MATERIALIZED (SELECT blob_id, ordinal, length", counts, ", ", score,
              " AS score FROM m ORDER BY score DESC, blob_id, ordinal LIMIT 2 * $9::bigint)\n"});
    add(best, {"SELECT blob_id, ordinal, length", counts,
               ", (SELECT count(*) FROM top) AS n, score FROM top WHERE EXISTS (SELECT 1 FROM snapshot_files f "
               "WHERE f.blob_id = top.blob_id AND f.ref_id = ANY($2::bigint[])) "
               "ORDER BY score DESC, blob_id, ordinal LIMIT $9::bigint"});
  } else {
    add(best, {"SELECT blob_id, ordinal, length", counts, ", ", score, " AS score FROM m",
               refs_first ? ""
                          : " WHERE blob_id IN (SELECT blob_id FROM snapshot_files "
                            "WHERE ref_id = ANY($2::bigint[]))",
               " ORDER BY score DESC, blob_id, ordinal LIMIT $9"});
  }
  add(sql, {"SELECT encode(r.blob_id, 'hex'), r.ordinal, r.length", outer_counts,
            !refs_first && best_of_store ? ", r.n" : "", ", r.score, ", k_row_columns, "\nFROM (", best,
            ") r\nJOIN chunks c ON c.model_id = $1 AND c.blob_id = r.blob_id AND c.ordinal = r.ordinal\n"
            "ORDER BY r.score DESC, r.blob_id, r.ordinal"});
  return sql;
}

// The refs' codes compared with the query's. The distance is computed once (OFFSET 0) and its
// length checked there, not in the WHERE clause: guessing that few rows have the length, the
// planner went from each code to snapshot_files by index (1.2 s for 561,000 codes) instead
// of hashing the refs' blobs once.
constexpr const char* k_nearest_sql = R"sql(
SELECT encode(blob_id, 'hex'), ordinal, d FROM (
  SELECT c.blob_id, c.ordinal, CASE WHEN length(c.code) = $4 THEN bit_count(c.code # $3::bit varying) END AS d
  FROM chunk_codes c
  WHERE c.model_id = $1
    AND c.blob_id IN (SELECT blob_id FROM snapshot_files
                      WHERE ref_id = ANY($2::bigint[]) AND ($6 = '' OR language = $6))
  OFFSET 0) c
WHERE d IS NOT NULL
ORDER BY d, blob_id, ordinal
LIMIT $5
)sql";

// The nearest $7 codes of the whole store, then those of the refs' blobs among them: when the
// refs hold most of the store, their nearest `limit` are usually there, and finding them costs
// no lookup of each code's blob among the refs'. Parameters as k_nearest_sql's. The length
// is checked in the WHERE clause here, with no join for a poor guess to mislead: a subquery
// kept apart (OFFSET 0) runs in one process, and this scan on two parallel workers took
// 170–230 ms instead of 420 (561,000 codes).
constexpr const char* k_nearest_of_all_sql = R"sql(
WITH n AS MATERIALIZED (
  SELECT c.blob_id, c.ordinal, bit_count(c.code # $3::bit varying) AS d
  FROM chunk_codes c WHERE c.model_id = $1 AND length(c.code) = $4
  ORDER BY d, c.blob_id, c.ordinal LIMIT $7)
SELECT encode(blob_id, 'hex'), ordinal, d, (SELECT count(*) FROM n) FROM n
WHERE blob_id IN (SELECT blob_id FROM snapshot_files WHERE ref_id = ANY($2::bigint[]) AND ($6 = '' OR language = $6))
ORDER BY d, blob_id, ordinal
LIMIT $5
)sql";

// k_nearest_of_all_sql over the codes of the partitions $8 only, with the generation of the
// partitions the statement saw (a training may have committed since $8 was chosen).
constexpr const char* k_nearest_of_partitions_sql = R"sql(
WITH n AS MATERIALIZED (
  SELECT c.blob_id, c.ordinal, bit_count(c.code # $3::bit varying) AS d
  FROM chunk_codes c WHERE c.model_id = $1 AND c.partition = ANY($8::integer[]) AND length(c.code) = $4
  ORDER BY d, c.blob_id, c.ordinal LIMIT $7)
SELECT encode(blob_id, 'hex'), ordinal, d, (SELECT generation FROM code_partitions WHERE model_id = $1) FROM n
WHERE blob_id IN (SELECT blob_id FROM snapshot_files WHERE ref_id = ANY($2::bigint[]) AND ($6 = '' OR language = $6))
ORDER BY d, blob_id, ordinal
LIMIT $5
)sql";

} // namespace

Reader::Reader(std::unique_ptr<Connection> connection) : m_connection(std::move(connection)) {}
Reader::~Reader() = default;

const std::string& Reader::where() const { return m_connection->where(); }

bool Reader::idle() const { return m_connection->idle(); }

bool Reader::answers() {
  try {
    m_connection->exec("SELECT 1");
    return true;
  } catch (const util::Failure&) {
    return false;
  }
}

ReaderPool::ReaderPool(std::string conninfo, std::size_t keep) : m_conninfo(std::move(conninfo)), m_keep(keep) {}

ReaderPool::Lease::~Lease() {
  if (m_reader) m_pool->give_back(std::move(m_reader));
}

std::optional<ReaderPool::Lease> ReaderPool::acquire_idle() {
  for (;;) {
    std::unique_ptr<Reader> reader;
    {
      const std::lock_guard<std::mutex> lock(m_mutex);
      if (m_idle.empty()) return std::nullopt;
      reader = std::move(m_idle.back());
      m_idle.pop_back();
    }
    if (reader->answers()) return Lease(*this, std::move(reader));
  }
}

util::Result<ReaderPool::Lease> ReaderPool::acquire() {
  if (auto idle = acquire_idle()) return std::move(*idle);
  auto opened = Reader::open(m_conninfo);
  if (!opened) return opened.error();
  return Lease(*this, std::move(opened).value());
}

void ReaderPool::give_back(std::unique_ptr<Reader> reader) {
  if (!reader->idle()) return;
  const std::lock_guard<std::mutex> lock(m_mutex);
  if (m_idle.size() < m_keep) m_idle.push_back(std::move(reader));
}

util::Result<std::unique_ptr<Reader>> Reader::open(const std::string& conninfo) {
  auto connection = Connection::open(conninfo);
  if (!connection) return connection.error();
  Connection& c = **connection;
  try {
    // A search's statements are short: compiling one with LLVM (70 ms for the Hamming scan of
    // 561,000 codes) costs more than it saves. And the tables a search reads by key are the
    // cached kind: at the default random_page_cost (4) the planner read all 561,000 codes to
    // keep one repository's 5,100 (97 ms) rather than look them up by blob (16 ms). Set in
    // the statement that reads the schema's version (and fails when there is no schema): a
    // round trip is a tenth of a small search.
    int version = 0;
    try {
      version = static_cast<int>(to_int(c.exec("SELECT set_config('jit', 'off', false), "
                                               "set_config('random_page_cost', '1.1', false), "
                                               "(SELECT max(version) FROM kasava_schema)")
                                            .at(0, 2)));
    } catch (const QueryError& error) {
      if (error.sqlstate() != "42P01") throw;  // undefined_table
      return util::Error{"store at " + c.where() +
                         ": no kasava store in this database: publish to it first with `kasava index --store`"};
    }
    if (version > k_schema_version) {
      return util::Error{"store at " + c.where() + ": its schema is version " + std::to_string(version) +
                         ", newer than this kasava's (" + std::to_string(k_schema_version) +
                         "): a newer kasava wrote it; use that version (or newer) here"};
    }
    if (version < k_schema_version) {
      return util::Error{"store at " + c.where() + ": its schema is version " + std::to_string(version) +
                         ", older than this kasava's (" + std::to_string(k_schema_version) +
                         "): publish to it once with this kasava (`kasava index --store`), which upgrades it"};
    }
  } catch (const util::Failure& error) {
    return util::Error{error.what()};
  }
  return std::unique_ptr<Reader>(new Reader(std::move(connection).value()));
}

std::vector<RefInfo> Reader::refs() {
  const Rows rows = m_connection->exec(
      "SELECT f.id, r.name, f.name, coalesce(m.name, ''), coalesce(f.model_id, 0), "
      "to_char(f.published_at AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.US\"Z\"'), "
      "f.history_files FROM refs f JOIN repositories r ON r.id = f.repository_id "
      "LEFT JOIN models m ON m.id = f.model_id "
      "WHERE f.published_at IS NOT NULL ORDER BY r.name, f.published_at DESC, f.name");
  std::vector<RefInfo> refs;
  for (const auto& row : rows.rows)
    refs.push_back(RefInfo{to_int(row[0]), row[1], row[2], row[3], static_cast<std::int16_t>(to_int(row[4])),
                           row[5], to_int(row[6])});
  return refs;
}

std::int16_t Reader::model_id(const std::string& model) {
  const Rows rows = m_connection->exec("SELECT id FROM models WHERE name = $1", {Param::text(model)});
  return rows.size() == 0 ? 0 : static_cast<std::int16_t>(to_int(rows.at(0, 0)));
}

TermStatistics Reader::term_statistics(std::int16_t model, const std::vector<std::int64_t>& refs,
                                       const std::vector<std::string>& terms) {
  TermStatistics statistics;
  const Rows rows = m_connection->exec(
      "SELECT coalesce(s.chunks, 0), coalesce(m.chunks, 0), coalesce(m.tokens, 0), r.chunks "
      "FROM unnest($2::text[]) WITH ORDINALITY AS t(term, n) "
      "LEFT JOIN term_stats s ON s.model_id = $1 AND s.term = t.term "
      "LEFT JOIN model_stats m ON m.model_id = $1 "
      "CROSS JOIN (SELECT coalesce(sum(chunks), 0) AS chunks FROM refs WHERE id = ANY($3::bigint[])) r "
      "ORDER BY t.n",
      {Param::text(std::to_string(model)), Param::text(text_array(terms)), Param::text(array_of(refs))});
  for (const auto& row : rows.rows) {
    statistics.document_frequency.push_back(to_int(row[0]));
    statistics.chunks = to_int(row[1]);
    statistics.tokens = to_int(row[2]);
    statistics.refs_chunks = to_int(row[3]);
  }
  return statistics;
}

namespace {

// BM25 gives a term at most its IDF times k1 + 1 (2.2), however often it occurs: a chunk
// holding only the terms of a set scores less than the sum of their bounds.
double bound_of(const std::vector<std::size_t>& subset, const std::vector<double>& bounds) {
  double sum = 0.0;
  for (const std::size_t term : subset) sum += bounds[term];
  return sum;
}

// The members of `present` that `mask` names (bit i: present[i]).
std::vector<std::size_t> members_of(const std::vector<std::size_t>& present, std::uint32_t mask) {
  std::vector<std::size_t> subset;
  for (std::size_t i = 0; i < present.size(); ++i) {
    if (mask & (1u << i)) subset.push_back(present[i]);
  }
  return subset;
}

// The sets of terms (among `present`, those some chunk holds) that could make a chunk score
// `threshold` or more, and none of whose own subsets could: a chunk scoring that much holds
// all terms of one of them. Empty when there are more than `most`.
std::vector<std::vector<std::size_t>> minimal_subsets(const std::vector<std::size_t>& present,
                                                      const std::vector<double>& bounds, double threshold,
                                                      std::size_t most) {
  std::vector<std::vector<std::size_t>> subsets;
  for (std::uint32_t mask = 1; mask < (1u << present.size()); ++mask) {
    std::vector<std::size_t> subset = members_of(present, mask);
    const double sum = bound_of(subset, bounds);
    if (sum < threshold) continue;
    bool minimal = true;
    for (const std::size_t term : subset) minimal = minimal && sum - bounds[term] < threshold;
    if (!minimal) continue;
    if (subsets.size() == most) return {};
    subsets.push_back(std::move(subset));
  }
  return subsets;
}

// The subsets of `present` with `size` terms.
std::vector<std::vector<std::size_t>> subsets_of_size(const std::vector<std::size_t>& present, std::size_t size) {
  std::vector<std::vector<std::size_t>> subsets;
  for (std::uint32_t mask = 1; mask < (1u << present.size()); ++mask) {
    if (static_cast<std::size_t>(__builtin_popcount(mask)) == size) subsets.push_back(members_of(present, mask));
  }
  return subsets;
}

// More subsets than this in one statement cost more in index scans than they spare.
constexpr std::size_t k_most_subsets = 24;
// Terms beyond this many are not narrowed (2^n subsets are enumerated).
constexpr std::size_t k_most_narrowed_terms = 12;

} // namespace

std::vector<TermMatch> Reader::match_terms(std::int16_t model,
                                           const std::vector<std::int64_t>& refs,
                                           const std::vector<std::string>& terms,
                                           const TermStatistics& statistics,
                                           const std::array<double, 4>& weights, int limit,
                                           std::int64_t narrowing_above,
                                           NarrowedFrom narrowed_from) {
  if (terms.empty() || refs.empty()) return {};
  const auto as_text = [](double number) {
    std::ostringstream text;
    text.precision(17);
    text << number;
    return text.str();
  };
  const double chunks = static_cast<double>(statistics.chunks);
  const double average =
      std::max(static_cast<double>(statistics.tokens) / std::max(chunks, 1.0), 1.0);
  std::vector<Param> params = {Param::text(std::to_string(model)), Param::text(array_of(refs)),
                               Param::text(text_array(terms))};
  for (const double weight : weights) params.push_back(Param::text(as_text(weight)));
  params.push_back(Param::text(as_text(average)));
  params.push_back(Param::text(std::to_string(limit)));
  std::vector<double> bounds;
  std::vector<std::int64_t> frequencies;
  std::vector<std::size_t> present;
  std::int64_t holding_any = 0;
  for (std::size_t i = 0; i < terms.size(); ++i) {
    const std::int64_t frequency = i < statistics.document_frequency.size() ? statistics.document_frequency[i] : 0;
    const double idf = std::log(std::max((chunks - static_cast<double>(frequency) + 0.5) /
                                             (static_cast<double>(frequency) + 0.5), 1.000001));
    params.push_back(Param::text(terms[i]));
    params.push_back(Param::text(as_text(idf)));
    bounds.push_back(idf * 2.2);
    frequencies.push_back(frequency);
    if (frequency > 0) present.push_back(i);
    holding_any += frequency;
  }

  struct Round {
    std::vector<TermMatch> matches;
    double threshold = 0.0;  ///< the last score when `limit` came back, else 0 (anything may enter)
  };
  // The refs' chunks (blobs shared by refs counted again) bound the matches as well.
  const std::int64_t refs_chunks = statistics.refs_chunks;
  const auto run = [&](const std::vector<std::vector<std::size_t>>& subsets) {
    // The chunks holding all terms of a set are at most its rarest term's in the store.
    std::int64_t through_index = 0;
    for (const auto& subset : subsets) {
      std::int64_t rarest = std::numeric_limits<std::int64_t>::max();
      for (const std::size_t term : subset) rarest = std::min(rarest, frequencies[term]);
      through_index += rarest;
    }
    const bool from_refs = narrowed_from == NarrowedFrom::refs ||
                           (narrowed_from == NarrowedFrom::cheaper && refs_chunks < through_index);
    std::vector<Param> round_params = params;
    for (const auto& subset : subsets) {
      std::vector<std::string> members;
      for (const std::size_t term : subset) members.push_back(terms[term]);
      round_params.push_back(Param::text(text_array(members)));
    }
    // When the refs hold most of the store, their best `limit` are usually among the store's
    // best 2 × `limit`, and finding those needs no look at the refs' files. Exact when
    // `limit` of them are the refs', or when the store's best were all its chunks holding a
    // set; else the statement that reads the refs' files.
    Rows rows;
    bool with_count = false;  // the best-of-store statement's column before the score
    if (!subsets.empty() && !from_refs && 2 * refs_chunks >= statistics.chunks) {
      rows = m_connection->exec(match_sql(terms.size(), subsets, false, true), round_params);
      with_count = true;
      const bool exact = rows.size() >= static_cast<std::size_t>(limit) ||
                         (rows.size() > 0 && to_int(rows.rows[0][3 + terms.size()]) < 2 * std::int64_t{limit});
      if (!exact) {
        rows = m_connection->exec(match_sql(terms.size(), subsets, false, false), round_params);
        with_count = false;
      }
    } else {
      rows = m_connection->exec(match_sql(terms.size(), subsets, from_refs, false), round_params);
    }
    const std::size_t score_column = 3 + terms.size() + (with_count ? 1 : 0);
    Round round;
    round.matches.reserve(rows.size());
    for (const auto& row : rows.rows) {
      ChunkKey key{row.at(0), static_cast<int>(to_int(row.at(1)))};
      TermMatch match{key, static_cast<int>(to_int(row.at(2))), {}, row_of(row, key, score_column + 1)};
      for (std::size_t i = 0; i < terms.size(); ++i) {
        const std::int64_t packed = to_int(row[3 + i]);
        if (packed == 0) continue;
        match.terms.emplace_back(terms[i], std::array<int, 4>{static_cast<int>((packed >> 21) & 127),
                                                              static_cast<int>((packed >> 14) & 127),
                                                              static_cast<int>((packed >> 7) & 127),
                                                              static_cast<int>(packed & 127)});
      }
      round.matches.push_back(std::move(match));
    }
    if (!rows.rows.empty() && rows.size() >= static_cast<std::size_t>(limit)) {
      round.threshold = std::strtod(rows.rows.back().at(score_column).c_str(), nullptr);
    }
    return round;
  };

  // Where many chunks hold some term, the best `limit` are found among fewer: first the
  // chunks holding all of the terms (then all but one, …) until `limit` of them come back,
  // whose last score is a threshold; a chunk outside them can reach it only by holding every
  // term of a set whose bounds add up to it, so the chunks holding such a set are the last
  // statement, and its best `limit` are the best of all (MaxScore's reasoning, by sets of
  // terms). Ties at the threshold are kept: the sets' bounds may equal it.
  holding_any = std::min(holding_any, refs_chunks);
  if (holding_any <= narrowing_above || present.size() < 2 || present.size() > k_most_narrowed_terms) {
    return run({}).matches;
  }
  for (std::size_t size = present.size(); size >= 2; --size) {
    const auto level = subsets_of_size(present, size);
    if (level.size() > k_most_subsets) break;
    Round round = run(level);
    if (round.threshold <= 0.0) continue;
    const auto last = minimal_subsets(present, bounds, round.threshold * (1.0 - 1e-9), k_most_subsets);
    if (last.empty()) break;
    // Every chunk of the last sets already came back when each of them is this large.
    const bool covered =
        std::all_of(last.begin(), last.end(), [&](const auto& subset) { return subset.size() >= size; });
    return covered ? std::move(round.matches) : run(last).matches;
  }
  return run({}).matches;
}

std::vector<CodeMatch> Reader::nearest_codes(std::int16_t model, const std::vector<std::int64_t>& refs,
                                             const std::string& code, int limit, const std::string& language,
                                             double probe_share) {
  if (refs.empty() || code.empty()) return {};
  std::string bits = "x";  // bit varying's hex input
  bits.append(to_hex(code));
  std::vector<Param> params = {Param::text(std::to_string(model)), Param::text(array_of(refs)), Param::text(bits),
                               Param::text(std::to_string(code.size() * 8)), Param::text(std::to_string(limit)),
                               Param::text(language)};
  const auto matches_of = [](const Rows& rows) {
    std::vector<CodeMatch> matches;
    matches.reserve(rows.size());
    for (const auto& row : rows.rows) {
      matches.push_back(
          CodeMatch{ChunkKey{row[0], static_cast<int>(to_int(row[1]))}, static_cast<int>(to_int(row[2]))});
    }
    return matches;
  };
  // The refs' chunks (shared blobs counted again) against the store's, and the generation
  // of the model's partitions.
  const Rows share = m_connection->exec(
      "SELECT (SELECT coalesce(sum(chunks), 0) FROM refs WHERE id = ANY($1::bigint[])), "
      "(SELECT coalesce(max(chunks), 0) FROM model_stats WHERE model_id = $2), "
      "(SELECT generation FROM code_partitions WHERE model_id = $2)",
      {Param::text(array_of(refs)), Param::text(std::to_string(model))});
  const bool most = 2 * to_int(share.at(0, 0)) >= to_int(share.at(0, 1));
  const std::string& generation = share.at(0, 2);
  const CodePartitions* partitions = generation.empty() || probe_share >= 1.0 || !most || !language.empty()
                                        ? nullptr
                                        : this->partitions(model, to_int(generation));
  if (partitions != nullptr) {
    // Approximate: the refs' nearest codes may lie in a partition not read (recall measured
    // in bench/README). Fewer than `limit` found, or partitions trained meanwhile: the
    // exact statements below.
    params.push_back(Param::text(std::to_string(2 * limit)));
    params.push_back(Param::text(array_of(partitions_to_read(*partitions, code, probe_share))));
    const Rows rows = m_connection->exec(k_nearest_of_partitions_sql, params);
    if (rows.size() >= static_cast<std::size_t>(limit) && rows.rows[0][3] == generation) {
      return matches_of(rows);
    }
    params.resize(6);
  }
  if (language.empty() && most) {
    // Exact when `limit` come back (every code of the refs nearer than the last one kept, or
    // as near and before it in key order, is among the store's nearest), or when the store's
    // nearest were all its codes.
    const int nearest_of_all = 2 * limit;
    params.push_back(Param::text(std::to_string(nearest_of_all)));
    const Rows rows = m_connection->exec(k_nearest_of_all_sql, params);
    const bool whole_store = rows.size() > 0 && to_int(rows.rows[0][3]) < nearest_of_all;
    if (rows.size() >= static_cast<std::size_t>(limit) || whole_store) {
      return matches_of(rows);
    }
    params.pop_back();
  }
  return matches_of(m_connection->exec(k_nearest_sql, params));
}

const CodePartitions* Reader::partitions(std::int16_t model, std::int64_t generation) {
  if (!m_partitions || m_partitions_model != model || m_partitions->generation != generation) {
    auto read = read_partitions(*m_connection, model);
    if (!read) {
      m_partitions.reset();
      return nullptr;
    }
    m_partitions = std::make_unique<CodePartitions>(std::move(*read));
    m_partitions_model = model;
  }
  return m_partitions.get();
}

std::vector<ChunkRow> Reader::chunks(std::int16_t model, const std::vector<ChunkKey>& keys) {
  if (keys.empty()) return {};
  std::vector<std::string> blobs, ordinals;
  for (const ChunkKey& key : keys) {
    blobs.push_back(key.blob);
    ordinals.push_back(std::to_string(key.ordinal));
  }
  const std::string sql = std::string("SELECT encode(c.blob_id, 'hex'), c.ordinal, ") + k_row_columns +
                          " FROM unnest($2::text[], $3::int[]) AS k(b, o) "
                          "JOIN chunks c ON c.model_id = $1 AND c.blob_id = decode(k.b, 'hex') AND c.ordinal = k.o";
  const Rows rows = m_connection->exec(sql, {Param::text(std::to_string(model)), Param::text(text_array(blobs)),
                                             Param::text(text_array(ordinals))});
  std::vector<ChunkRow> result;
  result.reserve(rows.size());
  for (const auto& row : rows.rows) result.push_back(row_of(row, ChunkKey{row[0], static_cast<int>(to_int(row[1]))}, 2));
  return result;
}

std::vector<Holder> Reader::holders(const std::vector<std::int64_t>& refs, const std::vector<std::string>& blobs) {
  if (refs.empty() || blobs.empty()) return {};
  const Rows rows = m_connection->exec(
      "SELECT encode(blob_id, 'hex'), ref_id, path, language FROM snapshot_files "
      "WHERE ref_id = ANY($1::bigint[]) AND blob_id = ANY(SELECT decode(h, 'hex') FROM unnest($2::text[]) h) "
      "ORDER BY 1, 2, 3",
      {Param::text(array_of(refs)), Param::text(text_array(blobs))});
  std::vector<Holder> holders;
  holders.reserve(rows.size());
  for (const auto& row : rows.rows) holders.push_back(Holder{row[0], to_int(row[1]), row[2], row[3]});
  return holders;
}

std::vector<std::pair<std::string, std::string>> Reader::texts(const std::vector<std::string>& blobs) {
  if (blobs.empty()) return {};
  const Rows rows = m_connection->exec(
      "SELECT encode(blob_id, 'hex'), size, encode(text, 'hex') FROM blob_texts "
      "WHERE blob_id = ANY(SELECT decode(h, 'hex') FROM unnest($1::text[]) h)",
      {Param::text(text_array(blobs))});
  std::vector<std::pair<std::string, std::string>> texts;
  for (const auto& row : rows.rows) {
    const auto compressed = from_hex(row[2]);
    auto text = compressed ? util::decompress(*compressed, static_cast<std::size_t>(to_int(row[1])))
                           : util::Result<std::string>(util::Error{"not hex"});
    if (!text) {
      throw util::Failure("store at " + where() + ": the text of blob " + row[0] + " is damaged: " +
                          text.error().message);
    }
    texts.emplace_back(row[0], std::move(text).value());
  }
  return texts;
}

std::optional<std::string> Reader::file_text(std::int64_t ref, const std::string& path) {
  const Rows rows = m_connection->exec(
      "SELECT encode(t.blob_id, 'hex') FROM snapshot_files f JOIN blob_texts t ON t.blob_id = f.blob_id "
      "WHERE f.ref_id = $1 AND f.path = $2",
      {Param::text(std::to_string(ref)), Param::text(path)});
  if (rows.size() == 0) return std::nullopt;
  auto text = texts({rows.at(0, 0)});
  if (text.empty()) return std::nullopt;  // removed by a collector between the two reads
  return std::move(text.front().second);
}

namespace {

// The best files by their history: the rows of the refs holding any term (GIN `?|`, or by
// ref), each term's occurrences read once per row (f0, f1, …), how many of them hold each
// term (d0, …) and its IDF as FTS5 floors it (each part MATERIALIZED: inlined, the planner
// recomputed the counts for every row), scored by BM25 with FTS5's k1 and b over the refs'
// histories (their number and tokens kept per ref), ties by the file key core/search sorts
// by (which scores them again, as it does a local index's). `distinct` terms; `asked`: per
// term asked, repeats included, its position among them. Parameters: $1 the refs, $2 the
// distinct terms, $3 the limit.
std::string history_sql(std::size_t distinct, const std::vector<std::size_t>& asked, bool by_ref) {
  const auto add = [](std::string& out, std::initializer_list<std::string_view> pieces) {
    for (const std::string_view piece : pieces) out.append(piece);
  };
  std::string lookups, frequencies, counts, documents, idfs, score;
  for (std::size_t i = 0; i < distinct; ++i) {
    const std::string n = std::to_string(i);
    const std::string position = std::to_string(i + 1);
    add(lookups, {", coalesce((h.terms ->> ($2::text[])[", position, "])::int, 0) AS f", n});
    add(frequencies, {", m.f", n});
    add(documents, {", s.d", n});
    add(counts, {i == 0 ? "" : ", ", "count(*) FILTER (WHERE f", n, " > 0)::float8 AS d", n});
    std::string idf;
    add(idf, {"ln((greatest(n.files, d.d", n, ") - d.d", n, " + 0.5) / (d.d", n, " + 0.5))"});
    add(idfs, {", CASE WHEN ", idf, " > 0 THEN ", idf, " ELSE 1e-6 END AS i", n});
  }
  for (const std::size_t term : asked) {
    const std::string n = std::to_string(term);
    if (!score.empty()) score += " + ";
    add(score, {"s.i", n, " * m.f", n, " * 2.2 / (m.f", n,
                " + 1.2 * (0.25 + 0.75 * m.length::float8 / s.average))"});
  }
  std::string sql =
      "WITH n AS MATERIALIZED (SELECT coalesce(sum(history_files), 0)::float8 AS files, "
      "coalesce(sum(history_tokens), 0)::float8 AS tokens FROM refs WHERE id = ANY($1::bigint[])), "
      "m AS MATERIALIZED (SELECT h.ref_id, h.path, h.length";
  // `IS TRUE` is no condition the terms' index can answer: the refs' rows are read by key.
  add(sql, {lookups, " FROM file_history h WHERE h.ref_id = ANY($1::bigint[]) AND ",
            by_ref ? "(h.terms ?| $2::text[]) IS TRUE" : "h.terms ?| $2::text[]", "), ",
            "d AS MATERIALIZED (SELECT ", counts, " FROM m), ",
            "s AS MATERIALIZED (SELECT n.files, n.tokens, ",
            "greatest(n.tokens / greatest(n.files, 1), 1) AS average, d.*", idfs, " FROM n, d) SELECT m.ref_id, m.path, m.length", frequencies,
            ", s.files, s.tokens", documents, " FROM m, s ORDER BY ", score,
            " DESC, (m.ref_id::text || E'\\n' || m.path) COLLATE \"C\" LIMIT $3"});
  return sql;
}

} // namespace

HistoryMatches Reader::match_history(const std::vector<std::int64_t>& refs, std::int64_t files,
                                     const std::vector<std::string>& terms, int limit) {
  HistoryMatches matches;
  if (refs.empty() || terms.empty() || limit <= 0) return matches;
  std::vector<std::string> distinct;
  std::vector<std::size_t> asked;
  for (const std::string& term : terms) {
    const auto found = std::find(distinct.begin(), distinct.end(), term);
    asked.push_back(static_cast<std::size_t>(found - distinct.begin()));
    if (found == distinct.end()) distinct.push_back(term);
  }
  const Rows rows =
      m_connection->exec(history_sql(distinct.size(), asked, files < k_history_by_ref_below),
                         {Param::text(array_of(refs)), Param::text(text_array(distinct)),
                          Param::text(std::to_string(limit))});
  // Columns: ref_id, path, length, a frequency per distinct term, files, tokens, a document
  // frequency per distinct term.
  const std::size_t files_column = 3 + distinct.size();
  for (const auto& row : rows.rows) {
    if (matches.best.empty()) {
      matches.files = to_int(row[files_column]);
      matches.tokens = to_int(row[files_column + 1]);
      for (const std::size_t term : asked) {
        matches.document_frequency.push_back(to_int(row[files_column + 2 + term]));
      }
    }
    HistoryMatch match{to_int(row[0]), row[1], static_cast<int>(to_int(row[2])), {}};
    for (const std::size_t term : asked)
      match.frequency.push_back(static_cast<int>(to_int(row[3 + term])));
    matches.best.push_back(std::move(match));
  }
  return matches;
}

} // namespace kasava::pgstore
