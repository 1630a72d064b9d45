// The shared PostgreSQL store (see store.hpp): schema versions, publishing, status. Bulk rows
// travel as array parameters expanded with unnest() on the server (one statement per table
// and batch, no SQL built from data), the largest (blob texts, chunks) as binary COPY streams.
#include "core/pgstore/store.hpp"

#include <algorithm>
#include <array>
#include <map>
#include <set>
#include <string_view>
#include <unordered_map>

#include "core/pgstore/connection.hpp"
#include "core/pgstore/partitions.hpp"
#include "core/util/compression.hpp"
#include "core/util/hash.hpp"
#include "core/util/json.hpp"
#include "core/util/stem.hpp"
#include "core/util/strings.hpp"
#include "core/util/tokenize.hpp"

namespace kasava::pgstore {

namespace {

// Every session that creates or upgrades the schema holds this transaction-level advisory
// lock first, so two kasava runs on a new database do not both create it.
constexpr std::int64_t k_schema_lock = 0x6b61736176610001;

// Version 1: repositories and refs, each ref's snapshot (path → blob), blob texts (zstd,
// shared by every model), blobs per (blob, model) with their chunks; a chunk holds its
// metadata, its terms (tsvector of kasava's tokens, GIN-indexed), its length in tokens, its
// binary code (bit varying, for bit_count Hamming filtering) and its 4-bit values. A chunk's
// text is the blob's lines start_line..end_line: not stored twice.
constexpr const char* k_schema_1 = R"sql(
CREATE TABLE kasava_schema(version integer NOT NULL);
CREATE TABLE models(id smallserial PRIMARY KEY, name text UNIQUE NOT NULL);
CREATE TABLE repositories(id bigserial PRIMARY KEY, name text UNIQUE NOT NULL);
CREATE TABLE refs(
  id bigserial PRIMARY KEY,
  repository_id bigint NOT NULL REFERENCES repositories(id),
  name text NOT NULL,
  commit_id text NOT NULL DEFAULT '',
  model_id smallint REFERENCES models(id),
  files bigint NOT NULL DEFAULT 0,
  chunks bigint NOT NULL DEFAULT 0,
  digest text NOT NULL DEFAULT '',
  published_at timestamptz,
  UNIQUE(repository_id, name)
);
CREATE TABLE snapshot_files(
  ref_id bigint NOT NULL REFERENCES refs(id) ON DELETE CASCADE,
  path text NOT NULL,
  blob_id bytea NOT NULL,
  language text NOT NULL,
  PRIMARY KEY(ref_id, path)
);
CREATE INDEX snapshot_files_blob ON snapshot_files(blob_id);
CREATE TABLE blob_texts(blob_id bytea PRIMARY KEY, size bigint NOT NULL, text bytea NOT NULL);
CREATE TABLE blobs(
  blob_id bytea NOT NULL,
  model_id smallint NOT NULL REFERENCES models(id),
  language text NOT NULL,
  chunks integer NOT NULL,
  published_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY(blob_id, model_id)
);
CREATE TABLE chunks(
  blob_id bytea NOT NULL,
  model_id smallint NOT NULL,
  ordinal integer NOT NULL,
  kind text NOT NULL,
  symbol text NOT NULL,
  parent text NOT NULL,
  signature text NOT NULL,
  doc text NOT NULL,
  start_line integer NOT NULL,
  end_line integer NOT NULL,
  length integer NOT NULL,
  terms tsvector NOT NULL,
  code bit varying,
  vector bytea,
  PRIMARY KEY(blob_id, model_id, ordinal)
);
CREATE INDEX chunks_terms ON chunks USING gin(terms);
CREATE TABLE file_history(
  ref_id bigint NOT NULL REFERENCES refs(id) ON DELETE CASCADE,
  path text NOT NULL,
  subjects text NOT NULL,
  PRIMARY KEY(ref_id, path)
);
INSERT INTO kasava_schema(version) VALUES (1);
)sql";

// Version 2: the statistics BM25 needs, kept as blobs arrive: in how many chunks each term
// occurs, and the chunks and tokens per model (average length). Upgrading fills them from the
// chunks already stored.
constexpr const char* k_schema_2 = R"sql(
CREATE TABLE term_stats(
  model_id smallint NOT NULL,
  term text NOT NULL,
  chunks bigint NOT NULL,
  PRIMARY KEY(model_id, term)
);
CREATE TABLE model_stats(model_id smallint PRIMARY KEY, chunks bigint NOT NULL, tokens bigint NOT NULL);
INSERT INTO model_stats(model_id, chunks, tokens)
  SELECT m.id, count(c.ordinal), coalesce(sum(c.length), 0)
  FROM models m LEFT JOIN chunks c ON c.model_id = m.id GROUP BY m.id;
DO $$
DECLARE model smallint;
BEGIN
  FOR model IN SELECT id FROM models LOOP
    INSERT INTO term_stats(model_id, term, chunks)
      SELECT model, word, ndoc
      FROM ts_stat(format('SELECT terms FROM chunks WHERE model_id = %s', model));
  END LOOP;
END $$;
UPDATE kasava_schema SET version = 2;
)sql";

