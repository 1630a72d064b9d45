// Tests of core/pgstore/maintenance against a real PostgreSQL server started for this test
// binary (tests/support/postgres_server.hpp): a removal takes exactly the blobs nothing else
// references and keeps the statistics exact; the check finds orphans, stale statistics and
// damaged blobs, and the repair fixes them.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "core/pgstore/maintenance.hpp"
#include "tests/support/postgres_server.hpp"
#include "tests/unit/pgstore_support.hpp"

using kasava::pgstore::BlobUpload;
using kasava::pgstore::ChunkUpload;
using kasava::pgstore::Snapshot;
using kasava::pgstore::SnapshotFile;
using kasava::pgstore::Store;
using kasava::test_support::PostgresServer;
using kasava::test::numbered_blob_id;
using kasava::test::open_pg_store;

namespace {

// A blob of `chunks` chunks with 16-dimension vectors (a 2-byte code, 8 bytes of values and
// a 4-byte scale), sharing the term "shared" and each with a term of its own.
BlobUpload blob(int n, int chunks = 1) {
  BlobUpload upload;
  upload.blob_id = numbered_blob_id(n);
  upload.language = "python";
  for (int i = 0; i < chunks; ++i) {
    const std::string symbol = "symbol" + std::to_string(n) + "_" + std::to_string(i);
    upload.text += "def " + symbol + "():\n    return shared\n";
    ChunkUpload chunk;
    chunk.chunk.kind = "function";
    chunk.chunk.symbol = symbol;
    chunk.chunk.start_line = 2 * i + 1;
    chunk.chunk.end_line = 2 * i + 2;
    chunk.chunk.text = "def " + symbol + "():\n    return shared\n";
    chunk.code = std::string("\x0f\xf0", 2);
    chunk.values = std::string(12, '\x01');
    upload.chunks.push_back(chunk);
  }
  return upload;
}

Snapshot snapshot(const std::string& repository, const std::string& ref, const std::vector<int>& blobs) {
  Snapshot result{repository, ref, std::string(40, 'a'), "test-model", {}, {}};
  for (const int n : blobs) result.files.push_back(SnapshotFile{"f" + std::to_string(n) + ".py", numbered_blob_id(n), "python"});
  return result;
}

std::int64_t count(const std::string& database, const std::string& sql) {
  return std::stoll(PostgresServer::shared().psql(database, sql));
}

} // namespace

TEST_CASE("pgstore maintenance: a removal takes exactly the blobs nothing else references",
          "[pgstore]") {
  PostgresServer& server = PostgresServer::shared();
  const std::string database = server.create_database("remove");
  const auto store = open_pg_store(server.uri(database));
  std::vector<BlobUpload> uploads;
  for (int n = 1; n <= 3; ++n) uploads.push_back(blob(n, n));  // 1, 2 and 3 chunks
  store->put_blobs(uploads, "test-model");
  store->swap_snapshot(snapshot("acme/app", "main", {1, 2}));
  store->swap_snapshot(snapshot("acme/app", "dev", {2, 3}));
  store->swap_snapshot(snapshot("fork/app", "main", {1}));
  REQUIRE(kasava::pgstore::check_store(*store).sound());

  const auto dev = kasava::pgstore::remove_published(*store, "acme/app", std::string("dev"));
  REQUIRE(dev);
  CHECK(dev->refs == std::vector<std::string>{"dev"});
  CHECK_FALSE(dev->repository_removed);
  CHECK(dev->blobs == 1);  // 3; 2 is still main's
  CHECK(dev->chunks == 3);
  CHECK(dev->texts == 1);
  CHECK(count(database, "SELECT chunks FROM term_stats WHERE term = 'share'") == 3);
  CHECK(count(database, "SELECT chunks FROM model_stats") == 3);

  const auto all = kasava::pgstore::remove_published(*store, "acme/app", std::nullopt);
  REQUIRE(all);
  CHECK(all->repository_removed);
  CHECK(all->blobs == 1);  // 2; 1 is still the fork's
  CHECK(all->chunks == 2);
  CHECK(count(database, "SELECT chunks FROM term_stats WHERE term = 'share'") == 1);
  CHECK(count(database, "SELECT count(*) FROM term_stats WHERE term LIKE 'symbol2%'") == 0);
  const auto check = kasava::pgstore::check_store(*store);
  CHECK(check.sound());
  CHECK(check.orphan_blobs == 0);
  CHECK(check.orphan_texts == 0);
  CHECK(check.blobs == 1);

  const auto unknown = kasava::pgstore::remove_published(*store, "acme/app", std::nullopt);
  REQUIRE_FALSE(unknown);
  CHECK(unknown.error().message.find("no repository 'acme/app'") != std::string::npos);
  const auto no_ref = kasava::pgstore::remove_published(*store, "fork/app", std::string("dev"));
  REQUIRE_FALSE(no_ref);
  CHECK(no_ref.error().message.find("has no ref 'dev'") != std::string::npos);
  CHECK(count(database, "SELECT count(*) FROM refs") == 1);
}

