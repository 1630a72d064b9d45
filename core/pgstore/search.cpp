// The read side of the shared store for `ask --store`: see search.hpp. Lists travel as array
// parameters (blob ids as hex), never spliced into SQL.
#include "core/pgstore/search.hpp"

#include <algorithm>
#include <cmath>
#include <initializer_list>
#include <sstream>
#include <string_view>

#include "core/pgstore/connection.hpp"
#include "core/pgstore/store.hpp"
#include "core/util/compression.hpp"

namespace kasava::pgstore {
namespace {

// A PostgreSQL array literal of numbers; text elements: text_array (connection.hpp).
std::string array_of(const std::vector<std::int64_t>& numbers) {
  std::string literal = "{";
  for (const std::int64_t n : numbers) {
    if (literal.size() > 1) literal += ',';
    literal += std::to_string(n);
  }
  return literal + "}";
}

std::int64_t number(const std::string& text) {
  try {
    return text.empty() ? 0 : std::stoll(text);
  } catch (const std::exception&) {
    return 0;
  }
}

// The candidates of a lexical search: the chunks of the refs' snapshots holding any of the
// terms (GIN, `?|`), each term's counts read with one lookup into the chunk's terms, scored by
// BM25 with FTS5's k1 (1.2) and b (0.75) as FTS5's bm25() (and core/store's kasava_bm25) has
// them: the SQL score only chooses which candidates to send, core/search ranks them with the
// same numbers. The lookups sit in a subquery kept apart (OFFSET 0) so that each is made once
// per chunk, not once per use. Parameters: $1 model, $2 refs, $3 the terms, $4..$7 the field
// weights, $8 the average length, $9 the limit, then per term its text and its IDF.
std::string match_sql(std::size_t terms) {
  // Appends pieces: `"literal" + std::string` trips GCC 12's -Wrestrict.
  const auto add = [](std::string& out, std::initializer_list<std::string_view> pieces) {
    for (const std::string_view piece : pieces) out.append(piece);
  };
  std::string lookups, counts, score;
  for (std::size_t i = 0; i < terms; ++i) {
    const std::string v = std::to_string(i);
    const std::string term = std::to_string(10 + 2 * i);
    const std::string idf = std::to_string(11 + 2 * i);
    add(lookups, {", coalesce((c.terms ->> $", term, ")::int, 0) AS v", v});
    add(counts, {", v", v});
    if (!score.empty()) score += " + ";
    add(score, {"CASE WHEN v", v, " = 0 THEN 0 ELSE $", idf, "::float8 * 2.2 / (1 + k / (((v", v,
                " >> 21) & 127) * $4::float8 + ((v", v, " >> 14) & 127) * $5::float8 + ((v", v,
                " >> 7) & 127) * $6::float8 + (v", v, " & 127) * $7::float8)) END"});
  }
  std::string sql;
  add(sql, {"WITH b AS MATERIALIZED (SELECT DISTINCT blob_id FROM snapshot_files WHERE ref_id = ANY($2::bigint[])),\n"
            "m AS (\n  SELECT c.blob_id, c.ordinal, c.length, x.*\n  FROM chunks c\n"
            "  CROSS JOIN LATERAL (SELECT 1.2 * (0.25 + 0.75 * c.length / $8::float8) AS k",
            lookups,
            " OFFSET 0) x\n  WHERE c.model_id = $1 AND c.terms ?| $3::text[] AND c.blob_id IN (SELECT blob_id FROM b))\n"
            "SELECT encode(blob_id, 'hex'), ordinal, length",
            counts, ", ", score, " AS score\nFROM m ORDER BY score DESC, blob_id, ordinal LIMIT $9"});
  return sql;
}

constexpr const char* k_nearest_sql = R"sql(
SELECT encode(c.blob_id, 'hex'), c.ordinal, bit_count(c.code # $3::bit varying) AS d
FROM chunks c
WHERE c.model_id = $1 AND c.code IS NOT NULL AND length(c.code) = $4
  AND c.blob_id IN (SELECT blob_id FROM snapshot_files
                    WHERE ref_id = ANY($2::bigint[]) AND ($6 = '' OR language = $6))
ORDER BY d, c.blob_id, c.ordinal
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

util::Result<ReaderPool::Lease> ReaderPool::acquire() {
  for (;;) {
    std::unique_ptr<Reader> reader;
    {
      const std::lock_guard<std::mutex> lock(m_mutex);
      if (m_idle.empty()) break;
      reader = std::move(m_idle.back());
      m_idle.pop_back();
    }
    if (reader->answers()) return Lease(*this, std::move(reader));
  }
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
    const Rows exists = c.exec("SELECT to_regclass('kasava_schema') IS NOT NULL");
    if (exists.at(0, 0) != "t") {
      return util::Error{"store at " + c.where() +
                         ": no kasava store in this database: publish to it first with `kasava index --store`"};
    }
    const int version = static_cast<int>(number(c.exec("SELECT max(version) FROM kasava_schema").at(0, 0)));
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
      "SELECT f.id, r.name, f.name, coalesce(m.name, ''), "
      "to_char(f.published_at AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.US\"Z\"') "
      "FROM refs f JOIN repositories r ON r.id = f.repository_id LEFT JOIN models m ON m.id = f.model_id "
      "WHERE f.published_at IS NOT NULL ORDER BY r.name, f.published_at DESC, f.name");
  std::vector<RefInfo> refs;
  for (const auto& row : rows.rows) refs.push_back(RefInfo{number(row[0]), row[1], row[2], row[3], row[4]});
  return refs;
}

std::int16_t Reader::model_id(const std::string& model) {
  const Rows rows = m_connection->exec("SELECT id FROM models WHERE name = $1", {Param::text(model)});
  return rows.size() == 0 ? 0 : static_cast<std::int16_t>(number(rows.at(0, 0)));
}

TermStatistics Reader::term_statistics(std::int16_t model, const std::vector<std::string>& terms) {
  TermStatistics statistics;
  const Rows totals = m_connection->exec("SELECT chunks, tokens FROM model_stats WHERE model_id = $1",
                                         {Param::text(std::to_string(model))});
  if (totals.size() > 0) {
    statistics.chunks = number(totals.at(0, 0));
    statistics.tokens = number(totals.at(0, 1));
  }
  const Rows rows = m_connection->exec(
      "SELECT coalesce(s.chunks, 0) FROM unnest($2::text[]) WITH ORDINALITY AS t(term, n) "
      "LEFT JOIN term_stats s ON s.model_id = $1 AND s.term = t.term ORDER BY t.n",
      {Param::text(std::to_string(model)), Param::text(text_array(terms))});
  for (const auto& row : rows.rows) statistics.document_frequency.push_back(number(row[0]));
  return statistics;
}

std::vector<TermMatch> Reader::match_terms(std::int16_t model, const std::vector<std::int64_t>& refs,
                                           const std::vector<std::string>& terms,
                                           const TermStatistics& statistics,
                                           const std::array<double, 4>& weights, int limit) {
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
  for (std::size_t i = 0; i < terms.size(); ++i) {
    const double frequency =
        i < statistics.document_frequency.size() ? static_cast<double>(statistics.document_frequency[i]) : 0.0;
    params.push_back(Param::text(terms[i]));
    params.push_back(Param::text(as_text(std::log(std::max((chunks - frequency + 0.5) / (frequency + 0.5), 1.000001)))));
  }
  const Rows rows = m_connection->exec(match_sql(terms.size()), params);
  std::vector<TermMatch> matches;
  matches.reserve(rows.size());
  for (const auto& row : rows.rows) {
    TermMatch match{ChunkKey{row[0], static_cast<int>(number(row[1]))}, static_cast<int>(number(row[2])), {}};
    for (std::size_t i = 0; i < terms.size() && 3 + i < row.size(); ++i) {
      const std::int64_t packed = number(row[3 + i]);
      if (packed == 0) continue;
      match.terms.emplace_back(terms[i], std::array<int, 4>{static_cast<int>((packed >> 21) & 127),
                                                            static_cast<int>((packed >> 14) & 127),
                                                            static_cast<int>((packed >> 7) & 127),
                                                            static_cast<int>(packed & 127)});
    }
    matches.push_back(std::move(match));
  }
  return matches;
}

std::vector<CodeMatch> Reader::nearest_codes(std::int16_t model, const std::vector<std::int64_t>& refs,
                                             const std::string& code, int limit, const std::string& language) {
  if (refs.empty() || code.empty()) return {};
  std::string bits = "x";  // bit varying's hex input
  bits.append(to_hex(code));
  const Rows rows = m_connection->exec(
      k_nearest_sql, {Param::text(std::to_string(model)), Param::text(array_of(refs)), Param::text(bits), Param::text(std::to_string(code.size() * 8)),
                      Param::text(std::to_string(limit)), Param::text(language)});
  std::vector<CodeMatch> matches;
  matches.reserve(rows.size());
  for (const auto& row : rows.rows) {
    matches.push_back(CodeMatch{ChunkKey{row[0], static_cast<int>(number(row[1]))}, static_cast<int>(number(row[2]))});
  }
  return matches;
}

std::vector<ChunkRow> Reader::chunks(std::int16_t model, const std::vector<ChunkKey>& keys) {
  if (keys.empty()) return {};
  std::vector<std::string> blobs, ordinals;
  for (const ChunkKey& key : keys) {
    blobs.push_back(key.blob);
    ordinals.push_back(std::to_string(key.ordinal));
  }
  const std::string sql =
      "SELECT encode(c.blob_id, 'hex'), c.ordinal, c.kind, c.symbol, c.parent, c.signature, c.doc, "
      "c.start_line, c.end_line, coalesce(encode(c.vector, 'hex'), '') "
      "FROM unnest($2::text[], $3::int[]) AS k(b, o) "
      "JOIN chunks c ON c.model_id = $1 AND c.blob_id = decode(k.b, 'hex') AND c.ordinal = k.o";
  const Rows rows = m_connection->exec(sql, {Param::text(std::to_string(model)), Param::text(text_array(blobs)),
                                             Param::text(text_array(ordinals))});
  std::vector<ChunkRow> result;
  result.reserve(rows.size());
  for (const auto& row : rows.rows) {
    ChunkRow chunk;
    chunk.key = ChunkKey{row[0], static_cast<int>(number(row[1]))};
    chunk.chunk.kind = row[2];
    chunk.chunk.symbol = row[3];
    chunk.chunk.parent = row[4];
    chunk.chunk.signature = row[5];
    chunk.chunk.doc = row[6];
    chunk.chunk.start_line = static_cast<int>(number(row[7]));
    chunk.chunk.end_line = static_cast<int>(number(row[8]));
    chunk.vector = from_hex(row[9]).value_or("");
    result.push_back(std::move(chunk));
  }
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
  for (const auto& row : rows.rows) holders.push_back(Holder{row[0], number(row[1]), row[2], row[3]});
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
    auto text = compressed ? util::decompress(*compressed, static_cast<std::size_t>(number(row[1])))
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

std::vector<std::tuple<std::int64_t, std::string, std::string>> Reader::histories(
    const std::vector<std::int64_t>& refs) {
  if (refs.empty()) return {};
  const Rows rows = m_connection->exec(
      "SELECT ref_id, path, subjects FROM file_history WHERE ref_id = ANY($1::bigint[]) ORDER BY 1, 2",
      {Param::text(array_of(refs))});
  std::vector<std::tuple<std::int64_t, std::string, std::string>> histories;
  histories.reserve(rows.size());
  for (const auto& row : rows.rows) histories.emplace_back(number(row[0]), row[1], row[2]);
  return histories;
}

} // namespace kasava::pgstore
