// Tests of core/pgstore/partitions.cpp: which partition a code is written to and which a
// search reads, and, against a real PostgreSQL server started for this test binary, training
// when due (not before, not while a publisher holds the lock, again when the codes doubled),
// publishes that put new codes in their nearest partition, and searches that read the nearest
// partitions and find what reading every code finds.
#include <catch2/catch.hpp>

#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "core/pgstore/connection.hpp"
#include "core/pgstore/partitions.hpp"
#include "core/pgstore/search.hpp"
#include "core/pgstore/store.hpp"
#include "core/util/code_partitions.hpp"
#include "tests/support/postgres_server.hpp"
#include "tests/unit/pgstore_support.hpp"

using kasava::pgstore::BlobUpload;
using kasava::pgstore::ChunkKey;
using kasava::pgstore::ChunkUpload;
using kasava::pgstore::CodePartitions;
using kasava::pgstore::Reader;
using kasava::pgstore::Snapshot;
using kasava::test_support::PostgresServer;
using kasava::test::numbered_blob_id;
using kasava::test::open_pg_store;

namespace {

constexpr std::size_t k_bytes = 8;

// Blobs `first`.. of 10 chunks each, whose codes lie near one of `centers` (3 bits flipped).
std::vector<BlobUpload> clustered_blobs(int first, int blobs, const std::vector<std::string>& centers,
                                        std::mt19937& random) {
  std::vector<BlobUpload> uploads;
  for (int b = first; b < first + blobs; ++b) {
    BlobUpload upload;
    upload.blob_id = numbered_blob_id(b);
    upload.language = "python";
    for (int c = 0; c < 10; ++c) {
      ChunkUpload chunk;
      chunk.chunk.kind = "function";
      chunk.chunk.symbol = "f" + std::to_string(c);
      chunk.chunk.text = "def f" + std::to_string(c) + "():\n    return 1\n";
      chunk.chunk.start_line = 2 * c + 1;
      chunk.chunk.end_line = 2 * c + 2;
      upload.text += chunk.chunk.text;
      chunk.code = centers[random() % centers.size()];
      for (int flip = 0; flip < 3; ++flip) {
        const unsigned bit = random() % (k_bytes * 8);
        chunk.code[bit / 8] = static_cast<char>(chunk.code[bit / 8] ^ (1 << (bit % 8)));
      }
      chunk.values = std::string(36, '\x01');
      upload.chunks.push_back(chunk);
    }
    uploads.push_back(std::move(upload));
  }
  return uploads;
}

Snapshot snapshot_of(int blobs) {
  Snapshot snapshot{"org/a", "main", "c0ffee", "builtin", {}, {}};
  for (int b = 1; b <= blobs; ++b) {
    snapshot.files.push_back({"src/f" + std::to_string(b) + ".py", numbered_blob_id(b), "python"});
  }
  return snapshot;
}

// How many of the store's codes are not in the partition of their nearest centroid.
int misplaced_codes(PostgresServer& server, const std::string& database, const CodePartitions& partitions) {
  std::istringstream rows(server.psql(
      database, "SELECT encode(substring(varbit_send(code) from 5), 'hex') || ' ' || partition FROM chunk_codes"));
  int misplaced = 0;
  std::string hex;
  long partition = 0;
  while (rows >> hex >> partition) {
    const auto code = kasava::pgstore::from_hex(hex);
    REQUIRE(code);
    const auto nearest = kasava::util::assign_partitions(reinterpret_cast<const std::uint8_t*>(code->data()), 1,
                                                         partitions.centroids, partitions.code_bytes);
    misplaced += static_cast<long>(nearest.at(0)) == partition ? 0 : 1;
  }
  return misplaced;
}

} // namespace

TEST_CASE("pgstore::partitions_of and partitions_to_read", "[pgstore][partitions]") {
  CodePartitions partitions;
  partitions.code_bytes = 1;
  partitions.centroids = {0x00, 0x0F, 0xFF};
  partitions.sizes = {10, 30, 60};
  partitions.trained_codes = 100;
  // The nearest centroid; -1 for a code of another length, and for every code without partitions.
  const std::string near_first = "\x01", near_last = "\xFE", longer = "\x01\x02";
  CHECK(kasava::pgstore::partitions_of(partitions, {&near_first, &near_last, &longer}) ==
        std::vector<std::int32_t>{0, 2, -1});
  CHECK(kasava::pgstore::partitions_of(std::nullopt, {&near_first, &near_last}) == std::vector<std::int32_t>{-1, -1});
  // Nearest first (distances 1, 3, 7) until the sizes reach the share; -1 always.
  CHECK(kasava::pgstore::partitions_to_read(partitions, near_first, 0.05) == std::vector<std::int32_t>{-1, 0});
  CHECK(kasava::pgstore::partitions_to_read(partitions, near_first, 0.25) == std::vector<std::int32_t>{-1, 0, 1});
  CHECK(kasava::pgstore::partitions_to_read(partitions, near_first, 1.0) == std::vector<std::int32_t>{-1, 0, 1, 2});
  CHECK(kasava::pgstore::partitions_to_read(partitions, near_last, 0.5) == std::vector<std::int32_t>{-1, 2});
  CHECK(kasava::pgstore::partitions_to_read(partitions, longer, 0.5) == std::vector<std::int32_t>{-1});
}

