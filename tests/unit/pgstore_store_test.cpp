// Tests of core/pgstore against a real PostgreSQL server started for this test binary
// (tests/support/postgres_server.hpp): connection errors that name the place and never the
// password, the schema created, upgraded and refused, blobs stored once and snapshots swapped.
#include <catch2/catch.hpp>

#include <algorithm>
#include <chrono>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "core/pgstore/connection.hpp"
#include "core/pgstore/store.hpp"
#include "core/util/compression.hpp"
#include "tests/support/postgres_server.hpp"
#include "tests/unit/pgstore_support.hpp"

using kasava::pgstore::BlobUpload;
using kasava::pgstore::ChunkUpload;
using kasava::pgstore::Connection;
using kasava::pgstore::Snapshot;
using kasava::pgstore::Store;
using kasava::test_support::PostgresServer;
using kasava::test::numbered_blob_id;
using kasava::test::open_pg_store;

namespace {

BlobUpload blob(int n, const std::string& symbol) {
  BlobUpload upload;
  upload.blob_id = numbered_blob_id(n);
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
  open_pg_store(server.uri(database));
  CHECK(server.psql(database, "SELECT version FROM kasava_schema") ==
        std::to_string(kasava::pgstore::k_schema_version));
  // Opening again changes nothing.
  open_pg_store(server.uri(database));
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
  REQUIRE(Store::create_schema_version(server.uri(database), 3));
  CHECK(server.psql(database, "SELECT version FROM kasava_schema") == "3");
  CHECK(server.psql(database, "SELECT count(*) FROM chunks") == "0");
  CHECK(server.psql(database, "SELECT count(*) FROM blobs") == "0");
  CHECK(server.psql(database, "SELECT count(*) FROM term_stats") == "0");
  CHECK(server.psql(database, "SELECT chunks || ' ' || tokens FROM model_stats") == "0 0");
  CHECK(server.psql(database, "SELECT digest FROM refs") == "");

  // Version 4 keeps each chunk's terms as per-field counts, read from the tsvector's weights,
  // and the codes in a table of their own.
  server.psql(database,
              "INSERT INTO blobs(blob_id, model_id, language, chunks) VALUES ('\\x02', 1, 'c', 2);"
              "INSERT INTO chunks VALUES ('\\x02', 1, 0, 'function', 'f', '', '', '', 1, 2, 3,"
              " '''pars'':1A,5D ''request'':2B,3C,4D', B'1010', '\\x0102'),"
              " ('\\x02', 1, 1, 'block', '', '', '', '', 3, 4, 5, '''pars'':1D', NULL, NULL)");
  REQUIRE(Store::create_schema_version(server.uri(database), 4));
  CHECK(server.psql(database, "SELECT version FROM kasava_schema") == "4");
  CHECK(server.psql(database, "SELECT terms ->> 'pars' FROM chunks WHERE ordinal = 0") ==
        kasava::pgstore::term_counts_value({1, 0, 0, 1}));
  CHECK(server.psql(database, "SELECT terms ->> 'request' FROM chunks WHERE ordinal = 0") ==
        kasava::pgstore::term_counts_value({0, 1, 1, 1}));
  CHECK(server.psql(database, "SELECT terms::text FROM chunks WHERE ordinal = 1") == "{\"pars\": \"1\"}");
  CHECK(server.psql(database, "SELECT count(*) FROM chunks WHERE terms ?| array['request', 'nothing']") == "1");
  CHECK(server.psql(database, "SELECT length || ' ' || code::text || ' ' || encode(vector, 'hex') "
                              "FROM chunks JOIN chunk_codes USING (blob_id, model_id, ordinal)") == "3 1010 0102");
  CHECK(server.psql(database, "SELECT count(*) FROM chunks WHERE vector IS NULL") == "1");
  CHECK(server.psql(database, "SELECT count(*) FROM pg_indexes WHERE indexname = 'chunks_terms'") == "1");

  // Version 5 gives each file history its stemmed terms and length, and each ref the number
  // and tokens of its histories; a history of more than one batch is filled whole.
  server.psql(database,
              "INSERT INTO file_history(ref_id, path, subjects) "
              "VALUES (1, 'a.c', 'Parse requests\nParsing fix');"
              "INSERT INTO file_history(ref_id, path, subjects) "
              "SELECT 1, 'many/' || n, 'Retry ' || n FROM generate_series(1, 4500) n");
  REQUIRE(Store::create_schema_version(server.uri(database), 5));
  CHECK(server.psql(database, "SELECT version FROM kasava_schema") == "5");
  int length = 0;
  const std::string terms = kasava::pgstore::history_terms("Parse requests\nParsing fix", length);
  CHECK(terms == "{\"fix\":1,\"pars\":2,\"request\":1}");
  CHECK(length == 4);
  kasava::util::StemCache stems;
  CHECK(kasava::pgstore::history_terms("Parse requests\nParsing fix", length, &stems) == terms);
  CHECK(server.psql(database,
                    "SELECT terms::text || ' ' || length FROM file_history WHERE path = 'a.c'") ==
        "{\"fix\": 1, \"pars\": 2, \"request\": 1} 4");
  CHECK(server.psql(database,
                    "SELECT count(*) FROM file_history WHERE terms ? 'retri' AND length = 2") ==
        "4500");
  const auto subjects = kasava::pgstore::from_hex(
      server.psql(database, "SELECT encode(subjects, 'hex') FROM file_history WHERE path = 'a.c'"));
  REQUIRE(subjects);
  CHECK(kasava::util::decompress(*subjects, 1000).value() == "Parse requests\nParsing fix");
  CHECK(server.psql(database, "SELECT history_files || ' ' || history_tokens FROM refs") ==
        "4501 9004");
  CHECK(server.psql(database,
                    "SELECT count(*) FROM pg_indexes WHERE indexname = 'file_history_terms'") ==
        "1");

  // Version 6 gives the codes partitions: none until a publish trains them.
  server.psql(database, "INSERT INTO term_stats VALUES (1, 'pars', 2), (1, 'request', 1)");
  REQUIRE(Store::create_schema_version(server.uri(database), 6));
  CHECK(server.psql(database, "SELECT version FROM kasava_schema") == "6");
  CHECK(server.psql(database, "SELECT partition FROM chunk_codes") == "-1");
  CHECK(server.psql(database, "SELECT count(*) FROM code_partitions") == "0");
  CHECK(server.psql(database,
                    "SELECT count(*) FROM pg_indexes WHERE indexname = 'chunk_codes_partition'") ==
        "1");

  // Version 7 leaves half of each page of term_stats free, its rows kept.
  CHECK(server.psql(database, "SELECT reloptions IS NULL FROM pg_class WHERE relname = 'term_stats'") == "t");
  const std::string file_before = server.psql(database, "SELECT pg_relation_filenode('term_stats')");
  open_pg_store(server.uri(database));
  CHECK(server.psql(database, "SELECT pg_relation_filenode('term_stats')") != file_before);  // rewritten
  CHECK(server.psql(database, "SELECT version FROM kasava_schema") == "7");
  CHECK(server.psql(database, "SELECT array_to_string(reloptions, ',') FROM pg_class WHERE relname = 'term_stats'") ==
        "fillfactor=50");
  CHECK(server.psql(database, "SELECT string_agg(term || '=' || chunks, ',' ORDER BY term) FROM term_stats") ==
        "pars=2,request=1");
}

TEST_CASE("pgstore: a newer schema is refused with both versions", "[pgstore]") {
  PostgresServer& server = PostgresServer::shared();
  const std::string database = server.create_database("newer");
  open_pg_store(server.uri(database));
  server.psql(database, "UPDATE kasava_schema SET version = 99");
  auto opened = Store::open(server.uri(database));
  REQUIRE_FALSE(opened);
  INFO(opened.error().message);
  CHECK(opened.error().message.find("version 99, newer than this kasava's (" + std::to_string(kasava::pgstore::k_schema_version) + ")") != std::string::npos);
  CHECK(server.psql(database, "SELECT version FROM kasava_schema") == "99");
}

TEST_CASE("pgstore: blobs are stored once, snapshots swapped, statistics kept", "[pgstore]") {
  PostgresServer& server = PostgresServer::shared();
  const std::string database = server.create_database("blobs");
  auto store = open_pg_store(server.uri(database));
  CHECK(store->present_blobs({numbered_blob_id(1), numbered_blob_id(2)}, "builtin").empty());
  CHECK(store->put_blobs({blob(1, "parse_request"), blob(2, "send_reply")}, "builtin") == 2);
  CHECK(store->put_blobs({blob(2, "send_reply"), blob(3, "close")}, "builtin") == 1);
  auto present = store->present_blobs({numbered_blob_id(1), numbered_blob_id(3), numbered_blob_id(4)}, "builtin");
  std::sort(present.begin(), present.end());
  CHECK(present == std::vector<std::string>{numbered_blob_id(1), numbered_blob_id(3)});
  CHECK(store->present_blobs({numbered_blob_id(1)}, "another-model").empty());
  CHECK(server.psql(database, "SELECT count(*) FROM blobs") == "3");
  CHECK(server.psql(database, "SELECT count(*) FROM chunks") == "3");
  CHECK(server.psql(database, "SELECT chunks FROM term_stats WHERE term = 'http'") == "3");
  CHECK(server.psql(database, "SELECT count(*) FROM chunks WHERE terms ?& array['pars', 'request']") == "3");
  CHECK(server.psql(database, "SELECT count(*) || ' ' || min(bit_count(code)) FROM chunk_codes") == "3 8");

  Snapshot snapshot{"org/app", "main", "c0ffee", "builtin",
                    {{"a.py", numbered_blob_id(1), "python"}, {"b.py", numbered_blob_id(2), "python"}}, {}};
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
  // Every table of the store counted, with its indexes and TOAST.
  CHECK(std::to_string(status.bytes) ==
        server.psql(database, "SELECT sum(pg_total_relation_size(c.oid)) FROM pg_class c JOIN pg_namespace n "
                              "ON n.oid = c.relnamespace WHERE n.nspname = current_schema() AND c.relkind = 'r'"));
  // A snapshot naming a blob the store lacks is refused, and the old one stays.
  snapshot.files.push_back({"c.py", numbered_blob_id(7), "python"});
  CHECK_THROWS(store->swap_snapshot(snapshot));
  CHECK(server.psql(database, "SELECT count(*) FROM snapshot_files") == "1");
}

TEST_CASE("pgstore: concurrent publishers of overlapping blobs store each once", "[pgstore]") {
  PostgresServer& server = PostgresServer::shared();
  const std::string database = server.create_database("concurrent");
  open_pg_store(server.uri(database));  // the schema, once
  std::vector<std::thread> threads;
  std::vector<std::string> errors(4);
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      try {
        auto store = open_pg_store(server.uri(database));
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

TEST_CASE("pgstore: a term's counts per field are packed in one number, each capped at 127", "[pgstore]") {
  using kasava::pgstore::term_counts_value;
  CHECK(term_counts_value({0, 0, 0, 1}) == "1");
  CHECK(term_counts_value({1, 0, 0, 1}) == std::to_string((1 << 21) + 1));
  CHECK(term_counts_value({0, 2, 3, 4}) == std::to_string((2 << 14) + (3 << 7) + 4));
  CHECK(term_counts_value({500, 0, 0, 128}) == std::to_string((127 << 21) + 127));
}

TEST_CASE("pgstore: a chunk's terms sent in binary are the jsonb their text reads as", "[pgstore][copy]") {
  PostgresServer& server = PostgresServer::shared();
  const std::string database = server.create_database("binary_terms");
  auto opened = Connection::open(server.uri(database));
  REQUIRE(opened);
  Connection& c = **opened;
  c.exec("CREATE TABLE t(v jsonb, b bit varying)");
  // Non-ASCII text, every field.
  kasava::types::Chunk chunk;
  chunk.symbol = "parse_request";
  chunk.signature = "def parse_request(raw, h\xc3\xa9llo, it's)";
  chunk.doc = "Parses a request.";
  chunk.text = "def parse_request(raw, h\xc3\xa9llo, it's):\n    return raw.split('\\\\')\n";
  int length = 0;
  std::vector<std::string> distinct;
  const std::string terms = kasava::pgstore::chunk_terms(chunk, length, &distinct);
  CHECK(length > 10);
  // Through a publish's stem cache, the same terms (twice: the second from the cache).
  kasava::util::StemCache stems;
  for (int round = 0; round < 2; ++round) {
    int cached_length = 0;
    CHECK(kasava::pgstore::chunk_terms(chunk, cached_length, nullptr, &stems) == terms);
    CHECK(cached_length == length);
  }
  REQUIRE(std::find(distinct.begin(), distinct.end(), "request") != distinct.end());
  {
    kasava::pgstore::Transaction transaction(c);
    kasava::pgstore::CopyIn copy(c, "COPY t(v, b) FROM STDIN (FORMAT binary)");
    copy.value('\x01' + terms).value(kasava::pgstore::binary_bits("\x0f\xf0")).end_row();
    CHECK(copy.finish() == 1);
    transaction.commit();
  }
  INFO(terms);
  CHECK(c.exec("SELECT v = $1::jsonb FROM t", {kasava::pgstore::Param::text(terms)}).at(0, 0) == "t");
  CHECK(c.exec("SELECT count(*) FROM t, jsonb_object_keys(v)").at(0, 0) == std::to_string(distinct.size()));
  // "request": in the symbol (a part of parse_request), the signature, the doc and the body.
  const std::int64_t request = std::stoll(c.exec("SELECT (v ->> 'request')::int FROM t").at(0, 0));
  CHECK((request >> 21 & 127) >= 1);
  CHECK((request >> 14 & 127) >= 1);
  CHECK((request >> 7 & 127) == 1);
  CHECK((request & 127) >= 1);
  CHECK(c.exec("SELECT v ? 'h\xc3\xa9llo' FROM t").at(0, 0) == "t");
  CHECK(c.exec("SELECT count(*) FROM t WHERE b = B'0000111111110000'").at(0, 0) == "1");
}

TEST_CASE("pgstore: a COPY the server refuses, or one left unfinished, leaves the connection usable",
          "[pgstore][copy]") {
  PostgresServer& server = PostgresServer::shared();
  const std::string database = server.create_database("copy_failure");
  auto opened = Connection::open(server.uri(database));
  REQUIRE(opened);
  Connection& c = **opened;
  c.exec("CREATE TABLE t(n integer NOT NULL)");
  {
    kasava::pgstore::Transaction transaction(c);
    kasava::pgstore::CopyIn copy(c, "COPY t(n) FROM STDIN (FORMAT binary)");
    copy.int32(1).end_row();
    copy.null().end_row();  // NOT NULL
    try {
      copy.finish();
      FAIL("the server should have refused the NULL");
    } catch (const kasava::pgstore::QueryError& error) {
      CHECK(error.sqlstate() == "23502");
      CHECK(std::string(error.what()).find("store at 127.0.0.1:") == 0);
    }
  }
  {
    kasava::pgstore::Transaction transaction(c);
    kasava::pgstore::CopyIn copy(c, "COPY t(n) FROM STDIN (FORMAT binary)");
    copy.int32(2).end_row();
    // Destroyed without finish(): the COPY is aborted, then the transaction rolled back.
  }
  CHECK(c.exec("SELECT count(*) FROM t").at(0, 0) == "0");
  {
    kasava::pgstore::CopyIn copy(c, "COPY t(n) FROM STDIN (FORMAT binary)");
    for (int n = 0; n < 100000; ++n) copy.int32(n).end_row();  // several buffers
    CHECK(copy.finish() == 100000);
  }
  CHECK(c.exec("SELECT count(*), sum(n) FROM t").at(0, 1) == "4999950000");
  CHECK_THROWS_AS(kasava::pgstore::CopyIn(c, "COPY missing(n) FROM STDIN (FORMAT binary)"),
                  kasava::pgstore::QueryError);
  CHECK(c.exec("SELECT 1").at(0, 0) == "1");
}

TEST_CASE("pgstore: a blob text another model's publisher stores meanwhile is kept, and this "
          "publish goes on", "[pgstore][copy]") {
  PostgresServer& server = PostgresServer::shared();
  const std::string database = server.create_database("text_race");
  auto store = open_pg_store(server.uri(database));
  REQUIRE(store->put_blobs({blob(1, "parse_request")}, "model-a") == 1);
  // Another publisher holds, uncommitted, the text of blob 2 (as model-a's publish would).
  auto other = Connection::open(server.uri(database));
  REQUIRE(other);
  kasava::pgstore::Transaction holding(**other);
  (*other)->exec("INSERT INTO blob_texts(blob_id, size, text) VALUES (decode($1, 'hex'), 1, '\\x00')",
                 {kasava::pgstore::Param::text(numbered_blob_id(2))});
  std::string error;
  std::int64_t stored = -1;
  std::thread publisher([&] {
    try {
      stored = store->put_blobs({blob(1, "parse_request"), blob(2, "send_reply")}, "model-b");
    } catch (const std::exception& failure) {
      error = failure.what();
    }
  });
  // Certainly waiting on that row before it is committed: the unique violation then comes.
  bool waiting = false;
  for (int i = 0; i < 600 && !waiting; ++i) {
    waiting = server.psql(database, "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' "
                                    "AND query LIKE 'COPY blob_texts%'") == "1";
    if (!waiting) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  CHECK(waiting);
  holding.commit();
  publisher.join();
  CHECK(error.empty());
  CHECK(stored == 2);
  CHECK(server.psql(database, "SELECT count(*) FROM blob_texts") == "2");
  CHECK(server.psql(database, "SELECT size FROM blob_texts WHERE blob_id = decode('" + numbered_blob_id(2) + "', 'hex')") == "1");
  CHECK(server.psql(database, "SELECT count(*) FROM blobs") == "3");
  CHECK(server.psql(database, "SELECT count(*) FROM chunks") == "3");
}
