// Tests of core/pgstore against a real PostgreSQL server started for this test binary
// (tests/support/postgres_server.hpp): connection errors that name the place and never the
// password, the schema created, upgraded and refused, blobs stored once and snapshots swapped.
#include <catch2/catch.hpp>

#include <algorithm>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "core/pgstore/connection.hpp"
#include "core/pgstore/store.hpp"
#include "tests/support/postgres_server.hpp"

using kasava::pgstore::BlobUpload;
using kasava::pgstore::ChunkUpload;
using kasava::pgstore::Connection;
using kasava::pgstore::Snapshot;
using kasava::pgstore::Store;
using kasava::test_support::PostgresServer;

namespace {

std::unique_ptr<Store> open_store(const std::string& conninfo) {
  auto opened = Store::open(conninfo);
  if (!opened) FAIL("opening the store: " << opened.error().message);
  return std::move(opened).value();
}

// A blob id of 40 hex digits made from a number (the store trusts its caller's ids).
std::string blob_id(int n) {
  std::string id = std::to_string(n);
  return std::string(40 - id.size(), '0') + id;
}

BlobUpload blob(int n, const std::string& symbol) {
  BlobUpload upload;
  upload.blob_id = blob_id(n);
  upload.language = "python";
  upload.text = "def " + symbol + "():\n    return parse_http_request()\n";
  ChunkUpload chunk;
  chunk.chunk.kind = "function";
  chunk.chunk.symbol = symbol;
  chunk.chunk.start_line = 1;
  chunk.chunk.end_line = 2;
  chunk.chunk.text = upload.text;
  chunk.code = std::string("\x0f\xf0", 2);
  chunk.values = std::string("\x01\x02\x03\x04\x05\x06", 6);
  upload.chunks.push_back(chunk);
  return upload;
}

} // namespace

TEST_CASE("pgstore: a wrong password is one line naming host and port, without the password",
          "[pgstore]") {
  PostgresServer& server = PostgresServer::shared();
  const std::string wrong = "Wrong-Secret-4242";
  const std::string uri = "postgresql://" + server.user() + ":" + wrong + "@127.0.0.1:" +
                          std::to_string(server.port()) + "/postgres";
  auto opened = Connection::open(uri);
  REQUIRE_FALSE(opened);
  const std::string& message = opened.error().message;
  INFO(message);
  CHECK(message.find("127.0.0.1:" + std::to_string(server.port())) != std::string::npos);
  CHECK(message.find("password authentication failed") != std::string::npos);
  CHECK(message.find(wrong) == std::string::npos);
  CHECK(message.find('\n') == std::string::npos);
}

TEST_CASE("pgstore: an unreachable server is one line naming host and port", "[pgstore]") {
  // A port nothing listens on: the server's own, once it is known to be another.
  const int port = PostgresServer::shared().port() == 1 ? 2 : 1;
  auto opened = Connection::open("postgresql://someone:Secret-9@127.0.0.1:" + std::to_string(port) +
                                 "/db?connect_timeout=3");
  REQUIRE_FALSE(opened);
  const std::string& message = opened.error().message;
  INFO(message);
  CHECK(message.find("127.0.0.1:" + std::to_string(port)) != std::string::npos);
  CHECK(message.find("Secret-9") == std::string::npos);
  CHECK(message.find('\n') == std::string::npos);
}

TEST_CASE("pgstore: a message naming the password is scrubbed", "[pgstore]") {
  PostgresServer& server = PostgresServer::shared();
  const std::string database = server.create_database("scrub");
  auto connection = Connection::open(server.uri(database));
  REQUIRE(connection);
  const std::string message = (*connection)->scrub("said " + server.password() + " twice " + server.password());
  CHECK(message == "said *** twice ***");
  // A failing statement that quotes the password comes back scrubbed too.
  try {
    (*connection)->exec("SELECT $1::integer", {kasava::pgstore::Param::text(server.password())});
    FAIL("the statement should fail");
  } catch (const kasava::pgstore::QueryError& error) {
    const std::string text = error.what();
    INFO(text);
    CHECK(text.find(server.password()) == std::string::npos);
    CHECK(text.find("***") != std::string::npos);
  }
}

TEST_CASE("pgstore: the schema is created on first use at the current version", "[pgstore]") {
  PostgresServer& server = PostgresServer::shared();
  const std::string database = server.create_database("fresh");
  open_store(server.uri(database));
  CHECK(server.psql(database, "SELECT version FROM kasava_schema") ==
        std::to_string(kasava::pgstore::k_schema_version));
  // Opening again changes nothing.
  open_store(server.uri(database));
  CHECK(server.psql(database, "SELECT count(*) FROM kasava_schema") == "1");
}

