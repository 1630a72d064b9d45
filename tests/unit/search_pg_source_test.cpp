// Unit tests for core/search/pg_source.cpp against a real PostgreSQL server
// (tests/support/postgres_server.hpp): the same small corpus in a local index and in a shared
// store gives the same lexical candidates with the same BM25 scores, and the same results.
#include <catch2/catch.hpp>

#include <algorithm>
#include <tuple>

#include "core/pgstore/connection.hpp"
#include "core/pgstore/search.hpp"
#include "core/pgstore/store.hpp"
#include "core/search/pg_source.hpp"
#include "core/search/search.hpp"
#include "core/util/stem.hpp"
#include "support.hpp"
#include "tests/support/postgres_server.hpp"

using namespace kasava;

namespace {

types::Chunk chunk_of(std::string kind, std::string symbol, std::string parent, std::string doc, int start,
                      std::string text) {
  types::Chunk chunk;
  chunk.kind = std::move(kind);
  chunk.symbol = std::move(symbol);
  chunk.parent = std::move(parent);
  chunk.doc = std::move(doc);
  chunk.start_line = start;
  chunk.end_line = start + 1;
  chunk.text = std::move(text);
  return chunk;
}

struct File {
  std::string path;
  std::string blob;
  std::vector<types::Chunk> chunks;
};

// Paths of one token count each, so the store's average length (its chunks' plus the
// candidates' paths) equals the local one (FTS5's columns, path included).
std::vector<File> corpus() {
  return {
      {"a.py", std::string(39, '0') + "1",
       {chunk_of("function", "parse_request", "", "Parses a request header.", 1,
                 "def parse_request(data):\n    return headers(data)\n"),
        chunk_of("function", "send_reply", "", "", 3, "def send_reply(sock):\n    sock.send(reply)\n")}},
      {"b.py", std::string(39, '0') + "2",
       {chunk_of("method", "connect", "Client", "Opens connections to the server.", 1,
                 "def connect(self):\n    self.connections.append(open_socket())\n")}},
      {"c.py", std::string(39, '0') + "3",
       {chunk_of("function", "retry_request", "", "Retries a failed request.", 1,
                 "def retry_request(request, retries):\n    return parse_request(request)\n")}},
      {"d.py", std::string(39, '0') + "4",
       {chunk_of("function", "unrelated", "", "", 1, "def unrelated():\n    return 42\n")}},
  };
}

std::vector<std::pair<std::string, int>> places(const search::Source& source,
                                                const std::vector<store::LexicalHit>& hits) {
  std::vector<std::int64_t> ids;
  for (const auto& hit : hits) ids.push_back(hit.chunk_id);
  auto records = source.chunks_by_id(ids, store::Store::Detail::head);
  std::vector<std::pair<std::string, int>> result;
  for (const auto& hit : hits) {
    const auto found = std::find_if(records.begin(), records.end(), [&](const auto& r) { return r.id == hit.chunk_id; });
    result.emplace_back(found != records.end() ? found->path : "?", found != records.end() ? found->chunk.start_line : 0);
  }
  return result;
}

// Publishes corpus() to `store` as acme/app@main with these file histories; returns the snapshot.
pgstore::Snapshot publish_corpus(pgstore::Store& store, std::vector<std::pair<std::string, std::string>> history) {
  std::vector<pgstore::BlobUpload> blobs;
  pgstore::Snapshot snapshot{"acme/app", "main", "", "builtin", {}, std::move(history)};
  for (const File& file : corpus()) {
    pgstore::BlobUpload blob{file.blob, "python", "text", {}};
    for (const auto& chunk : file.chunks) blob.chunks.push_back(pgstore::ChunkUpload{chunk, "", ""});
    blobs.push_back(blob);
    snapshot.files.push_back({file.path, file.blob, "python"});
  }
  store.put_blobs(blobs, "builtin");
  store.swap_snapshot(snapshot);
  return snapshot;
}

} // namespace

