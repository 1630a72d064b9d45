// Tests for the semantic and hybrid modes of core/search/search.cpp, on a real store with a
// fake embedder (hashed bag of concepts: a few synonyms share a concept, so a paraphrase with
// no word in common still lands near its target).
#include <catch2/catch.hpp>

#include <cmath>
#include <map>

#include "core/search/search.hpp"
#include "core/util/tokenize.hpp"
#include "support.hpp"

using namespace kasava;

namespace {

constexpr int k_dims = 64;

// Words that mean the same thing to the fake model.
const std::map<std::string, std::string>& concepts() {
  static const std::map<std::string, std::string> table = {
      {"fetch", "download"}, {"retrieve", "download"}, {"download", "download"},
      {"remote", "network"}, {"http", "network"},      {"network", "network"},
      {"resource", "file"},  {"file", "file"},         {"document", "file"},
  };
  return table;
}

class FakeEmbedder : public embed::Embedder {
public:
  explicit FakeEmbedder(std::string id = "test:fake") : m_id(std::move(id)) {}
  std::string model_id() const override { return m_id; }
  int dimensions() const override { return k_dims; }
  util::Result<std::vector<std::vector<float>>> embed(const std::vector<std::string_view>& inputs,
                                                      embed::InputKind) override {
    std::vector<std::vector<float>> vectors;
    for (const auto input : inputs) vectors.push_back(vector_of(input));
    return vectors;
  }
  static std::vector<float> vector_of(std::string_view text) {
    std::vector<float> vector(k_dims, 0.0f);
    for (const auto& token : util::code_tokens(text)) {
      if (util::is_stop_word(token)) continue;
      const auto concept_word = concepts().find(token);
      const std::string& word = concept_word != concepts().end() ? concept_word->second : token;
      const std::size_t hash = std::hash<std::string>{}(word);
      vector[hash % k_dims] += (hash / k_dims) % 2 == 0 ? 1.0f : -1.0f;
      vector[(hash / 7) % k_dims] += 0.5f;
    }
    double norm = 0.0;
    for (float v : vector) norm += static_cast<double>(v) * v;
    if (norm > 0) {
      for (float& v : vector) v = static_cast<float>(v / std::sqrt(norm));
    }
    return vector;
  }

private:
  std::string m_id;
};

types::Chunk make_chunk(const std::string& symbol, int start, const std::string& text) {
  types::Chunk chunk;
  chunk.kind = "function";
  chunk.symbol = symbol;
  chunk.start_line = start;
  chunk.end_line = start + 2;
  chunk.text = text;
  return chunk;
}

struct Fixture {
  test::TempDir dir;
  std::unique_ptr<store::Store> store =
      std::move(store::Store::open(dir.file("index.db"), store::OpenMode::read_write).value());

  void put(const std::string& path, const std::string& language,
           const std::vector<types::Chunk>& chunks, bool with_vectors = true) {
    std::vector<store::QuantizedVector> vectors;
    if (with_vectors) {
      for (const auto& chunk : chunks) {
        vectors.push_back(store::quantize(FakeEmbedder::vector_of(chunk.symbol + "\n" + chunk.text)));
      }
    }
    store->put_file({path, path, language, 100, ""}, chunks, vectors);
  }

  void stamp(const std::string& model = "test:fake") {
    store->set_meta("embedding_model", model);
    store->set_meta("embedding_dims", std::to_string(k_dims));
  }

  // Filler: chunks about unrelated things, so z-scores have a population.
  void fill(int files) {
    const char* topics[] = {"sort the list of numbers", "render the html template",
                            "parse command line flags", "compute the checksum of bytes",
                            "open the database connection", "format a date for display"};
    for (int f = 0; f < files; ++f) {
      std::vector<types::Chunk> chunks;
      for (int c = 0; c < 3; ++c) {
        const std::string topic = topics[(f + c) % 6];
        chunks.push_back(make_chunk("helper_" + std::to_string(f) + "_" + std::to_string(c),
                                    1 + 4 * c, "def helper():\n    # " + topic + "\n"));
      }
      put("filler/f" + std::to_string(f) + ".py", "python", chunks);
    }
  }
};

std::vector<std::string> symbols(const std::vector<search::SearchHit>& hits) {
  std::vector<std::string> names;
  for (const auto& hit : hits) names.push_back(hit.record.chunk.symbol);
  return names;
}

int rank_of(const std::vector<search::SearchHit>& hits, const std::string& symbol) {
  for (const auto& hit : hits) {
    if (hit.record.chunk.symbol == symbol) return hit.rank;
  }
  return 1000;
}

} // namespace