TEST_CASE("pgstore: an older schema is upgraded, its statistics filled from its chunks",
          "[pgstore]") {
  PostgresServer& server = PostgresServer::shared();
  const std::string database = server.create_database("upgrade");
  REQUIRE(Store::create_schema_version(server.uri(database), 1));
  CHECK(server.psql(database, "SELECT version FROM kasava_schema") == "1");
  CHECK(server.psql(database, "SELECT to_regclass('term_stats') IS NULL") == "t");
  server.psql(database,
              "INSERT INTO models(name) VALUES ('builtin');"
              "INSERT INTO blobs(blob_id, model_id, language, chunks) VALUES ('\\x01', 1, 'c', 2);"
              "INSERT INTO chunks VALUES ('\\x01', 1, 0, 'function', 'f', '', '', '', 1, 2, 3,"
              " '''parse'':1A ''http'':2D', NULL, NULL),"
              " ('\\x01', 1, 1, 'block', '', '', '', '', 3, 4, 5, '''parse'':1D', NULL, NULL)");
  REQUIRE(Store::create_schema_version(server.uri(database), 2));
  CHECK(server.psql(database, "SELECT version FROM kasava_schema") == "2");
  CHECK(server.psql(database, "SELECT chunks FROM term_stats WHERE term = 'parse'") == "2");
  CHECK(server.psql(database, "SELECT chunks FROM term_stats WHERE term = 'http'") == "1");
  CHECK(server.psql(database, "SELECT chunks || ' ' || tokens FROM model_stats") == "2 8");

  // Version 3 stems terms: the unstemmed chunks are forgotten, each ref republished in full.
  server.psql(database,
              "INSERT INTO repositories(name) VALUES ('org/app');"
              "INSERT INTO refs(repository_id, name, digest) VALUES (1, 'main', '1234')");
  open_store(server.uri(database));
  CHECK(server.psql(database, "SELECT version FROM kasava_schema") == "3");
  CHECK(server.psql(database, "SELECT count(*) FROM chunks") == "0");
  CHECK(server.psql(database, "SELECT count(*) FROM blobs") == "0");
  CHECK(server.psql(database, "SELECT count(*) FROM term_stats") == "0");
  CHECK(server.psql(database, "SELECT chunks || ' ' || tokens FROM model_stats") == "0 0");
  CHECK(server.psql(database, "SELECT digest FROM refs") == "");
}

TEST_CASE("pgstore: a newer schema is refused with both versions", "[pgstore]") {
  PostgresServer& server = PostgresServer::shared();
  const std::string database = server.create_database("newer");
  open_store(server.uri(database));
  server.psql(database, "UPDATE kasava_schema SET version = 99");
  auto opened = Store::open(server.uri(database));
  REQUIRE_FALSE(opened);
  INFO(opened.error().message);
  CHECK(opened.error().message.find("version 99, newer than this kasava's (3)") != std::string::npos);
  CHECK(server.psql(database, "SELECT version FROM kasava_schema") == "99");
}

TEST_CASE("pgstore: blobs are stored once, snapshots swapped, statistics kept", "[pgstore]") {
  PostgresServer& server = PostgresServer::shared();
  const std::string database = server.create_database("blobs");
  auto store = open_store(server.uri(database));
  CHECK(store->present_blobs({blob_id(1), blob_id(2)}, "builtin").empty());
  CHECK(store->put_blobs({blob(1, "parse_request"), blob(2, "send_reply")}, "builtin") == 2);
  CHECK(store->put_blobs({blob(2, "send_reply"), blob(3, "close")}, "builtin") == 1);
  auto present = store->present_blobs({blob_id(1), blob_id(3), blob_id(4)}, "builtin");
  std::sort(present.begin(), present.end());
  CHECK(present == std::vector<std::string>{blob_id(1), blob_id(3)});
  CHECK(store->present_blobs({blob_id(1)}, "another-model").empty());
  CHECK(server.psql(database, "SELECT count(*) FROM blobs") == "3");
  CHECK(server.psql(database, "SELECT count(*) FROM chunks") == "3");
  CHECK(server.psql(database, "SELECT chunks FROM term_stats WHERE term = 'http'") == "3");
  CHECK(server.psql(database, "SELECT count(*) FROM chunks WHERE terms @@ 'pars & request'::tsquery") == "3");
  CHECK(server.psql(database, "SELECT bit_count(code) FROM chunks LIMIT 1") == "8");

  Snapshot snapshot{"org/app", "main", "c0ffee", "builtin",
                    {{"a.py", blob_id(1), "python"}, {"b.py", blob_id(2), "python"}}, {}};
  auto swapped = store->swap_snapshot(snapshot);
  CHECK(swapped.changed);
  CHECK(swapped.chunks == 2);
  CHECK_FALSE(store->swap_snapshot(snapshot).changed);
  snapshot.files.pop_back();
  snapshot.commit = "beef";
  CHECK(store->swap_snapshot(snapshot).changed);
  CHECK(server.psql(database, "SELECT count(*) FROM snapshot_files") == "1");
  const auto status = store->status();
  REQUIRE(status.refs.size() == 1);
  CHECK(status.refs[0].repository == "org/app");
  CHECK(status.refs[0].commit == "beef");
  CHECK(status.refs[0].files == 1);
  CHECK(status.unique_blobs == 3);
  CHECK(status.chunks == 3);
  CHECK(status.bytes > 0);
  // A snapshot naming a blob the store lacks is refused, and the old one stays.
  snapshot.files.push_back({"c.py", blob_id(7), "python"});
  CHECK_THROWS(store->swap_snapshot(snapshot));
  CHECK(server.psql(database, "SELECT count(*) FROM snapshot_files") == "1");
}