TEST_CASE("search::StoreSource scores lexical candidates as the local index does", "[pgstore]") {
  test::TempDir dir;
  auto local = std::move(store::Store::open(dir.file("index.db"), store::OpenMode::read_write).value());
  local->begin();
  for (const File& file : corpus()) local->put_file({file.path, file.blob, "python", 100, ""}, file.chunks);
  local->commit();

  auto& server = test_support::PostgresServer::shared();
  const std::string uri = server.uri(server.create_database("pg_source"));
  auto shared = std::move(pgstore::Store::open(uri).value());
  publish_corpus(*shared, {});
  auto reader = std::move(pgstore::Reader::open(uri).value());
  const search::StoreSource remote(*reader, reader->refs());
  const search::LocalSource here(*local);

  for (const std::string query : {"parse request", "connections", "retries request header", "reply", "nothing"}) {
    INFO(query);
    const auto parsed = search::parse_query(query);
    const auto local_hits = here.lexical_search(parsed, {}, 50).value();
    const auto remote_hits = remote.lexical_search(parsed, {}, 50).value();
    CHECK(places(remote, remote_hits) == places(here, local_hits));
    REQUIRE(remote_hits.size() == local_hits.size());
    for (std::size_t i = 0; i < local_hits.size(); ++i) {
      CHECK(remote_hits[i].score == Approx(local_hits[i].score).epsilon(1e-6));
    }
  }
  // And so the same results, in lexical mode, with each result's repository and ref.
  search::SearchOptions options;
  options.query = "parse request";
  options.mode = search::Mode::lexical;
  const auto local_results = search::search(*local, options, nullptr).value();
  const auto remote_results = search::search(remote, options, nullptr).value();
  REQUIRE(remote_results.size() == local_results.size());
  for (std::size_t i = 0; i < local_results.size(); ++i) {
    CHECK(remote_results[i].record.path == local_results[i].record.path);
    CHECK(remote_results[i].score == Approx(local_results[i].score).epsilon(1e-6));
    CHECK(remote_results[i].origin.repository == "acme/app");
    CHECK(local_results[i].origin.repository.empty());
  }

  // The lexical statement sent each candidate's fields with it: with the reader's connection
  // gone after the search, the candidates' records are still there, the same as the local
  // index's (symbol and lines).
  auto own = std::move(pgstore::Reader::open(uri).value());
  const search::StoreSource alone(*own, own->refs());
  const auto parsed = search::parse_query("retries request header");
  const auto hits = alone.lexical_search(parsed, {}, 50).value();
  const auto local_hits = here.lexical_search(parsed, {}, 50).value();
  REQUIRE(hits.size() == 2);  // parse_request and retry_request
  auto admin = std::move(pgstore::Connection::open(uri).value());
  admin->exec("SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
              "WHERE datname = current_database() AND pid <> pg_backend_pid()");
  const auto heads_of = [](const search::Source& source, const std::vector<store::LexicalHit>& found) {
    std::vector<std::int64_t> ids;
    for (const auto& hit : found) ids.push_back(hit.chunk_id);
    std::vector<std::tuple<std::string, std::string, std::string, int, int>> heads;
    for (const auto& record : source.chunks_by_id(ids, store::Store::Detail::head)) {
      heads.emplace_back(record.path, record.chunk.kind, record.chunk.symbol, record.chunk.start_line,
                         record.chunk.end_line);
    }
    std::sort(heads.begin(), heads.end());
    return heads;
  };
  CHECK(heads_of(alone, hits) == heads_of(here, local_hits));
}