TEST_CASE("search::z_scores standardises and copes with constant input") {
  const auto z = search::z_scores({1.0, 2.0, 3.0});
  CHECK(z[0] == Approx(-1.224745));
  CHECK(z[1] == Approx(0.0).margin(1e-12));
  CHECK(z[2] == Approx(1.224745));
  CHECK(search::z_scores({5.0, 5.0}) == std::vector<double>{0.0, 0.0});
  CHECK(search::z_scores({}).empty());
}

TEST_CASE("search::identifier_words finds the words that name code") {
  using V = std::vector<std::string>;
  CHECK(search::identifier_words("parseConfig") == V{"parseConfig"});
  CHECK(search::identifier_words("where is SaveUploadedFile defined?") == V{"SaveUploadedFile"});
  CHECK(search::identifier_words("Store::open and save_file()") == V{"Store::open", "save_file"});
  CHECK(search::identifier_words("open") == V{"open"});
  CHECK(search::identifier_words("how to open a file").empty());
  CHECK(search::identifier_words("what is 2+2").empty());
}

TEST_CASE("search::search semantic mode finds a paraphrase that shares no word") {
  Fixture f;
  f.stamp();
  f.fill(20);
  f.put("net/client.py", "python",
        {make_chunk("download_file", 1, "def download_file(url):\n    # network file download\n")});
  FakeEmbedder embedder;
  search::SearchOptions options;
  options.query = "fetch remote resource";
  options.mode = search::Mode::lexical;
  CHECK(search::search(*f.store, options, &embedder)->empty());  // no word in common

  options.mode = search::Mode::semantic;
  auto hits = search::search(*f.store, options, &embedder);
  REQUIRE(hits.ok());
  REQUIRE_FALSE(hits->empty());
  CHECK((*hits)[0].record.chunk.symbol == "download_file");
  CHECK((*hits)[0].mode == search::Mode::semantic);
  for (std::size_t i = 0; i < hits->size(); ++i) {
    CHECK((*hits)[i].score > 0.0);
    CHECK((*hits)[i].score <= 1.0);
    if (i > 0) CHECK((*hits)[i].score <= (*hits)[i - 1].score);
  }

  // Filters apply to the semantic scan.
  options.path_glob = "net/**";
  const auto filtered = search::search(*f.store, options, &embedder).value();
  CHECK_FALSE(filtered.empty());
  for (const auto& hit : filtered) CHECK(hit.record.path.rfind("net/", 0) == 0);
  options.path_glob = "filler/**";  // nothing there is about fetching: no result
  CHECK(search::search(*f.store, options, &embedder)->empty());
  options.path_glob = "";
  options.language = "go";
  CHECK(search::search(*f.store, options, &embedder)->empty());

  // Hybrid finds it too, though the lexical side has nothing.
  options.language = "";
  options.mode = search::Mode::hybrid;
  hits = search::search(*f.store, options, &embedder);
  REQUIRE_FALSE(hits->empty());
  CHECK((*hits)[0].record.chunk.symbol == "download_file");
  CHECK((*hits)[0].mode == search::Mode::hybrid);
}

TEST_CASE("search::search hybrid blends both sides by the weight") {
  Fixture f;
  f.stamp();
  f.fill(20);
  // lexical_only: the query's words, but in a sense the fake model maps elsewhere (a long
  // body dilutes its vector). semantic_only: synonyms only. both: words and meaning.
  f.put("a/lexical.py", "python",
        {make_chunk("lexical_only", 1,
                    "def lexical_only():\n    # fetch remote resource: sort numbers render html "
                    "template parse flags compute checksum bytes database connection date\n")});
  f.put("b/semantic.py", "python",
        {make_chunk("semantic_only", 1, "def semantic_only():\n    # retrieve http document\n")});
  f.put("c/both.py", "python",
        {make_chunk("both", 1, "def both():\n    # fetch remote resource, download network file\n")});
  FakeEmbedder embedder;
  search::SearchOptions options;
  options.query = "fetch remote resource";
  options.mode = search::Mode::hybrid;
  auto hits = search::search(*f.store, options, &embedder).value();
  CHECK(symbols(hits).front() == "both");
  CHECK(rank_of(hits, "semantic_only") < 1000);
  CHECK(rank_of(hits, "lexical_only") < 1000);

  options.hybrid_weight = 1.0;  // semantic order
  hits = search::search(*f.store, options, &embedder).value();
  CHECK(rank_of(hits, "semantic_only") < rank_of(hits, "lexical_only"));
  options.hybrid_weight = 0.0;  // lexical order
  hits = search::search(*f.store, options, &embedder).value();
  CHECK(rank_of(hits, "lexical_only") < rank_of(hits, "semantic_only"));
  for (const auto& hit : hits) {
    CHECK(hit.score > 0.0);
    CHECK(hit.score <= 1.0);
  }
}