// Version 3: terms are Porter stems (util::porter_stem, as FTS5 stems the local index) and a
// chunk's length counts the tokens of all its fields (FTS5's row length, less the path). The
// stored terms cannot be re-stemmed in SQL, so the upgrade forgets the chunks (blob texts and
// snapshots stay): every ref's digest is cleared, and its next publish sends its blobs again.
constexpr const char* k_schema_3 = R"sql(
DELETE FROM chunks;
DELETE FROM blobs;
DELETE FROM term_stats;
UPDATE model_stats SET chunks = 0, tokens = 0;
UPDATE refs SET digest = '';
UPDATE kasava_schema SET version = 3;
)sql";

// Version 4: a chunk's terms are a jsonb object, stemmed term → its occurrences per field
// packed in one number (term_counts_value), GIN-indexed by key (`?|`, `?&`), instead of a
// tsvector: BM25 in SQL reads a term's counts with one lookup (`->>`), where a tsvector had
// to be cut to the query's lexemes and expanded into rows (25 µs a chunk against 4, measured
// on a 561,000-chunk store). And the codes have a table of their own, so that the Hamming
// scan reads 54 MB instead of every chunk's row (900 MB there). The chunks are written anew
// (an UPDATE would leave every old row behind); the tsvector's weights are the fields, so
// nothing is sent again.
constexpr const char* k_schema_4 = R"sql(
DROP INDEX chunks_terms;
ALTER TABLE chunks RENAME TO chunks_3;
ALTER INDEX chunks_pkey RENAME TO chunks_3_pkey;
CREATE TABLE chunks(
  blob_id bytea NOT NULL,
  model_id smallint NOT NULL,
  ordinal integer NOT NULL,
  kind text NOT NULL,
  symbol text NOT NULL,
  parent text NOT NULL,
  signature text NOT NULL,
  doc text NOT NULL,
  start_line integer NOT NULL,
  end_line integer NOT NULL,
  length integer NOT NULL,
  terms jsonb NOT NULL,
  vector bytea,
  PRIMARY KEY(blob_id, model_id, ordinal)
);
CREATE TABLE chunk_codes(
  blob_id bytea NOT NULL,
  model_id smallint NOT NULL,
  ordinal integer NOT NULL,
  code bit varying NOT NULL,
  PRIMARY KEY(blob_id, model_id, ordinal),
  FOREIGN KEY(blob_id, model_id, ordinal) REFERENCES chunks ON DELETE CASCADE
);
INSERT INTO chunks
  SELECT c.blob_id, c.model_id, c.ordinal, c.kind, c.symbol, c.parent, c.signature, c.doc, c.start_line,
         c.end_line, c.length,
         coalesce((SELECT jsonb_object_agg(u.lexeme, (
                     least(coalesce(cardinality(array_positions(u.weights, 'A')), 0), 127) * 2097152 +
                     least(coalesce(cardinality(array_positions(u.weights, 'B')), 0), 127) * 16384 +
                     least(coalesce(cardinality(array_positions(u.weights, 'C')), 0), 127) * 128 +
                     least(coalesce(cardinality(array_positions(u.weights, 'D')), 0), 127))::text)
                   FROM unnest(c.terms) u), '{}'),
         c.vector
  FROM chunks_3 c;
INSERT INTO chunk_codes SELECT blob_id, model_id, ordinal, code FROM chunks_3 WHERE code IS NOT NULL;
DROP TABLE chunks_3;
CREATE INDEX chunks_terms ON chunks USING gin(terms);
UPDATE kasava_schema SET version = 4;
)sql";

// Version 5: each file history's stemmed terms and length, so that BM25 over the histories
// runs in SQL on the rows holding a query's terms (GIN `?|`), instead of every history of the
// searched refs crossing to kasava to be tokenised on each search; and per ref the number of
// its histories and their tokens, the collection's size and average length. The terms are
// kasava's stems, which SQL cannot make: fill_history_terms computes them between this script
// and k_schema_5_after, in the same transaction, writing the histories anew (an UPDATE would
// leave every old row behind). Every lookup in a compressed `terms` decompresses it again,
// so rows stay whole up to a page (TOAST compresses from 2 KB), and larger terms are
// compressed with lz4 where the server has it; the subjects, read only to compute terms
// anew, are zstd (util::compress) to keep rows small. Measured on 20,000 histories of 1.5
// KB, a query whose 4 terms all of them hold: 230 ms with pglz, 200 with lz4, 135
// uncompressed.
constexpr const char* k_schema_5 = R"sql(
ALTER TABLE file_history RENAME TO file_history_4;
ALTER INDEX file_history_pkey RENAME TO file_history_4_pkey;
CREATE TABLE file_history(
  ref_id bigint NOT NULL REFERENCES refs(id) ON DELETE CASCADE,
  path text NOT NULL,
  subjects bytea NOT NULL,
  terms jsonb NOT NULL,
  length integer NOT NULL,
  PRIMARY KEY(ref_id, path)
) WITH (toast_tuple_target = 8160);
DO $$
BEGIN
  ALTER TABLE file_history ALTER COLUMN terms SET COMPRESSION lz4;