TEST_CASE("pgstore: codes partitioned when due, kept in place by publishes, searched nearest partitions first",
          "[pgstore][partitions]") {
  PostgresServer& server = PostgresServer::shared();
  const std::string database = server.create_database("partitions");
  std::mt19937 random(5);
  std::vector<std::string> centers(16);
  for (auto& center : centers) {
    for (std::size_t i = 0; i < k_bytes; ++i) center += static_cast<char>(random() & 0xff);
  }
  auto store = open_pg_store(server.uri(database));
  REQUIRE(store->put_blobs(clustered_blobs(1, 150, centers, random), "builtin") == 150);
  store->swap_snapshot(snapshot_of(150));

  // Not below the bound; then every code in its nearest partition, sizes counted.
  CHECK(store->update_partitions("builtin", 2000) == 0);
  CHECK(server.psql(database, "SELECT count(*) FROM code_partitions") == "0");
  CHECK(server.psql(database, "SELECT count(*) FROM chunk_codes WHERE partition = -1") == "1500");
  CHECK(store->update_partitions("builtin", 1000) == 1500);
  CHECK(server.psql(database, "SELECT generation || ' ' || code_bytes || ' ' || array_length(sizes, 1) || ' ' || "
                              "trained_codes FROM code_partitions") ==
        "1 8 " + std::to_string(kasava::util::partition_count(1500)) + " 1500");
  const auto sizes_wrong = [&] {
    return server.psql(database, "SELECT count(*) FROM code_partitions p, generate_subscripts(p.sizes, 1) i "
                                 "WHERE p.sizes[i] <> (SELECT count(*) FROM chunk_codes WHERE partition = i - 1)");
  };
  CHECK(sizes_wrong() == "0");
  auto partitions = kasava::pgstore::read_partitions(store->connection(), 1);
  REQUIRE(partitions);
  CHECK(misplaced_codes(server, database, *partitions) == 0);
  // Not again until the codes have doubled.
  CHECK(store->update_partitions("builtin", 1000) == 0);

  // A publish puts each new code in its nearest partition.
  REQUIRE(store->put_blobs(clustered_blobs(151, 100, centers, random), "builtin") == 100);
  store->swap_snapshot(snapshot_of(250));
  CHECK(server.psql(database, "SELECT count(*) FROM chunk_codes WHERE partition = -1") == "0");
  CHECK(misplaced_codes(server, database, *partitions) == 0);

  // A search across the store reads the partitions nearest its query and finds what reading
  // every code finds; a code moved to a partition no search reads (as in a damaged store) is
  // found only by reading every code.
  auto opened = Reader::open(server.uri(database));
  REQUIRE(opened);
  Reader& reader = **opened;
  const auto refs = reader.refs();
  REQUIRE(refs.size() == 1);
  const std::vector<std::int64_t> ref_ids = {refs[0].id};
  const std::int16_t model = reader.model_id("builtin");
  int identical = 0;
  for (int query = 0; query < 40; ++query) {
    std::string code = centers[static_cast<std::size_t>(query) % centers.size()];
    const unsigned bit = random() % (k_bytes * 8);
    code[bit / 8] = static_cast<char>(code[bit / 8] ^ (1 << (bit % 8)));
    const auto every = reader.nearest_codes(model, ref_ids, code, 10, "", 1.0);
    const auto nearest = reader.nearest_codes(model, ref_ids, code, 10, "", Reader::k_probe_share);
    REQUIRE(every.size() == 10);
    REQUIRE(nearest.size() == 10);
    bool same = true;
    for (std::size_t i = 0; i < every.size(); ++i) same = same && every[i].distance == nearest[i].distance;
    identical += same ? 1 : 0;
  }
  CHECK(identical >= 38);
  const ChunkKey moved{numbered_blob_id(5), 3};
  const std::string moved_code = kasava::pgstore::from_hex(server.psql(
      database, "SELECT encode(substring(varbit_send(code) from 5), 'hex') FROM chunk_codes WHERE blob_id = '\\x" +
                    moved.blob + "' AND ordinal = 3")).value();
  server.psql(database, "UPDATE chunk_codes SET partition = 9999 WHERE blob_id = '\\x" + moved.blob + "' AND ordinal = 3");
  const auto every = reader.nearest_codes(model, ref_ids, moved_code, 10, "", 1.0);
  REQUIRE(!every.empty());
  CHECK(every[0].key == moved);
  CHECK(every[0].distance == 0);
  const auto nearest = reader.nearest_codes(model, ref_ids, moved_code, 10, "", Reader::k_probe_share);
  CHECK(nearest.size() == 10);
  for (const auto& match : nearest) CHECK_FALSE(match.key == moved);

  // Due again once the codes have doubled, but not while a publisher holds the lock; then
  // trained anew (every code placed again, the moved one too), and a search finds it again.
  REQUIRE(store->put_blobs(clustered_blobs(251, 100, centers, random), "builtin") == 100);
  store->swap_snapshot(snapshot_of(350));
  {
    auto publisher = open_pg_store(server.uri(database));
    publisher->hold_publish_lock();
    CHECK(store->update_partitions("builtin", 1000) == 0);
    // Its swap releases the lock before it returns (a closed connection's backend releases
    // it a moment later, which the training's try-lock could still see).
    publisher->swap_snapshot(snapshot_of(350));
  }
  CHECK(store->update_partitions("builtin", 1000) == 3500);
  CHECK(server.psql(database, "SELECT generation || ' ' || trained_codes FROM code_partitions") == "2 3500");
  CHECK(sizes_wrong() == "0");
  partitions = kasava::pgstore::read_partitions(store->connection(), 1);
  REQUIRE(partitions);
  CHECK(partitions->generation == 2);
  CHECK(misplaced_codes(server, database, *partitions) == 0);
  const auto found = reader.nearest_codes(model, {reader.refs()[0].id}, moved_code, 10, "", Reader::k_probe_share);
  REQUIRE(!found.empty());
  CHECK(found[0].key == moved);
}
