// Tests of core/pgstore's read side (search.*) against a real PostgreSQL server started for
// this test binary: the shortcuts a large store takes find exactly what the plain statements
// find — the chunks holding most of the terms first (and the store's best of those), and the
// store's nearest codes first.
#include <catch2/catch.hpp>

#include <algorithm>
#include <memory>
#include <limits>
#include <random>
#include <thread>
#include <chrono>
#include <string>
#include <vector>

#include "core/pgstore/search.hpp"
#include "core/pgstore/store.hpp"
#include "tests/support/postgres_server.hpp"
#include "tests/unit/pgstore_support.hpp"

using kasava::pgstore::BlobUpload;
using kasava::pgstore::ChunkUpload;
using kasava::pgstore::Reader;
using kasava::pgstore::Snapshot;
using kasava::test_support::PostgresServer;
using kasava::test::numbered_blob_id;
using kasava::test::open_pg_store;

namespace {

const std::vector<std::string> k_words = {"parse", "request", "header", "token", "session", "merge", "stream", "cache"};

// `blobs` blobs of 10 chunks each, of random words in their symbol, doc and body (a few
// words often, so that many chunks hold each), with random 16-bit codes.
std::vector<BlobUpload> random_blobs(int first, int blobs, std::mt19937& random) {
  std::vector<BlobUpload> uploads;
  for (int b = first; b < first + blobs; ++b) {
    BlobUpload upload;
    upload.blob_id = numbered_blob_id(b);
    upload.language = "python";
    for (int c = 0; c < 10; ++c) {
      ChunkUpload chunk;
      const auto words = [&](int most) {
        std::string text;
        const int count = static_cast<int>(random() % static_cast<unsigned>(most + 1));
        for (int i = 0; i < count; ++i) text += k_words[random() % k_words.size()] + " ";
        return text;
      };
      chunk.chunk.kind = "function";
      chunk.chunk.symbol = k_words[random() % k_words.size()] + "_" + k_words[random() % k_words.size()];
      chunk.chunk.doc = words(3);
      chunk.chunk.text = "def " + chunk.chunk.symbol + "():\n    " + words(12) + "\n";
      chunk.chunk.start_line = 2 * c + 1;
      chunk.chunk.end_line = 2 * c + 2;
      upload.text += chunk.chunk.text;
      chunk.code = std::string{static_cast<char>(random() & 0xff), static_cast<char>(random() & 0xff)};
      chunk.values = std::string(12, '\x01');
      upload.chunks.push_back(chunk);
    }
    uploads.push_back(std::move(upload));
  }
  return uploads;
}

// A store of 100 random blobs (blob ids 1 to 100), with these snapshots published, and a
// reader of it.
std::unique_ptr<Reader> random_store(const std::string& database, unsigned seed,
                                     const std::vector<Snapshot>& snapshots, std::mt19937& random) {
  PostgresServer& server = PostgresServer::shared();
  random.seed(seed);
  {
    auto store = open_pg_store(server.uri(database));
    REQUIRE(store->put_blobs(random_blobs(1, 100, random), "builtin") == 100);
    for (const Snapshot& snapshot : snapshots) store->swap_snapshot(snapshot);
  }
  auto opened = Reader::open(server.uri(database));
  REQUIRE(opened);
  return std::move(opened).value();
}

Snapshot snapshot_of(const std::string& repository, int first, int blobs) {
  Snapshot snapshot{repository, "main", "c0ffee", "builtin", {}, {}};
  for (int b = first; b < first + blobs; ++b) {
    snapshot.files.push_back({"src/f" + std::to_string(b) + ".py", numbered_blob_id(b), "python"});
  }
  return snapshot;
}

} // namespace