TEST_CASE("search::search hybrid ranks an exact identifier at least as well as lexical") {
  Fixture f;
  f.stamp();
  f.fill(10);
  // Many chunks about configuration parsing (semantically close, lexically so-so), and the
  // one function whose name is the query.
  for (int i = 0; i < 15; ++i) {
    f.put("config/loader" + std::to_string(i) + ".py", "python",
          {make_chunk("load_settings_" + std::to_string(i), 1,
                      "def load():\n    # parse config parse config parse config file\n")});
  }
  f.put("core/app.go", "go",
        {make_chunk("parseConfig", 1, "func parseConfig(b []byte) (*Config, error) {\n}\n")});
  FakeEmbedder embedder;
  search::SearchOptions options;
  for (const std::string query : {"parseConfig", "where is parseConfig"}) {
    options.query = query;
    options.mode = search::Mode::lexical;
    const int lexical = rank_of(search::search(*f.store, options, &embedder).value(), "parseConfig");
    options.mode = search::Mode::hybrid;
    const int hybrid = rank_of(search::search(*f.store, options, &embedder).value(), "parseConfig");
    INFO(query);
    CHECK(hybrid <= lexical);
    CHECK(hybrid == 1);
  }
}

TEST_CASE("search::search without vectors or with another model") {
  Fixture f;
  f.put("a.py", "python", {make_chunk("retry_upload", 1, "def retry_upload(): pass\n")}, false);
  FakeEmbedder embedder;
  search::SearchOptions options;
  options.query = "retry upload";
  // No model stamp: hybrid is lexical, semantic says how to get vectors.
  auto hits = search::search(*f.store, options, &embedder);
  REQUIRE(hits->size() == 1);
  CHECK((*hits)[0].mode == search::Mode::lexical);
  options.mode = search::Mode::semantic;
  auto semantic = search::search(*f.store, options, &embedder);
  REQUIRE_FALSE(semantic.ok());
  CHECK(semantic.error().message.find("kasava index --rebuild") != std::string::npos);

  f.stamp("test:other-model");
  options.mode = search::Mode::hybrid;
  auto mismatch = search::search(*f.store, options, &embedder);
  REQUIRE_FALSE(mismatch.ok());
  CHECK(mismatch.error().message.find("'test:other-model'") != std::string::npos);
  CHECK(mismatch.error().message.find("'test:fake'") != std::string::npos);
  CHECK(mismatch.error().message.find("kasava index --rebuild") != std::string::npos);
  options.mode = search::Mode::lexical;  // lexical needs no model
  CHECK(search::search(*f.store, options, &embedder)->size() == 1);
}

TEST_CASE("search::search hybrid prefers the file where several chunks match") {
  Fixture f;
  f.stamp();
  f.fill(10);
  // Equal single chunks, but one file has two more relevant places.
  f.put("a/one.py", "python",
        {make_chunk("upload_retry", 1, "def upload_retry():\n    # retry the upload\n")});
  f.put("z/many.py", "python",
        {make_chunk("upload_retry", 1, "def upload_retry():\n    # retry the upload\n"),
         make_chunk("upload_again", 5, "def upload_again():\n    # retry upload later\n"),
         make_chunk("upload_backoff", 9, "def upload_backoff():\n    # upload retry backoff\n")});
  FakeEmbedder embedder;
  search::SearchOptions options;
  options.query = "retry the upload";
  const auto hits = search::search(*f.store, options, &embedder).value();
  REQUIRE_FALSE(hits.empty());
  CHECK(hits[0].record.path == "z/many.py");
}

TEST_CASE("search::search hybrid lifts a chunk named by all the query's words") {
  Fixture f;
  f.stamp();
  f.fill(10);
  // The fake model likes the printer better; the query spells the other one's name.
  f.put("billing/invoice.py", "python",
        {make_chunk("compute_invoice_total", 1, "def compute_invoice_total(items):\n    return sum(items)\n"),
         make_chunk("render", 5, "def render(self, invoice):\n    # invoice invoice invoice total\n")});
  FakeEmbedder embedder;
  search::SearchOptions options;
  options.query = "invoice total";
  const auto hits = search::search(*f.store, options, &embedder).value();
  REQUIRE_FALSE(hits.empty());
  CHECK(hits[0].record.chunk.symbol == "compute_invoice_total");
}