TEST_CASE("pgstore: concurrent publishers of overlapping blobs store each once", "[pgstore]") {
  PostgresServer& server = PostgresServer::shared();
  const std::string database = server.create_database("concurrent");
  open_store(server.uri(database));  // the schema, once
  std::vector<std::thread> threads;
  std::vector<std::string> errors(4);
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      try {
        auto store = open_store(server.uri(database));
        std::vector<BlobUpload> blobs;
        // Overlapping ranges, in different orders: each publisher sorts them itself.
        for (int n = 0; n < 60; ++n) blobs.push_back(blob(t % 2 == 0 ? n + t * 10 : 99 - n + t * 10, "f"));
        store->put_blobs(blobs, "builtin");
      } catch (const std::exception& error) {
        errors[static_cast<std::size_t>(t)] = error.what();
      }
    });
  }
  for (auto& thread : threads) thread.join();
  for (const auto& error : errors) CHECK(error.empty());
  // The union of what the four sent.
  std::set<int> expected;
  for (int t = 0; t < 4; ++t) {
    for (int n = 0; n < 60; ++n) expected.insert(t % 2 == 0 ? n + t * 10 : 99 - n + t * 10);
  }
  CHECK(server.psql(database, "SELECT count(*) FROM blobs") == std::to_string(expected.size()));
  CHECK(server.psql(database, "SELECT count(*) FROM chunks") == std::to_string(expected.size()));
  CHECK(server.psql(database, "SELECT chunks FROM term_stats WHERE term = 'http'") ==
        std::to_string(expected.size()));
}

TEST_CASE("pgstore: a statement timeout applies unless the connection string sets one", "[pgstore]") {
  PostgresServer& server = PostgresServer::shared();
  auto plain = Connection::open(server.uri("postgres"));
  REQUIRE(plain);
  CHECK((*plain)->exec("SHOW statement_timeout").at(0, 0) == "2min");
  auto own = Connection::open(server.uri("postgres") + "?options=-c%20statement_timeout%3D5s");
  REQUIRE(own);
  CHECK((*own)->exec("SHOW statement_timeout").at(0, 0) == "5s");
  // The server ends a statement that runs past it, and the error says where.
  auto short_timeout = Connection::open(server.uri("postgres") + "?options=-c%20statement_timeout%3D100");
  REQUIRE(short_timeout);
  try {
    (*short_timeout)->exec("SELECT pg_sleep(5)");
    FAIL("pg_sleep should have been cancelled");
  } catch (const kasava::pgstore::QueryError& error) {
    CHECK(std::string(error.what()).find("statement timeout") != std::string::npos);
    CHECK(std::string(error.what()).find("127.0.0.1:" + std::to_string(server.port())) != std::string::npos);
  }
}

TEST_CASE("pgstore: a connection string libpq cannot read is refused without quoting it",
          "[pgstore]") {
  auto opened = Connection::open("host=localhost password=Quoted-Secret-1 'unterminated");
  REQUIRE_FALSE(opened);
  INFO(opened.error().message);
  CHECK(opened.error().message.find("Quoted-Secret-1") == std::string::npos);
  CHECK(opened.error().message.find("neither a postgresql:// URI nor key=value") != std::string::npos);
}