TEST_CASE("pgstore: the chunks holding most terms, narrowed to, give the best chunks of all",
          "[pgstore][search]") {
  std::mt19937 random;
  // 60 blobs in org/a, 40 in org/b (10 of them shared), 10 that no ref holds any more.
  const auto opened = random_store(PostgresServer::shared().create_database("narrowing"), 7,
                                   {snapshot_of("org/a", 1, 60), snapshot_of("org/b", 51, 40)}, random);
  Reader& reader = *opened;
  const auto refs = reader.refs();
  REQUIRE(refs.size() == 2);
  const std::int16_t model = reader.model_id("builtin");
  REQUIRE(model != 0);

  int full_pages = 0;
  int compared = 0;
  // Both refs, org/a alone and org/b alone: the first two hold most of the store's chunks, so
  // that the store's best are found first (with the orphans, and with org/b's 30 blobs among
  // them for org/a), then the refs' among them.
  for (const std::vector<std::int64_t>& ref_ids :
       {std::vector<std::int64_t>{refs[0].id, refs[1].id}, std::vector<std::int64_t>{refs[0].id},
        std::vector<std::int64_t>{refs[1].id}}) {
    for (int query = 0; query < 40; ++query) {
      std::vector<std::string> terms;
      const std::size_t size = 2 + random() % 4;
      while (terms.size() < size) {
        const std::string& word = k_words[random() % k_words.size()];
        const std::string stem = word == "parse" ? "pars" : word;
        if (std::find(terms.begin(), terms.end(), stem) == terms.end()) terms.push_back(stem);
      }
      if (query % 7 == 0) terms.push_back("absent");  // a term no chunk holds
      const auto statistics = reader.term_statistics(model, ref_ids, terms);
      for (const int limit : {5, 20, 80}) {
        INFO("terms " << terms.size() << ", limit " << limit << ", refs " << ref_ids.size());
        const auto plain = reader.match_terms(model, ref_ids, terms, statistics, {10, 3, 3, 1}, limit,
                                              std::numeric_limits<std::int64_t>::max());
        for (const auto from :
             {kasava::pgstore::NarrowedFrom::terms_index, kasava::pgstore::NarrowedFrom::refs,
              kasava::pgstore::NarrowedFrom::cheaper}) {
          INFO("narrowed from " << static_cast<int>(from));
          const auto narrowed =
              reader.match_terms(model, ref_ids, terms, statistics, {10, 3, 3, 1}, limit, 0, from);
          REQUIRE(narrowed.size() == plain.size());
          for (std::size_t i = 0; i < plain.size(); ++i) {
            CHECK(narrowed[i].key == plain[i].key);
            CHECK(narrowed[i].length == plain[i].length);
            CHECK(narrowed[i].terms == plain[i].terms);
          }
        }
        ++compared;
        full_pages += plain.size() == static_cast<std::size_t>(limit) ? 1 : 0;
      }
    }
  }
  // Most comparisons had more matches than the limit: the narrowing was exercised.
  CHECK(full_pages > compared / 2);
}

TEST_CASE("pgstore: the store's nearest codes, then the refs' among them, are the refs' nearest",
          "[pgstore][search]") {
  std::mt19937 random;
  // org/a holds most of the store; org/c half of it: its nearest are often beyond the store's.
  const auto opened = random_store(PostgresServer::shared().create_database("nearest"), 11,
                                   {snapshot_of("org/a", 1, 90), snapshot_of("org/b", 81, 15),
                                    snapshot_of("org/c", 1, 50)},
                                   random);
  Reader& reader = *opened;
  const auto refs = reader.refs();
  REQUIRE(refs.size() == 3);
  const std::int16_t model = reader.model_id("builtin");
  for (int query = 0; query < 30; ++query) {
    const std::string code{static_cast<char>(random() & 0xff), static_cast<char>(random() & 0xff)};
    for (const int limit : {1, 10, 300, 2000}) {
      for (const std::vector<std::int64_t>& ref_ids :
           {std::vector<std::int64_t>{refs[0].id}, std::vector<std::int64_t>{refs[0].id, refs[1].id},
            std::vector<std::int64_t>{refs[1].id}, std::vector<std::int64_t>{refs[2].id}}) {
        INFO("limit " << limit << ", refs " << ref_ids.size());
        // A language, even every file's, takes the plain statement.
        const auto all = reader.nearest_codes(model, ref_ids, code, limit, "");
        const auto plain = reader.nearest_codes(model, ref_ids, code, limit, "python");
        REQUIRE(all.size() == plain.size());
        for (std::size_t i = 0; i < all.size(); ++i) {
          CHECK(all[i].key == plain[i].key);
          CHECK(all[i].distance == plain[i].distance);
        }
      }
    }
  }
}

TEST_CASE("pgstore::ReaderPool keeps idle readers, hands out only ones that answer, and acquire_idle never connects",
          "[pgstore]") {
  PostgresServer& server = PostgresServer::shared();
  const std::string database = server.create_database("pool");
  open_pg_store(server.uri(database));  // the schema
  kasava::pgstore::ReaderPool pool(server.uri(database), 1);
  // The other sessions of the database, once it has that many: a closed connection's backend
  // takes a moment to leave pg_stat_activity.
  const auto connections = [&](const std::string& expected) {
    std::string count;
    for (int attempt = 0; attempt < 100; ++attempt) {
      count = server.psql(database, "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
                                    "AND pid <> pg_backend_pid()");
      if (count == expected) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return count;
  };
  CHECK_FALSE(pool.acquire_idle().has_value());  // none idle, none opened
  CHECK(connections("0") == "0");
  {
    auto first = pool.acquire();
    REQUIRE(first);
    auto second = pool.acquire();
    REQUIRE(second);
    CHECK(connections("2") == "2");
    CHECK_FALSE(pool.acquire_idle().has_value());  // both in use
  }
  CHECK(connections("1") == "1");  // one kept, the other closed
  {
    auto idle = pool.acquire_idle();
    REQUIRE(idle.has_value());
    CHECK((*idle)->refs().empty());  // it answers: an empty store has no refs
    CHECK_FALSE(pool.acquire_idle().has_value());
  }
  // The server ends the kept connection: it is not handed out again.
  server.psql(database, "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() "
                        "AND pid <> pg_backend_pid()");
  CHECK(connections("0") == "0");
  CHECK_FALSE(pool.acquire_idle().has_value());
  auto fresh = pool.acquire();
  REQUIRE(fresh);
  CHECK((*fresh)->refs().empty());
}