EXCEPTION WHEN feature_not_supported THEN NULL;
END $$;
ALTER TABLE refs ADD COLUMN history_files bigint NOT NULL DEFAULT 0,
  ADD COLUMN history_tokens bigint NOT NULL DEFAULT 0;
)sql";
constexpr const char* k_schema_5_after = R"sql(
DROP TABLE file_history_4;
CREATE INDEX file_history_terms ON file_history USING gin(terms);
UPDATE refs f SET history_files = h.files, history_tokens = h.tokens
  FROM (SELECT ref_id, count(*) AS files, sum(length) AS tokens FROM file_history GROUP BY ref_id) h
  WHERE h.ref_id = f.id;
UPDATE kasava_schema SET version = 5;
)sql";

// Version 6: a coarse partition of each model's codes (util/code_partitions.hpp), so that a
// search across most of the store reads the codes of the partitions nearest its query, not
// every code. `code_partitions` holds a model's centroids (back to back, `code_bytes` each),
// each partition's size and how many codes there were when they were trained, and a
// generation that a retraining increments (readers keep centroids by it);
// `chunk_codes.partition` is the code's nearest centroid, -1 until its model is partitioned
// (a search reads those always). The index keeps each partition's codes together for an
// index-only scan.
constexpr const char* k_schema_6 = R"sql(
CREATE TABLE code_partitions(
  model_id smallint PRIMARY KEY REFERENCES models(id),
  generation bigint NOT NULL,
  code_bytes integer NOT NULL,
  centroids bytea NOT NULL,
  sizes integer[] NOT NULL,
  trained_codes bigint NOT NULL
);
ALTER TABLE chunk_codes ADD COLUMN partition integer NOT NULL DEFAULT -1;
CREATE INDEX chunk_codes_partition ON chunk_codes(model_id, partition) INCLUDE (blob_id, ordinal, code);
UPDATE kasava_schema SET version = 6;
)sql";

// Version 7: term_stats keeps half of each page free (and is rewritten so), so that a
// publish's upserts of its terms' counts update rows in place (heap-only tuples: no new index
// entry, no other page). Measured on 13,400 terms already counted: 136 ms an upsert in full
// pages, 55 ms in half-empty ones; a 5,100-chunk publish into an empty store took ~60 ms less
// (median of 5 pairs).
constexpr const char* k_schema_7 = R"sql(
ALTER TABLE term_stats SET (fillfactor = 50);
CLUSTER term_stats USING term_stats_pkey;
UPDATE kasava_schema SET version = 7;
)sql";

// File histories as file_history takes them, in arrays for unnest(): paths, subjects (zstd,
// hex), terms and lengths; both a publish and the schema 5 upgrade write them.
struct HistoryRows {
  std::vector<std::string> paths, subjects, terms, lengths;
  void add(std::string path, std::string_view text, util::StemCache& stems) {
    int length = 0;
    paths.push_back(std::move(path));
    subjects.push_back(to_hex(util::compress(text)));
    terms.push_back(history_terms(text, length, &stems));
    lengths.push_back(std::to_string(length));
  }
};

// Every history of schema 4 written again with its terms and length, 2,000 at a time by key.
void fill_history_terms(Connection& connection) {
  util::StemCache stems;
  std::string after_ref = "0", after_path;
  for (;;) {
    const Rows rows = connection.exec(
        "SELECT ref_id, path, subjects FROM file_history_4 WHERE (ref_id, path) > ($1::bigint, $2) "
        "ORDER BY ref_id, path LIMIT 2000",
        {Param::text(after_ref), Param::text(after_path)});
    if (rows.size() == 0) return;
    std::vector<std::string> refs;
    HistoryRows histories;
    for (const auto& row : rows.rows) {
      refs.push_back(row[0]);
      histories.add(row[1], row[2], stems);
    }
    connection.exec(
        "INSERT INTO file_history(ref_id, path, subjects, terms, length) "
        "SELECT r, p, decode(s, 'hex'), t::jsonb, l "
        "FROM unnest($1::bigint[], $2::text[], $3::text[], $4::text[], $5::integer[]) "
        "AS u(r, p, s, t, l)",
        {Param::text(text_array(refs)), Param::text(text_array(histories.paths)),
         Param::text(text_array(histories.subjects)), Param::text(text_array(histories.terms)),
         Param::text(text_array(histories.lengths))});
    after_ref = refs.back();
    after_path = histories.paths.back();
  }
}

