// Removal, checks and repairs of the shared store (see maintenance.hpp). Sets of blobs travel
// between statements as comma-separated hex ids and model numbers (neither contains a comma),
// split on the server with string_to_array: no SQL built from data.
#include "core/pgstore/maintenance.hpp"

#include "core/pgstore/connection.hpp"
#include "core/util/strings.hpp"

namespace kasava::pgstore {

namespace {

Param lock_param() { return Param::text(std::to_string(k_collect_lock)); }

// A set of (blob, model) rows: hex ids and model numbers, each comma-separated.
struct BlobSet {
  std::string ids;
  std::string models;
  std::int64_t size = 0;
};

BlobSet blob_set(const Rows& rows) {
  BlobSet set;
  for (const auto& row : rows.rows) {
    if (set.size++ > 0) {
      set.ids += ',';
      set.models += ',';
    }
    set.ids += row.at(0);
    set.models += row.at(1);
  }
  return set;
}

// The (blob, model) pairs of `set` as a relation d(blob_id, model_id) for a WITH clause.
constexpr const char* k_set_cte =
    "d AS (SELECT decode(b, 'hex') AS blob_id, m::smallint AS model_id "
    "FROM unnest(string_to_array($1, ','), string_to_array($2, ',')) AS u(b, m))";

// Deletes the blobs of `set` with their chunks, subtracting their terms, chunks and tokens
// from the statistics first (unless `keep_statistics`: they are recomputed afterwards).
// Returns the chunks deleted.
std::int64_t delete_blobs(Connection& c, const BlobSet& set, bool keep_statistics) {
  if (set.size == 0) return 0;
  const std::vector<Param> params = {Param::text(set.ids), Param::text(set.models)};
  if (!keep_statistics) {
    c.exec(std::string("WITH ") + k_set_cte +
               ", t AS (SELECT c.model_id, x.term AS term, count(*) AS n FROM chunks c "
               "JOIN d USING (blob_id, model_id), jsonb_object_keys(c.terms) x(term) GROUP BY 1, 2) "
               "UPDATE term_stats s SET chunks = s.chunks - t.n FROM t "
               "WHERE s.model_id = t.model_id AND s.term = t.term",
           params);
    c.exec("DELETE FROM term_stats WHERE chunks <= 0");
    c.exec(std::string("WITH ") + k_set_cte +
               ", t AS (SELECT c.model_id, count(*) AS n, coalesce(sum(c.length), 0) AS tokens "
               "FROM chunks c JOIN d USING (blob_id, model_id) GROUP BY 1) "
               "UPDATE model_stats m SET chunks = m.chunks - t.n, tokens = m.tokens - t.tokens "
               "FROM t WHERE m.model_id = t.model_id",
           params);
  }
  const Rows chunks = c.exec(std::string("WITH ") + k_set_cte +
                                 ", gone AS (DELETE FROM chunks c USING d WHERE c.blob_id = d.blob_id "
                                 "AND c.model_id = d.model_id RETURNING 1) SELECT count(*) FROM gone",
                             params);
  c.exec(std::string("WITH ") + k_set_cte +
             " DELETE FROM blobs b USING d WHERE b.blob_id = d.blob_id AND b.model_id = d.model_id",
         params);
  return to_int(chunks.at(0, 0));
}

// Texts among `hex_ids` (all texts when null) that no blob row and no snapshot file names.
std::int64_t delete_texts(Connection& c, const std::string* hex_ids) {
  const std::string unreferenced =
      "NOT EXISTS (SELECT 1 FROM blobs b WHERE b.blob_id = t.blob_id) AND "
      "NOT EXISTS (SELECT 1 FROM snapshot_files s WHERE s.blob_id = t.blob_id)";
  const Rows gone =
      hex_ids == nullptr
          ? c.exec("WITH gone AS (DELETE FROM blob_texts t WHERE " + unreferenced +
                   " RETURNING 1) SELECT count(*) FROM gone")
          : c.exec("WITH gone AS (DELETE FROM blob_texts t WHERE t.blob_id = ANY (SELECT decode(h, 'hex') "
                   "FROM unnest(string_to_array($1, ',')) h) AND " + unreferenced +
                       " RETURNING 1) SELECT count(*) FROM gone",
                   {Param::text(*hex_ids)});
  return to_int(gone.at(0, 0));
}

// A (blob, model) row no snapshot of a ref with that model names.
constexpr const char* k_unreferenced =
    "NOT EXISTS (SELECT 1 FROM snapshot_files s JOIN refs f ON f.id = s.ref_id "
    "WHERE s.blob_id = b.blob_id AND f.model_id = b.model_id)";

// Blob rows whose chunks disagree with them (count, ordinals, code and vector lengths against
// the model's usual code length) or whose text is missing: hex id, model.
constexpr const char* k_damaged_blobs = R"sql(
WITH lengths AS (
  SELECT model_id, mode() WITHIN GROUP (ORDER BY length(code)) AS bits FROM chunk_codes GROUP BY model_id),
counted AS (
  SELECT c.blob_id, c.model_id, count(*) AS n, max(c.ordinal) AS top, min(c.ordinal) AS bottom,
    bool_or((k.code IS NULL) <> (c.vector IS NULL) OR length(k.code) <> l.bits OR
            octet_length(c.vector) - 4 NOT BETWEEN (length(k.code) - 6) / 2 AND length(k.code) / 2) AS bad
  FROM chunks c LEFT JOIN chunk_codes k USING (blob_id, model_id, ordinal)
  LEFT JOIN lengths l ON l.model_id = c.model_id GROUP BY c.blob_id, c.model_id)
SELECT encode(b.blob_id, 'hex'), b.model_id FROM blobs b
LEFT JOIN counted k ON k.blob_id = b.blob_id AND k.model_id = b.model_id
WHERE coalesce(k.n, 0) <> b.chunks OR (k.n > 0 AND (k.top <> k.n - 1 OR k.bottom <> 0))
   OR coalesce(k.bad, false) OR NOT EXISTS (SELECT 1 FROM blob_texts t WHERE t.blob_id = b.blob_id)
ORDER BY 1, 2
)sql";

constexpr const char* k_stray_chunks =
    "SELECT count(*) FROM chunks c WHERE NOT EXISTS "
    "(SELECT 1 FROM blobs b WHERE b.blob_id = c.blob_id AND b.model_id = c.model_id)";

constexpr const char* k_term_stats_wrong = R"sql(
WITH actual AS (
  SELECT c.model_id, x.term AS term, count(*) AS n FROM chunks c, jsonb_object_keys(c.terms) x(term) GROUP BY 1, 2)
SELECT count(*) FROM actual a FULL JOIN term_stats s ON s.model_id = a.model_id AND s.term = a.term
WHERE coalesce(a.n, 0) <> coalesce(s.chunks, 0)
)sql";