TEST_CASE(
    "search::StoreSource ranks file histories as the local index does, and sees a new publish",
    "[pgstore]") {
  test::TempDir dir;
  auto local =
      std::move(store::Store::open(dir.file("index.db"), store::OpenMode::read_write).value());
  local->begin();
  for (const File& file : corpus())
    local->put_file({file.path, file.blob, "python", 100, ""}, file.chunks);
  local->put_history({{"Fix request parsing for chunked bodies", {"a.py"}},
                      {"Add retries", {"a.py", "c.py"}},
                      {"Pool client connections", {"b.py"}},
                      {"Retry failed requests with backoff", {"c.py"}},
                      {"Request a request per request: timeouts", {"d.py"}}},
                     true, std::string(40, 'a'), 5);
  local->commit();

  auto& server = test_support::PostgresServer::shared();
  const std::string database = server.create_database("pg_history");
  const std::string uri = server.uri(database);
  auto shared = std::move(pgstore::Store::open(uri).value());
  pgstore::Snapshot snapshot = publish_corpus(*shared, local->history_texts());
  auto reader = std::move(pgstore::Reader::open(uri).value());
  const search::LocalSource here(*local);

  // (path, score) of each hit; the store's file keys are "ref id\npath".
  const auto found = [](const std::vector<store::HistoryHit>& hits) {
    std::vector<std::pair<std::string, double>> paths;
    for (const auto& hit : hits)
      paths.emplace_back(hit.path.substr(hit.path.find('\n') + 1), hit.score);
    return paths;
  };
  const auto remote_hits = [&](const std::string& query, int limit) {
    const search::StoreSource remote(*reader, reader->refs());
    return found(remote.history_search(search::parse_query(query), limit).value());
  };
  for (const std::string query : {"retry requests", "client connections", "parsing",
                                  "request request", "request timeouts", "nothing here"}) {
    INFO(query);
    const auto local_hits = found(here.history_search(search::parse_query(query), 10).value());
    const auto remote = remote_hits(query, 10);
    REQUIRE(remote.size() == local_hits.size());
    for (std::size_t i = 0; i < local_hits.size(); ++i) {
      CHECK(remote[i].first == local_hits[i].first);
      CHECK(remote[i].second == Approx(local_hits[i].second).epsilon(1e-9));
    }
    // Read through the terms' index or by ref: the same files, counts and statistics.
    std::vector<std::string> terms;
    for (const auto& term : search::parse_query(query).terms)
      terms.push_back(util::porter_stem(term));
    const std::vector<std::int64_t> refs{reader->refs().front().id};
    const auto by_ref = reader->match_history(refs, 0, terms, 10);
    const auto by_terms =
        reader->match_history(refs, pgstore::Reader::k_history_by_ref_below, terms, 10);
    REQUIRE(by_terms.best.size() == by_ref.best.size());
    CHECK(by_terms.best.size() == remote.size());
    for (std::size_t i = 0; i < by_ref.best.size(); ++i) {
      CHECK(by_terms.best[i].path == by_ref.best[i].path);
      CHECK(by_terms.best[i].frequency == by_ref.best[i].frequency);
    }
    CHECK(by_terms.document_frequency == by_ref.document_frequency);
    // A smaller limit is the best of the same list.
    const auto first = remote_hits(query, 1);
    CHECK(first.size() == std::min<std::size_t>(1, remote.size()));
    if (!first.empty()) CHECK(first.front() == remote.front());
  }
  CHECK(remote_hits("backoff", 10).front().first == "c.py");

  // Asked for before the Hamming scan starts, the history search runs after it on the other
  // reader; history_search takes that result, and runs a search asked otherwise itself.
  int opened = 0;
  const search::StoreSource two(*reader, reader->refs(), [&]() -> std::shared_ptr<pgstore::Reader> {
    ++opened;
    return std::move(pgstore::Reader::open(uri).value());
  });
  const std::vector<std::uint8_t> code = {0x25, 0x0b};
  two.start_history_search(search::parse_query("retry requests"), 10);
  two.start_nearest_codes(code, 3, search::FileFilterSpec{}, store::CodeScan::nearest_partitions);
  two.nearest_codes(code, 3, search::FileFilterSpec{}, store::CodeScan::nearest_partitions);
  CHECK(found(two.history_search(search::parse_query("retry requests"), 10).value()) == remote_hits("retry requests", 10));
  CHECK(found(two.history_search(search::parse_query("client connections"), 10).value()) ==
        remote_hits("client connections", 10));
  CHECK(opened == 1);

  // A new publish of the ref replaces its histories.
  snapshot.history = {{"b.py", "Retry connections with backoff"}};
  snapshot.commit = std::string(40, 'c');  // a new commit: a real publish, not a no-op
  REQUIRE(shared->swap_snapshot(snapshot).changed);
  const auto after = remote_hits("backoff", 10);
  REQUIRE(after.size() == 1);
  CHECK(after.front().first == "b.py");
  // The ref's histories, as BM25's collection: one file, four tokens.
  CHECK(server.psql(database, "SELECT history_files || ' ' || history_tokens FROM refs") == "1 4");
}