// A schema step: a script, and what kasava computes after it when SQL cannot (then `after`).
struct Step {
  const char* script;
  void (*compute)(Connection&) = nullptr;
  const char* after = nullptr;
};
constexpr Step k_steps[] = {{k_schema_1},
                            {k_schema_2},
                            {k_schema_3},
                            {k_schema_4},
                            {k_schema_5, fill_history_terms, k_schema_5_after},
                            {k_schema_6},
                            {k_schema_7}};
static_assert(std::size(k_steps) == k_schema_version);

// Text PostgreSQL accepts: valid UTF-8 without NUL bytes (invalid bytes and NULs become U+FFFD).
std::string clean_text(std::string_view text) {
  std::string valid = util::is_valid_utf8(text) ? std::string(text) : util::to_valid_utf8(text);
  if (valid.find('\0') == std::string::npos) return valid;
  std::string out;
  for (const char c : valid) {
    if (c == '\0') out += "\xEF\xBF\xBD";
    else out += c;
  }
  return out;
}

// The schema version of the connected database, 0 when it has none.
int schema_version(Connection& connection) {
  // A scan of the catalog with the statement's snapshot, not to_regclass(): after waiting for
  // the advisory lock of migrate(), the catalog caches may not have seen the other session's
  // new tables yet (an advisory lock does not process invalidations).
  const Rows exists = connection.exec(
      "SELECT EXISTS (SELECT 1 FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace "
      "WHERE c.relname = 'kasava_schema' AND n.nspname = current_schema())");
  if (exists.at(0, 0) != "t") return 0;
  const Rows rows = connection.exec("SELECT max(version) FROM kasava_schema");
  return rows.size() == 0 ? 0 : static_cast<int>(to_int(rows.at(0, 0)));
}

// Brings the schema from its version to `target` in one transaction (creates it from none).
void migrate(Connection& connection, int target) {
  Transaction transaction(connection);
  connection.exec("SELECT pg_advisory_xact_lock($1)", {Param::text(std::to_string(k_schema_lock))});
  const int version = schema_version(connection);
  if (version > target) return;  // another run upgraded it meanwhile; checked again by open
  for (int step = version + 1; step <= target; ++step) {
    const Step& next = k_steps[step - 1];
    connection.exec_script(next.script);
    if (next.compute != nullptr) next.compute(connection);
    if (next.after != nullptr) connection.exec_script(next.after);
  }
  transaction.commit();
}

std::int16_t model_id(Connection& connection, const std::string& model) {
  connection.exec("INSERT INTO models(name) VALUES ($1) ON CONFLICT (name) DO NOTHING",
                  {Param::text(clean_text(model))});
  const Rows rows = connection.exec("SELECT id FROM models WHERE name = $1", {Param::text(clean_text(model))});
  const auto id = static_cast<std::int16_t>(to_int(rows.at(0, 0)));
  connection.exec("INSERT INTO model_stats(model_id, chunks, tokens) VALUES ($1, 0, 0) "
                  "ON CONFLICT (model_id) DO NOTHING",
                  {Param::text(std::to_string(id))});
  return id;
}

// Runs `work` in a transaction, again when PostgreSQL chose it as a deadlock's victim or
// failed it for serialization (neither should happen with the lock order kept here; a retry
// keeps a publish going if it does), and with `unique_too` when a row it adds was added
// meanwhile by another session (the next attempt sees that row and skips it).
template <typename Work>
auto with_retries(Connection& connection, Work work, bool unique_too = false) {
  for (int attempt = 1;; ++attempt) {
    try {
      Transaction transaction(connection);
      auto result = work();
      transaction.commit();
      return result;
    } catch (const QueryError& error) {
      const bool again = error.retryable() || (unique_too && error.sqlstate() == "23505");
      if (!again || attempt == 5) throw;
    }
  }
}

} // namespace

std::string term_counts_value(const std::array<int, 4>& counts) {
  std::int64_t packed = 0;
  for (const int count : counts) packed = packed * 128 + std::clamp(count, 0, 127);
  return std::to_string(packed);
}

namespace {

// Whether a token becomes a stored term. As the tsvectors of schema 3 had them, so that an
// upgraded store and a new one agree: under 2 KiB, valid UTF-8 (and no NUL, which jsonb
// refuses).
bool storable_token(std::string_view token) {
  return token.size() < 2047 && token.find('\0') == std::string_view::npos &&
         util::is_valid_utf8(token);
}

std::string stem_of(std::string_view token, util::StemCache* stems) {
  return stems != nullptr ? stems->stem(token) : util::porter_stem(token);
}

} // namespace