constexpr const char* k_model_stats_wrong = R"sql(
WITH actual AS (SELECT model_id, count(*) AS n, coalesce(sum(length), 0) AS tokens FROM chunks GROUP BY 1)
SELECT count(*) FROM model_stats m FULL JOIN actual a ON a.model_id = m.model_id
WHERE coalesce(a.n, 0) <> coalesce(m.chunks, 0) OR coalesce(a.tokens, 0) <> coalesce(m.tokens, 0)
)sql";

// The refs whose history totals (BM25's collection for file histories) differ from their
// histories.
constexpr const char* k_history_stats_wrong = R"sql(
WITH actual AS (SELECT ref_id, count(*) AS files, sum(length) AS tokens FROM file_history GROUP BY 1)
SELECT count(*) FROM refs f LEFT JOIN actual a ON a.ref_id = f.id
WHERE coalesce(a.files, 0) <> f.history_files OR coalesce(a.tokens, 0) <> f.history_tokens
)sql";

// Codes in a partition their model does not have (schema 6): a search that reads the nearest
// partitions never reads them. -1 (not partitioned yet) is always read.
constexpr const char* k_codes_astray = R"sql(
SELECT c.blob_id, c.model_id, c.ordinal FROM chunk_codes c LEFT JOIN code_partitions p ON p.model_id = c.model_id
WHERE c.partition <> -1 AND (p.model_id IS NULL OR c.partition < 0 OR c.partition >= cardinality(p.sizes))
)sql";

} // namespace