TEST_CASE("search::search hybrid prefers source to a test for prose, and finds the test when asked") {
  Fixture f;
  f.stamp();
  f.fill(10);
  // The test echoes the question a little better than the code it tests.
  f.put("src/upload.py", "python",
        {make_chunk("send_file", 1, "def send_file(path):\n    # send the file to the server\n")});
  f.put("tests/test_upload.py", "python",
        {make_chunk("check_send", 1, "def check_send():\n    # send the file to the server, send it\n")});
  FakeEmbedder embedder;
  search::SearchOptions options;
  options.query = "send the file to the server";
  auto hits = search::search(*f.store, options, &embedder).value();
  REQUIRE(hits.size() >= 2);
  CHECK(hits[0].record.path == "src/upload.py");
  options.query = "test that we send the file to the server";
  hits = search::search(*f.store, options, &embedder).value();
  REQUIRE(hits.size() >= 2);
  CHECK(hits[0].record.path == "tests/test_upload.py");
}

TEST_CASE("search::search hybrid prefers the file named after the topic to a method echoing its words") {
  Fixture f;
  f.stamp();
  f.fill(10);
  f.put("net/cookie_jar.py", "python",
        {make_chunk("expire", 1, "def expire(self):\n    # drop each cookie of the jar past its expiry\n"),
         make_chunk("load", 5, "def load(self, path):\n    # read the saved entries\n")});
  f.put("net/client.py", "python",
        {make_chunk("cookie_jar_helper", 1,
                    "def cookie_jar_helper(self):\n    # format the header line\n")});
  FakeEmbedder embedder;
  search::SearchOptions options;
  options.query = "cookie jar: expiry";
  const auto hits = search::search(*f.store, options, &embedder).value();
  REQUIRE_FALSE(hits.empty());
  CHECK(hits[0].record.path == "net/cookie_jar.py");
}

TEST_CASE("search::search hybrid shows several files before a second place of one") {
  Fixture f;
  f.stamp();
  f.fill(10);
  const std::string text = "def go():\n    # retry the upload\n";
  f.put("a/first.py", "python", {make_chunk("go", 1, text), make_chunk("go", 5, text)});
  f.put("b/second.py", "python", {make_chunk("go", 1, text)});
  FakeEmbedder embedder;
  search::SearchOptions options;
  options.query = "retry the upload";
  const auto hits = search::search(*f.store, options, &embedder).value();
  REQUIRE(hits.size() >= 3);
  CHECK(hits[0].record.path == "a/first.py");
  CHECK(hits[1].record.path == "b/second.py");
  CHECK(hits[2].record.path == "a/first.py");
}

TEST_CASE("search::search hybrid prefers the file whose commits speak of what is asked") {
  Fixture f;
  f.stamp();
  f.fill(10);
  // Two files alike in every other way: without history the tie breaks by path (alpha first).
  const std::string text = "def go(self):\n    # wait and try the upload again\n";
  f.put("a/alpha.py", "python", {make_chunk("go", 1, text)});
  f.put("b/beta.py", "python", {make_chunk("go", 1, text)});
  f.store->begin();
  f.store->put_history({{"Limit retries of uploads after a timeout", {"b/beta.py"}},
                        {"Render dates in the local zone", {"a/alpha.py"}}},
                       true, "tip", 2);
  f.store->commit();
  FakeEmbedder embedder;
  search::SearchOptions options;
  options.query = "limit upload retries";
  const auto hits = search::search(*f.store, options, &embedder).value();
  REQUIRE(hits.size() >= 2);
  CHECK(hits[0].record.path == "b/beta.py");
  CHECK(hits[1].record.path == "a/alpha.py");
}

TEST_CASE("search::search hybrid reads the nearest partitions of the codes, semantic mode every code") {
  Fixture f;
  f.stamp();
  f.fill(20);
  f.put("net/client.py", "python",
        {make_chunk("download_file", 1, "def download_file(url):\n    # network file download\n")});
  // Partitioned, and a partitioned scan reading none of them: what it finds comes from the
  // files written since.
  f.store->set_partitioning(1, 0.0);
  f.store->update_partitions();
  FakeEmbedder embedder;
  search::SearchOptions options;
  options.query = "fetch remote resource";  // no word in common with download_file
  options.mode = search::Mode::hybrid;
  CHECK(search::search(*f.store, options, &embedder)->empty());
  options.mode = search::Mode::semantic;
  auto hits = search::search(*f.store, options, &embedder).value();
  REQUIRE_FALSE(hits.empty());
  CHECK(hits[0].record.chunk.symbol == "download_file");

  f.put("net/fetch.py", "python",
        {make_chunk("download_page", 1, "def download_page(url):\n    # network page download\n")});
  options.mode = search::Mode::hybrid;
  hits = search::search(*f.store, options, &embedder).value();
  CHECK(symbols(hits) == std::vector<std::string>{"download_page"});
}