std::string chunk_terms(const types::Chunk& chunk, int& length, std::vector<std::string>* distinct,
                        util::StemCache* stems) {
  // Each stored token's stem, as the address the cache keeps it at (one per distinct token:
  // "parse" and "parses" have two addresses of "pars"), with its field; grouped by address,
  // then by text. A publish makes this for every chunk: copying each token's stem and
  // sorting the copies was a fifth of its client's CPU.
  util::StemCache own;
  util::StemCache& cache = stems != nullptr ? *stems : own;
  cache.trim();
  std::vector<std::pair<const std::string*, int>> tokens;
  length = 0;
  const auto add = [&](std::string_view text, int field) {
    util::for_each_code_token(text, [&](std::string_view token, std::size_t, std::size_t) {
      ++length;
      if (storable_token(token)) tokens.emplace_back(cache.kept_stem(token), field);
    });
  };
  add(chunk.symbol, 0);
  add(chunk.parent, 0);
  add(chunk.signature, 1);
  add(chunk.doc, 2);
  add(chunk.text, 3);
  std::sort(tokens.begin(), tokens.end(), [](const auto& a, const auto& b) {
    return a.first != b.first ? std::less<const std::string*>{}(a.first, b.first) : a.second < b.second;
  });
  std::vector<std::pair<const std::string*, std::array<int, 4>>> terms;
  for (const auto& [term, field] : tokens) {
    if (terms.empty() || terms.back().first != term) terms.emplace_back(term, std::array<int, 4>{});
    ++terms.back().second[static_cast<std::size_t>(field)];
  }
  std::sort(terms.begin(), terms.end(), [](const auto& a, const auto& b) { return *a.first < *b.first; });
  std::string object = "{";
  for (std::size_t i = 0; i < terms.size();) {
    const std::string* term = terms[i].first;
    std::array<int, 4> counts = terms[i].second;
    for (++i; i < terms.size() && *terms[i].first == *term; ++i) {
      for (std::size_t field = 0; field < counts.size(); ++field) counts[field] += terms[i].second[field];
    }
    if (distinct != nullptr) distinct->push_back(*term);
    if (object.size() > 1) object += ',';
    object += util::json_quote(*term);
    object += ':';
    object += util::json_quote(term_counts_value(counts));
  }
  return object + "}";
}

std::string history_terms(std::string_view text, int& length, util::StemCache* stems) {
  std::map<std::string, int> terms;
  length = 0;
  util::for_each_code_token(text, [&](std::string_view token, std::size_t, std::size_t) {
    ++length;
    if (storable_token(token)) ++terms[stem_of(token, stems)];
  });
  std::string object = "{";
  for (const auto& [term, count] : terms) {
    if (object.size() > 1) object += ',';
    object += util::json_quote(term);
    object += ':';
    object += std::to_string(count);
  }
  return object + "}";
}

Store::Store(std::unique_ptr<Connection> connection) : m_connection(std::move(connection)) {}
Store::~Store() = default;

const std::string& Store::where() const { return m_connection->where(); }

util::Result<std::unique_ptr<Store>> Store::open(const std::string& conninfo) {
  auto connection = Connection::open(conninfo);
  if (!connection) return connection.error();
  Connection& c = **connection;
  try {
    int version = schema_version(c);
    if (version < k_schema_version) {
      migrate(c, k_schema_version);
      version = schema_version(c);
    }
    if (version > k_schema_version) {
      return util::Error{"store at " + c.where() + ": its schema is version " +
                         std::to_string(version) + ", newer than this kasava's (" +
                         std::to_string(k_schema_version) +
                         "): a newer kasava wrote it; use that version (or newer) here"};
    }
  } catch (const util::Failure& error) {
    return util::Error{std::string(error.what()) +
                       "; the store's schema could not be read or created: check that the role may "
                       "create tables in this database"};
  }
  return std::unique_ptr<Store>(new Store(std::move(connection).value()));
}

util::Status Store::create_schema_version(const std::string& conninfo, int version) {
  auto connection = Connection::open(conninfo);
  if (!connection) return connection.error();
  if (version < 1 || version > k_schema_version) return util::Error{"no such schema version"};
  try {
    migrate(**connection, version);
  } catch (const util::Failure& error) {
    return util::Error{error.what()};
  }
  return util::ok_status();
}

void Store::hold_publish_lock() {
  if (m_publish_lock) return;
  m_connection->exec("SELECT pg_advisory_lock_shared($1)", {Param::text(std::to_string(k_collect_lock))});
  m_publish_lock = true;
}

std::vector<std::string> Store::present_blobs(const std::vector<std::string>& blob_ids,
                                              const std::string& model) {
  const Rows rows = m_connection->exec(
      "SELECT encode(b.blob_id, 'hex') FROM blobs b JOIN models m ON m.id = b.model_id "
      "WHERE m.name = $1 AND b.blob_id = ANY (SELECT decode(h, 'hex') FROM unnest($2::text[]) h)",
      {Param::text(clean_text(model)), Param::text(text_array(blob_ids))});
  std::vector<std::string> present;
  present.reserve(rows.size());
  for (const auto& row : rows.rows) present.push_back(row.at(0));
  return present;
}