util::Result<Removal> remove_published(Store& store, const std::string& repository,
                                       const std::optional<std::string>& ref) {
  Connection& c = store.connection();
  Transaction transaction(c);
  // First, before any row lock: waits for the publishers between their check and their swap.
  c.exec("SELECT pg_advisory_xact_lock($1)", {lock_param()});
  const Rows found = c.exec("SELECT id FROM repositories WHERE name = $1 FOR UPDATE", {Param::text(repository)});
  if (found.size() == 0) {
    return util::Error{"store at " + c.where() + ": no repository " + util::quoted(repository)};
  }
  const std::string repository_id = found.at(0, 0);
  const Rows refs =
      ref ? c.exec("SELECT id, name FROM refs WHERE repository_id = $1 AND name = $2 FOR UPDATE",
                   {Param::text(repository_id), Param::text(*ref)})
          : c.exec("SELECT id, name FROM refs WHERE repository_id = $1 ORDER BY name FOR UPDATE",
                   {Param::text(repository_id)});
  if (ref && refs.size() == 0) {
    return util::Error{"store at " + c.where() + ": repository " + util::quoted(repository) + " has no ref " +
                       util::quoted(*ref)};
  }
  Removal removal;
  removal.repository = repository;
  std::string ref_ids;
  for (const auto& row : refs.rows) {
    if (!ref_ids.empty()) ref_ids += ',';
    ref_ids += row.at(0);
    removal.refs.push_back(row.at(1));
  }
  const Param ids_param = Param::text(ref_ids);
  const Rows candidates = c.exec(
      "SELECT coalesce(string_agg(DISTINCT encode(blob_id, 'hex'), ','), '') FROM snapshot_files "
      "WHERE ref_id = ANY (string_to_array($1, ',')::bigint[])",
      {ids_param});
  const std::string candidate_ids = candidates.at(0, 0);
  c.exec("DELETE FROM refs WHERE id = ANY (string_to_array($1, ',')::bigint[])", {ids_param});
  const Rows left = c.exec("SELECT count(*) FROM refs WHERE repository_id = $1", {Param::text(repository_id)});
  if (to_int(left.at(0, 0)) == 0) {
    c.exec("DELETE FROM repositories WHERE id = $1", {Param::text(repository_id)});
    removal.repository_removed = true;
  }
  // The removed snapshots' blobs that no remaining snapshot of their model names.
  const BlobSet doomed = blob_set(c.exec(
      std::string("SELECT encode(b.blob_id, 'hex'), b.model_id FROM blobs b WHERE b.blob_id = ANY "
                  "(SELECT decode(h, 'hex') FROM unnest(string_to_array($1, ',')) h) AND ") +
          k_unreferenced + " ORDER BY 1, 2",
      {Param::text(candidate_ids)}));
  removal.blobs = doomed.size;
  removal.chunks = delete_blobs(c, doomed, false);
  removal.texts = delete_texts(c, &candidate_ids);
  transaction.commit();
  return removal;
}

StoreCheck check_store(Store& store) {
  Connection& c = store.connection();
  Transaction transaction(c);
  c.exec("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY");
  StoreCheck check;
  check.where = c.where();
  const Rows counts =
      c.exec("SELECT (SELECT count(*) FROM refs), (SELECT count(*) FROM blobs), (SELECT count(*) FROM chunks)");
  check.refs = to_int(counts.at(0, 0));
  check.blobs = to_int(counts.at(0, 1));
  check.chunks = to_int(counts.at(0, 2));
  const Rows missing = c.exec(
      "SELECT r.name, f.name, count(*) FROM snapshot_files s JOIN refs f ON f.id = s.ref_id "
      "JOIN repositories r ON r.id = f.repository_id WHERE NOT EXISTS (SELECT 1 FROM blobs b "
      "WHERE b.blob_id = s.blob_id AND b.model_id = f.model_id) GROUP BY 1, 2 ORDER BY 1, 2");
  for (const auto& row : missing.rows) check.missing.push_back(MissingBlobs{row[0], row[1], to_int(row[2])});
  check.damaged_blobs = static_cast<std::int64_t>(c.exec(k_damaged_blobs).size());
  check.stray_chunks = to_int(c.exec(k_stray_chunks).at(0, 0));
  check.term_stats_wrong = to_int(c.exec(k_term_stats_wrong).at(0, 0));
  check.model_stats_wrong = to_int(c.exec(k_model_stats_wrong).at(0, 0));
  check.history_stats_wrong = to_int(c.exec(k_history_stats_wrong).at(0, 0));
  check.codes_astray = to_int(c.exec(std::string("SELECT count(*) FROM (") + k_codes_astray + ") a").at(0, 0));
  check.orphan_blobs =
      to_int(c.exec(std::string("SELECT count(*) FROM blobs b WHERE ") + k_unreferenced).at(0, 0));
  check.orphan_texts = to_int(
      c.exec("SELECT count(*) FROM blob_texts t WHERE NOT EXISTS (SELECT 1 FROM blobs b WHERE b.blob_id = t.blob_id) "
             "AND NOT EXISTS (SELECT 1 FROM snapshot_files s WHERE s.blob_id = t.blob_id)")
          .at(0, 0));
  transaction.commit();
  return check;
}