TEST_CASE("search::StoreSource runs a started Hamming scan on another reader, or on its own when it cannot",
          "[pgstore]") {
  auto& server = test_support::PostgresServer::shared();
  const std::string uri = server.uri(server.create_database("pg_source_started"));
  {
    auto shared = std::move(pgstore::Store::open(uri).value());
    std::vector<pgstore::BlobUpload> blobs;
    pgstore::Snapshot snapshot{"acme/app", "main", "", "builtin", {}, {}};
    int n = 0;
    for (const File& file : corpus()) {
      pgstore::BlobUpload blob{file.blob, "python", "text", {}};
      for (const auto& chunk : file.chunks) {
        ++n;
        blob.chunks.push_back(pgstore::ChunkUpload{chunk, std::string{static_cast<char>(n * 37), static_cast<char>(n * 11)},
                                                   std::string(12, '\x01')});
      }
      blobs.push_back(blob);
      snapshot.files.push_back({file.path, file.blob, "python"});
    }
    shared->put_blobs(blobs, "builtin");
    shared->swap_snapshot(snapshot);
  }
  auto reader = std::move(pgstore::Reader::open(uri).value());
  const std::vector<std::uint8_t> code = {0x25, 0x0b};
  const search::FileFilterSpec everything;
  const auto places_of = [](const std::vector<store::CodeHit>& hits) {
    std::vector<std::pair<std::int64_t, int>> result;
    for (const auto& hit : hits) result.emplace_back(hit.chunk_id, hit.distance);
    return result;
  };
  const search::StoreSource alone(*reader, reader->refs());
  const auto expected = places_of(alone.nearest_codes(code, 3, everything, store::CodeScan::nearest_partitions));
  REQUIRE(expected.size() == 3);

  int opened = 0;
  const search::StoreSource two(*reader, reader->refs(), [&]() -> std::shared_ptr<pgstore::Reader> {
    ++opened;
    return std::move(pgstore::Reader::open(uri).value());
  });
  two.start_nearest_codes(code, 3, everything, store::CodeScan::nearest_partitions);
  const auto found = two.nearest_codes(code, 3, everything, store::CodeScan::nearest_partitions);
  CHECK(places_of(found) == expected);
  CHECK(opened == 1);
  // Their rows and holders came from the other reader with them: the same records as the
  // source's own reader reads.
  const auto records_of = [](const search::StoreSource& source, const std::vector<store::CodeHit>& hits) {
    std::vector<std::int64_t> ids;
    for (const auto& hit : hits) ids.push_back(hit.chunk_id);
    std::vector<std::tuple<std::int64_t, std::string, std::string, int, int, std::string>> records;
    for (const auto& record : source.chunks_by_id(ids, store::Store::Detail::head)) {
      records.emplace_back(record.id, record.path, record.chunk.symbol, record.chunk.start_line,
                           record.chunk.end_line, source.origin(record.id).repository);
    }
    std::sort(records.begin(), records.end());
    return records;
  };
  const auto expected_records =
      records_of(alone, alone.nearest_codes(code, 3, everything, store::CodeScan::nearest_partitions));
  REQUIRE(expected_records.size() == 3);
  CHECK(records_of(two, found) == expected_records);
  // Asked for something else than was started: run on its own reader.
  const auto more = two.nearest_codes(code, 5, everything, store::CodeScan::nearest_partitions);
  CHECK(more.size() == 5);
  CHECK(opened == 1);

  // No other reader to be had: the scan runs on the source's own.
  const search::StoreSource none(*reader, reader->refs(), [&]() -> std::shared_ptr<pgstore::Reader> {
    ++opened;
    return nullptr;
  });
  none.start_nearest_codes(code, 3, everything, store::CodeScan::nearest_partitions);
  CHECK(places_of(none.nearest_codes(code, 3, everything, store::CodeScan::nearest_partitions)) == expected);
  CHECK(opened == 2);
  // Started and never taken (a search that failed on its lexical side): joined on destruction.
  {
    const search::StoreSource dropped(*reader, reader->refs(), [&]() -> std::shared_ptr<pgstore::Reader> {
      ++opened;
      return std::move(pgstore::Reader::open(uri).value());
    });
    dropped.start_nearest_codes(code, 3, everything, store::CodeScan::nearest_partitions);
  }
  CHECK(opened == 3);

  // The rows and holders of the codes found came from the other reader with them: once the
  // codes are taken, the search's own connection is not needed for their records.
  auto own = std::move(pgstore::Reader::open(uri).value());
  const search::StoreSource prefetched(*own, own->refs(), [&]() -> std::shared_ptr<pgstore::Reader> {
    return std::move(pgstore::Reader::open(uri).value());
  });
  prefetched.start_nearest_codes(code, 3, everything, store::CodeScan::nearest_partitions);
  const auto taken = prefetched.nearest_codes(code, 3, everything, store::CodeScan::nearest_partitions);
  REQUIRE(places_of(taken) == expected);
  auto admin = std::move(pgstore::Connection::open(uri).value());
  admin->exec("SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
              "WHERE datname = current_database() AND pid <> pg_backend_pid()");
  CHECK(records_of(prefetched, taken) == expected_records);
}