std::int64_t Store::put_blobs(std::vector<BlobUpload> blobs, const std::string& model) {
  std::sort(blobs.begin(), blobs.end(),
            [](const BlobUpload& a, const BlobUpload& b) { return a.blob_id < b.blob_id; });
  blobs.erase(std::unique(blobs.begin(), blobs.end(),
                          [](const BlobUpload& a, const BlobUpload& b) { return a.blob_id == b.blob_id; }),
              blobs.end());
  if (blobs.empty()) return 0;
  Connection& c = *m_connection;
  const std::int16_t model_number = model_id(c, model);  // committed on its own: first in lock order
  const std::string model_param = std::to_string(model_number);
  return with_retries(c, [&]() -> std::int64_t {
    // Not waiting for this commit's WAL to reach the disk: a server crash may lose the last
    // batches, which the next publish sends again (it asks which blobs the store holds), and
    // never a half-batch. The swap that makes them visible commits synchronously, flushing
    // the WAL of every batch before it.
    c.exec("SET LOCAL synchronous_commit = off");
    // 1. The blob rows, in id order; those another publisher holds are skipped.
    std::vector<std::string> ids, languages, counts;
    for (const BlobUpload& blob : blobs) {
      ids.push_back(blob.blob_id);
      languages.push_back(clean_text(blob.language));
      counts.push_back(std::to_string(blob.chunks.size()));
    }
    const Rows inserted = c.exec(
        "INSERT INTO blobs(blob_id, model_id, language, chunks) "
        "SELECT decode(b, 'hex'), $1, l, n FROM unnest($2::text[], $3::text[], $4::int[]) AS t(b, l, n) "
        "ORDER BY b ON CONFLICT DO NOTHING RETURNING encode(blob_id, 'hex')",
        {Param::text(model_param), Param::text(text_array(ids)), Param::text(text_array(languages)),
         Param::text(text_array(counts))});
    std::set<std::string> mine;
    for (const auto& row : inserted.rows) mine.insert(row.at(0));
    if (mine.empty()) return 0;
    // 2. Their texts (shared across models: those another model's publish stored are left
    // alone), then chunks, each streamed with COPY in key order: the server parses and inserts
    // a buffer while the next is made. No row can conflict: this transaction holds the new
    // blob rows, and a text stored meanwhile by another model's publisher fails this one
    // with a unique violation, run again (with_retries) to skip it.
    std::vector<std::string> mine_list(mine.begin(), mine.end());
    const Rows stored_texts = c.exec(
        "SELECT encode(blob_id, 'hex') FROM blob_texts WHERE blob_id = ANY "
        "(SELECT decode(h, 'hex') FROM unnest($1::text[]) h)",
        {Param::text(text_array(mine_list))});
    std::set<std::string> has_text;
    for (const auto& row : stored_texts.rows) has_text.insert(row.at(0));
    {
      CopyIn texts(c, "COPY blob_texts(blob_id, size, text) FROM STDIN (FORMAT binary)");
      for (const BlobUpload& blob : blobs) {
        if (mine.count(blob.blob_id) == 0 || has_text.count(blob.blob_id) > 0) continue;
        texts.value(*from_hex(blob.blob_id))
            .int64(static_cast<std::int64_t>(blob.text.size()))
            .value(util::compress(blob.text))
            .end_row();
      }
      texts.finish();
    }
    std::unordered_map<std::string, std::int64_t> term_counts;
    std::int64_t chunk_count = 0;
    std::int64_t token_count = 0;
    {
      CopyIn rows(c, "COPY chunks(blob_id, model_id, ordinal, kind, symbol, parent, signature, doc, "
                     "start_line, end_line, length, terms, vector) FROM STDIN (FORMAT binary)");
      std::vector<std::string> distinct;
      for (const BlobUpload& blob : blobs) {
        if (mine.count(blob.blob_id) == 0) continue;
        const std::string id = *from_hex(blob.blob_id);
        for (std::size_t i = 0; i < blob.chunks.size(); ++i) {
          const ChunkUpload& upload = blob.chunks[i];
          const types::Chunk& chunk = upload.chunk;
          int length = 0;
          distinct.clear();
          // jsonb's binary form: its format version (1), then the JSON text.
          const std::string terms = '\x01' + chunk_terms(chunk, length, &distinct, &m_stems);
          rows.value(id)
              .int16(model_number)
              .int32(static_cast<std::int32_t>(i))
              .value(clean_text(chunk.kind))
              .value(clean_text(chunk.symbol))
              .value(clean_text(chunk.parent))
              .value(clean_text(chunk.signature))
              .value(clean_text(chunk.doc))
              .int32(chunk.start_line)
              .int32(chunk.end_line)
              .int32(length)
              .value(terms);
          if (upload.values.empty()) rows.null();
          else rows.value(upload.values);
          rows.end_row();
          ++chunk_count;
          token_count += length;
          for (std::string& term : distinct) ++term_counts[std::move(term)];
        }
      }
      rows.finish();
    }
    {
      // Each code in its partition: the centroids cannot change meanwhile, since training
      // waits for every publisher's k_collect_lock (partitions.hpp).
      std::vector<const std::string*> written;
      for (const BlobUpload& blob : blobs) {
        if (mine.count(blob.blob_id) == 0) continue;
        for (const ChunkUpload& chunk : blob.chunks) {
          if (!chunk.code.empty()) written.push_back(&chunk.code);
        }
      }
      const std::vector<std::int32_t> partitions = partitions_of(read_partitions(c, model_number), written);
      std::size_t next = 0;
      CopyIn codes(c, "COPY chunk_codes(blob_id, model_id, ordinal, code, partition) FROM STDIN (FORMAT binary)");
      for (const BlobUpload& blob : blobs) {
        if (mine.count(blob.blob_id) == 0) continue;
        const std::string id = *from_hex(blob.blob_id);
        for (std::size_t i = 0; i < blob.chunks.size(); ++i) {
          if (blob.chunks[i].code.empty()) continue;
          codes.value(id).int16(model_number).int32(static_cast<std::int32_t>(i));
          codes.value(binary_bits(blob.chunks[i].code));
          codes.int32(partitions[next++]);
          codes.end_row();
        }
      }
      codes.finish();
    }
    if (!term_counts.empty()) {
      // In any order: the statement sorts them (the lock order).
      std::vector<std::string> terms, frequencies;
      for (const auto& [term, count] : term_counts) {
        terms.push_back(term);
        frequencies.push_back(std::to_string(count));
      }
      c.exec("INSERT INTO term_stats(model_id, term, chunks) "
             "SELECT $1, t, n FROM unnest($2::text[], $3::bigint[]) AS u(t, n) ORDER BY t "
             "ON CONFLICT (model_id, term) DO UPDATE SET chunks = term_stats.chunks + excluded.chunks",
             {Param::text(model_param), Param::text(text_array(terms)),
              Param::text(text_array(frequencies))});
    }
    c.exec("UPDATE model_stats SET chunks = chunks + $2, tokens = tokens + $3 WHERE model_id = $1",
           {Param::text(model_param), Param::text(std::to_string(chunk_count)),
            Param::text(std::to_string(token_count))});
    return static_cast<std::int64_t>(mine.size());
  }, true);
}