StoreRepair repair_store(Store& store) {
  Connection& c = store.connection();
  Transaction transaction(c);
  c.exec("SELECT pg_advisory_xact_lock($1)", {lock_param()});
  StoreRepair repair;
  const BlobSet damaged = blob_set(c.exec(k_damaged_blobs));
  repair.chunks_removed += delete_blobs(c, damaged, true);
  repair.blobs_removed += damaged.size;
  const Rows stray = c.exec("WITH gone AS (DELETE FROM chunks c WHERE NOT EXISTS (SELECT 1 FROM blobs b "
                            "WHERE b.blob_id = c.blob_id AND b.model_id = c.model_id) RETURNING 1) "
                            "SELECT count(*) FROM gone");
  repair.chunks_removed += to_int(stray.at(0, 0));
  const BlobSet orphans = blob_set(
      c.exec(std::string("SELECT encode(b.blob_id, 'hex'), b.model_id FROM blobs b WHERE ") + k_unreferenced +
             " ORDER BY 1, 2"));
  repair.chunks_removed += delete_blobs(c, orphans, true);
  repair.blobs_removed += orphans.size;
  repair.texts_removed = delete_texts(c, nullptr);
  const bool stale = to_int(c.exec(k_term_stats_wrong).at(0, 0)) > 0 ||
                     to_int(c.exec(k_model_stats_wrong).at(0, 0)) > 0;
  if (stale) {
    c.exec_script(
        "DELETE FROM term_stats;"
        "INSERT INTO term_stats(model_id, term, chunks) "
        "SELECT c.model_id, x.term, count(*) FROM chunks c, jsonb_object_keys(c.terms) x(term) GROUP BY 1, 2;"
        "DELETE FROM model_stats;"
        "INSERT INTO model_stats(model_id, chunks, tokens) "
        "SELECT m.id, count(c.ordinal), coalesce(sum(c.length), 0) FROM models m "
        "LEFT JOIN chunks c ON c.model_id = m.id GROUP BY m.id;");
    repair.statistics_recomputed = true;
  }
  repair.codes_placed = to_int(c.exec(std::string("WITH astray AS (") + k_codes_astray +
                                      "), placed AS (UPDATE chunk_codes c SET partition = -1 FROM astray a "
                                      "WHERE (c.blob_id, c.model_id, c.ordinal) = (a.blob_id, a.model_id, a.ordinal) "
                                      "RETURNING 1) SELECT count(*) FROM placed")
                                   .at(0, 0));
  if (to_int(c.exec(k_history_stats_wrong).at(0, 0)) > 0) {
    c.exec(
        "UPDATE refs f SET history_files = coalesce(a.files, 0), "
        "history_tokens = coalesce(a.tokens, 0) FROM refs r LEFT JOIN (SELECT ref_id, "
        "count(*) AS files, sum(length) AS tokens FROM file_history GROUP BY 1) a "
        "ON a.ref_id = r.id WHERE r.id = f.id");
    repair.statistics_recomputed = true;
  }
  transaction.commit();
  return repair;
}

} // namespace kasava::pgstore