TEST_CASE("pgstore maintenance: the check finds orphans, stale statistics and damaged blobs, "
          "the repair fixes them", "[pgstore]") {
  PostgresServer& server = PostgresServer::shared();
  const std::string database = server.create_database("repair");
  const auto store = open_pg_store(server.uri(database));
  store->put_blobs({blob(1, 2), blob(2, 2), blob(3, 1)}, "test-model");
  Snapshot main = snapshot("acme/app", "main", {1, 2});  // 3: sent, never referenced
  main.history = {{"f1.py", "Share the pool"}, {"f2.py", "Fix sharing"}};
  store->swap_snapshot(main);
  CHECK(kasava::pgstore::check_store(*store).history_stats_wrong == 0);
  server.psql(database, "UPDATE term_stats SET chunks = chunks + 1 WHERE term = 'share'");
  server.psql(database, "UPDATE refs SET history_tokens = history_tokens + 1");
  server.psql(database, "UPDATE chunks SET vector = '\\x0102'::bytea WHERE blob_id = decode('" + numbered_blob_id(2) +
                            "', 'hex') AND ordinal = 1");
  // A code in a partition of a model that has none.
  server.psql(database, "UPDATE chunk_codes SET partition = 7 WHERE blob_id = decode('" + numbered_blob_id(1) +
                            "', 'hex') AND ordinal = 0");

  auto check = kasava::pgstore::check_store(*store);
  CHECK_FALSE(check.sound());
  CHECK(check.orphan_blobs == 1);
  CHECK(check.orphan_texts == 0);  // its blob row still names it
  CHECK(check.term_stats_wrong == 1);
  CHECK(check.model_stats_wrong == 0);
  CHECK(check.history_stats_wrong == 1);
  CHECK(check.damaged_blobs == 1);
  CHECK(check.codes_astray == 1);
  CHECK(check.missing.empty());

  const auto repaired = kasava::pgstore::repair_store(*store);
  CHECK(repaired.blobs_removed == 2);  // 2 (damaged) and 3 (orphan)
  CHECK(repaired.chunks_removed == 3);
  CHECK(repaired.texts_removed == 1);  // 3's; 2's text is still named by the snapshot
  CHECK(repaired.statistics_recomputed);
  CHECK(repaired.codes_placed == 1);
  check = kasava::pgstore::check_store(*store);
  CHECK(check.codes_astray == 0);
  CHECK(count(database, "SELECT count(*) FROM chunk_codes WHERE partition <> -1") == 0);
  CHECK(check.term_stats_wrong == 0);
  CHECK(check.model_stats_wrong == 0);
  CHECK(check.history_stats_wrong == 0);
  CHECK(count(database, "SELECT history_files * 100 + history_tokens FROM refs") == 2 * 100 + 5);
  CHECK(check.damaged_blobs == 0);
  CHECK(check.orphan_blobs == 0);
  REQUIRE(check.missing.size() == 1);  // 2 must be published again
  CHECK(check.missing[0].repository == "acme/app");
  CHECK(check.missing[0].blobs == 1);
  CHECK(count(database, "SELECT chunks FROM term_stats WHERE term = 'share'") == 2);

  // Published again, the store is sound.
  store->put_blobs({blob(2, 2)}, "test-model");
  CHECK(kasava::pgstore::check_store(*store).sound());
}