std::int64_t Store::update_partitions(const std::string& model, std::int64_t min_codes) {
  const Rows rows = m_connection->exec("SELECT id FROM models WHERE name = $1", {Param::text(clean_text(model))});
  if (rows.size() == 0) return 0;
  return train_partitions(*m_connection, static_cast<std::int16_t>(to_int(rows.at(0, 0))), min_codes);
}

SwapResult Store::swap_snapshot(const Snapshot& snapshot) {
  const SwapResult result = swap(snapshot);
  if (m_publish_lock) {
    m_connection->exec("SELECT pg_advisory_unlock_shared($1)", {Param::text(std::to_string(k_collect_lock))});
    m_publish_lock = false;
  }
  return result;
}

SwapResult Store::swap(const Snapshot& snapshot) {
  Connection& c = *m_connection;
  const std::int16_t model_number = model_id(c, snapshot.model);
  // In path order, without a copy of the files (78,529 of them on the Linux kernel).
  std::vector<const SnapshotFile*> files;
  files.reserve(snapshot.files.size());
  for (const SnapshotFile& file : snapshot.files) files.push_back(&file);
  std::sort(files.begin(), files.end(),
            [](const SnapshotFile* a, const SnapshotFile* b) { return a->path < b->path; });
  std::uint64_t digest = util::fnv1a64(snapshot.commit + '\n' + snapshot.model + '\n');
  std::vector<std::string> paths, ids, languages;
  for (const SnapshotFile* file : files) {
    paths.push_back(clean_text(file->path));
    ids.push_back(file->blob_id);
    languages.push_back(clean_text(file->language));
    digest = util::fnv1a64(file->path + '\t' + file->blob_id + '\t' + file->language + '\n', digest);
  }
  const std::string digest_text = std::to_string(digest);
  return with_retries(c, [&]() -> SwapResult {
    // The repository's and the ref's rows, locked by the upserts until commit: publishers of
    // the same ref follow each other; readers keep seeing the committed snapshot meanwhile.
    const Rows repository = c.exec(
        "INSERT INTO repositories(name) VALUES ($1) ON CONFLICT (name) DO UPDATE SET name = excluded.name "
        "RETURNING id",
        {Param::text(clean_text(snapshot.repository))});
    const std::string repository_id = repository.at(0, 0);
    const Rows ref = c.exec(
        "INSERT INTO refs(repository_id, name) VALUES ($1, $2) "
        "ON CONFLICT (repository_id, name) DO UPDATE SET name = excluded.name RETURNING id, digest, chunks",
        {Param::text(repository_id), Param::text(clean_text(snapshot.ref))});
    const std::string ref_id = ref.at(0, 0);
    if (ref.at(0, 1) == digest_text) return SwapResult{false, to_int(ref.at(0, 2))};
    const Rows missing = c.exec(
        "SELECT count(*) FROM unnest($1::text[]) h WHERE NOT EXISTS "
        "(SELECT 1 FROM blobs b WHERE b.blob_id = decode(h, 'hex') AND b.model_id = $2)",
        {Param::text(text_array(ids)), Param::text(std::to_string(model_number))});
    if (to_int(missing.at(0, 0)) != 0) {
      throw util::Failure("store at " + c.where() + ": " + missing.at(0, 0) +
                          " blobs of the snapshot are not stored; publish again");
    }
    c.exec("DELETE FROM snapshot_files WHERE ref_id = $1", {Param::text(ref_id)});
    c.exec("INSERT INTO snapshot_files(ref_id, path, blob_id, language) "
           "SELECT $1, p, decode(b, 'hex'), l FROM unnest($2::text[], $3::text[], $4::text[]) AS u(p, b, l)",
           {Param::text(ref_id), Param::text(text_array(paths)), Param::text(text_array(ids)),
            Param::text(text_array(languages))});
    HistoryRows histories;
    for (const auto& [path, text] : snapshot.history)
      histories.add(clean_text(path), clean_text(text), m_stems);
    c.exec("DELETE FROM file_history WHERE ref_id = $1", {Param::text(ref_id)});
    c.exec(
        "INSERT INTO file_history(ref_id, path, subjects, terms, length) "
        "SELECT $1, p, decode(s, 'hex'), t::jsonb, l "
        "FROM unnest($2::text[], $3::text[], $4::text[], $5::integer[]) AS u(p, s, t, l) "
        "ON CONFLICT DO NOTHING",
        {Param::text(ref_id), Param::text(text_array(histories.paths)),
         Param::text(text_array(histories.subjects)), Param::text(text_array(histories.terms)),
         Param::text(text_array(histories.lengths))});
    c.exec(
        "UPDATE refs SET history_files = h.files, history_tokens = h.tokens "
        "FROM (SELECT count(*) AS files, coalesce(sum(length), 0) AS tokens FROM file_history "
        "WHERE ref_id = $1) h WHERE id = $1",
        {Param::text(ref_id)});
    const Rows chunks = c.exec(
        "SELECT coalesce(sum(b.chunks), 0) FROM snapshot_files s "
        "JOIN blobs b ON b.blob_id = s.blob_id AND b.model_id = $2 WHERE s.ref_id = $1",
        {Param::text(ref_id), Param::text(std::to_string(model_number))});
    c.exec("UPDATE refs SET commit_id = $2, model_id = $3, files = $4, chunks = $5, digest = $6, "
           "published_at = now() WHERE id = $1",
           {Param::text(ref_id), Param::text(snapshot.commit), Param::text(std::to_string(model_number)),
            Param::text(std::to_string(files.size())), Param::text(chunks.at(0, 0)),
            Param::text(digest_text)});
    return SwapResult{true, to_int(chunks.at(0, 0))};
  });
}

StoreStatus Store::status() {
  Connection& c = *m_connection;
  StoreStatus status;
  status.where = c.where();
  status.schema_version = schema_version(c);
  const Rows refs = c.exec(
      "SELECT r.name, f.name, f.commit_id, coalesce(m.name, ''), "
      "coalesce(to_char(f.published_at AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"'), ''), "
      "f.files, f.chunks FROM refs f JOIN repositories r ON r.id = f.repository_id "
      "LEFT JOIN models m ON m.id = f.model_id WHERE f.published_at IS NOT NULL "
      "ORDER BY r.name, f.name");
  std::set<std::string> repositories;
  for (const auto& row : refs.rows) {
    status.refs.push_back(RefStatus{row[0], row[1], row[2], row[3], row[4], to_int(row[5]), to_int(row[6])});
    repositories.insert(row[0]);
  }
  status.repositories = static_cast<std::int64_t>(repositories.size());
  const Rows counts = c.exec(
      "SELECT (SELECT count(*) FROM blobs), (SELECT count(*) FROM chunks), "
      "(SELECT sum(pg_total_relation_size(to_regclass(t))) FROM unnest(ARRAY['models', 'repositories', "
      "'refs', 'snapshot_files', 'blob_texts', 'blobs', 'chunks', 'chunk_codes', 'code_partitions', "
      "'file_history', 'term_stats', 'model_stats', 'kasava_schema']) t)");
  status.unique_blobs = to_int(counts.at(0, 0));
  status.chunks = to_int(counts.at(0, 1));
  status.bytes = to_int(counts.at(0, 2));
  return status;
}

} // namespace kasava::pgstore
