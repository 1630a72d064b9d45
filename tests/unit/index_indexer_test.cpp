// Unit tests for core/index: skip rules, index location, and an incremental run on a
// plain directory.
#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <mutex>
#include <thread>
#include <unistd.h>

#include "core/index/indexer.hpp"
#include "core/index/locate.hpp"
#include "support.hpp"

using namespace kasava;
namespace fs = std::filesystem;

namespace {

// A temporary folder with a write() for files relative to it, and its index and source.
struct Folder : test::TempDir {
  fs::path root() const { return path(); }
  void write(const std::string& relative, const std::string& content) const {
    test::write(file(relative), content);
  }
  std::unique_ptr<store::Store> open_index() const {
    auto store = store::Store::open((root() / ".kasava" / "index.db").string(),
                                    store::OpenMode::read_write);
    REQUIRE(store.ok());
    return std::move(*store);
  }
  std::unique_ptr<repo::Source> open_source() const {
    auto source = repo::open_source(root().string(), {});
    REQUIRE(source.ok());
    return std::move(*source);
  }
};

} // namespace

TEST_CASE("index::skip_reason_for_content") {
  CHECK(index::skip_reason_for_content("a.py", "def f():\n    pass\n") == "");
  CHECK(index::skip_reason_for_content("a.bin", std::string("ab\0cd", 5)) == "binary");
  CHECK(index::skip_reason_for_content("web/app.min.js", "var a=1;") == "minified");
  CHECK(index::skip_reason_for_content("app.js", std::string(6000, 'x')) == "minified");
  CHECK(index::skip_reason_for_content("x/package-lock.json", "{}") == "generated");
}

TEST_CASE("index::find_index_upward and default_index_path") {
  Folder dir;
  CHECK_FALSE(index::find_index_upward((dir.root()).string()).has_value());
  dir.write(".kasava/index.db", "");
  fs::create_directories(dir.root() / "a" / "b");
  const auto found = index::find_index_upward((dir.root() / "a" / "b").string());
  REQUIRE(found.has_value());
  CHECK(*found == index::default_index_path(dir.root().string()));
}

TEST_CASE("index::exclude_from_git adds .kasava/ once") {
  Folder dir;
  index::exclude_from_git(dir.root().string());  // not a repository: nothing happens
  CHECK_FALSE(fs::exists(dir.root() / ".git"));
  REQUIRE(std::system(("git init -q '" + dir.root().string() + "'").c_str()) == 0);
  index::exclude_from_git(dir.root().string());
  index::exclude_from_git(dir.root().string());
  std::ifstream in(dir.root() / ".git" / "info" / "exclude");
  int lines = 0;
  for (std::string line; std::getline(in, line);) lines += line == ".kasava/";
  CHECK(lines == 1);
}

TEST_CASE("index::run_index is incremental on a plain directory") {
  Folder dir;
  dir.write("src/auth.py", "def login(user):\n    \"\"\"Log a user in.\"\"\"\n    return user\n");
  dir.write("src/util.go", "package util\n\nfunc Retry() {}\n");
  dir.write("data.bin", std::string("\0\1\2", 3));
  auto store = dir.open_index();
  auto source = dir.open_source();

  auto first = index::run_index(*source, *store, {}, {});
  REQUIRE(first.ok());
  CHECK(first->files == 3);
  CHECK(first->parsed == 2);
  CHECK(first->indexed == 2);
  CHECK(first->skipped.at("binary") == 1);
  CHECK(first->chunks >= 2);

  auto second = index::run_index(*source, *store, {}, {});
  REQUIRE(second.ok());
  CHECK(second->parsed == 0);
  CHECK(second->unchanged == 2);
  CHECK(second->skipped.at("binary") == 1);

  fs::remove(dir.root() / "src" / "util.go");
  dir.write("src/auth.py", "def logout(user):\n    return None\n");
  auto third = index::run_index(*source, *store, {}, {});
  REQUIRE(third.ok());
  CHECK(third->parsed == 1);
  CHECK(third->removed == 1);
  CHECK(third->indexed == 1);
  const auto states = store->file_states();
  CHECK(states.count("src/util.go") == 0);
  CHECK(states.count("src/auth.py") == 1);
}

TEST_CASE("index::run_index writes nothing when nothing changed") {
  Folder dir;
  dir.write("a.py", "def a():\n    return 1\n");
  dir.write("b.go", "package b\n\nfunc B() {}\n");
  auto store = dir.open_index();
  auto source = dir.open_source();
  auto first = index::run_index(*source, *store, {}, {});
  REQUIRE(first.ok());

  // A no-change refresh (the one before every `ask`) must stay a read: not even a timestamp.
  store->set_meta("indexed_at", "sentinel");
  auto second = index::run_index(*source, *store, {}, {});
  REQUIRE(second.ok());
  CHECK(store->meta("indexed_at") == "sentinel");
  CHECK(second->indexed == first->indexed);
  CHECK(second->chunks == first->chunks);
  CHECK(second->unchanged == 2);
}

TEST_CASE("index::run_index commits many windows and stops between them when cancelled") {
  Folder dir;
  constexpr int k_files = 700;  // several windows of the pipeline
  for (int i = 0; i < k_files; ++i) {
    // (snprintf: GCC 12's -Wrestrict misfires on chains of string operator+)
    char name[32];
    char text[64];
    std::snprintf(name, sizeof name, "f%d.py", 1000 + i);
    std::snprintf(text, sizeof text, "def f%d():\n    return %d\n", i, i);
    dir.write(name, text);
  }
  const std::string index_path = (dir.root() / ".kasava" / "index.db").string();
  auto store = store::Store::open(index_path, store::OpenMode::read_write);
  REQUIRE(store.ok());
  auto source = repo::open_source(dir.root().string(), {});
  REQUIRE(source.ok());

  index::IndexCallbacks callbacks;
  std::atomic<int> progress_calls{0};  // cancelled() is polled from the parser threads too
  callbacks.progress = [&](const index::IndexProgress&) { ++progress_calls; };
  callbacks.cancelled = [&] { return progress_calls >= 1; };
  auto interrupted = index::run_index(**source, **store, {}, callbacks);
  REQUIRE_FALSE(interrupted.ok());
  CHECK(interrupted.error().message == "interrupted");
  // What was handed to the writer is committed: whole files with their chunks, no more.
  const auto counts = (*store)->counts();
  CHECK(counts.files > 0);
  CHECK(counts.files < k_files);
  CHECK(counts.chunks == counts.files);

  auto finished = index::run_index(**source, **store, {}, {});
  REQUIRE(finished.ok());
  CHECK(finished->indexed == k_files);
  CHECK(finished->parsed == k_files - static_cast<std::size_t>(counts.files));
  CHECK(finished->chunks == k_files);
}

namespace {

// A Source that hands every call to a real one; the sources below watch its reads.
class ForwardingSource : public repo::Source {
public:
  explicit ForwardingSource(repo::Source& inner) : m_inner(inner) {}
  const std::string& root() const override { return m_inner.root(); }
  bool is_git() const override { return m_inner.is_git(); }
  std::string commit_id() const override { return m_inner.commit_id(); }
  util::Result<std::vector<repo::SourceEntry>> list() override { return m_inner.list(); }
  util::Result<std::string> read(repo::SourceEntry& entry) override { return m_inner.read(entry); }

private:
  repo::Source& m_inner;
};

// Counts the files it reads.
class CountingSource final : public ForwardingSource {
public:
  using ForwardingSource::ForwardingSource;
  util::Result<std::string> read(repo::SourceEntry& entry) override {
    ++reads;
    return ForwardingSource::read(entry);
  }
  std::atomic<int> reads{0};
};

// Records which thread read each file.
class ThreadRecordingSource final : public ForwardingSource {
public:
  using ForwardingSource::ForwardingSource;
  util::Result<std::string> read(repo::SourceEntry& entry) override {
    {
      std::lock_guard lock(m_mutex);
      readers[entry.path] = std::this_thread::get_id();
    }
    return ForwardingSource::read(entry);
  }
  std::map<std::string, std::thread::id> readers;

private:
  std::mutex m_mutex;
};

void set_old_mtime(const fs::path& file, std::chrono::hours age) {
  fs::last_write_time(file, fs::file_time_type::clock::now() - age);
}

} // namespace

TEST_CASE("index::run_index stops within a window when cancelled, storing none of it") {
  Folder dir;
  constexpr int k_files = 200;  // one window
  for (int i = 0; i < k_files; ++i) {
    char name[32];
    std::snprintf(name, sizeof name, "f%d.py", 1000 + i);
    dir.write(name, "def f():\n    return 1\n");
  }
  const std::string index_path = (dir.root() / ".kasava" / "index.db").string();
  auto store = store::Store::open(index_path, store::OpenMode::read_write);
  REQUIRE(store.ok());
  auto inner = repo::open_source(dir.root().string(), {});
  REQUIRE(inner.ok());
  CountingSource source(**inner);

  index::IndexCallbacks callbacks;
  callbacks.cancelled = [&] { return source.reads >= 10; };
  auto interrupted = index::run_index(source, **store, {}, callbacks);
  REQUIRE_FALSE(interrupted.ok());
  CHECK(interrupted.error().message == "interrupted");
  // Each parser thread stops before its next file; the window's files are left for next time.
  CHECK(source.reads < 10 + static_cast<int>(std::thread::hardware_concurrency()) + 2);
  CHECK((*store)->counts().files == 0);

  auto finished = index::run_index(source, **store, {}, {});
  REQUIRE(finished.ok());
  CHECK(finished->parsed == k_files);
}

TEST_CASE("index::run_index parses large files on the calling thread only, and all of them") {
  Folder dir;
  // Four files over 256 KiB among small ones, all in one window: each large one takes a
  // syntax tree of tens of megabytes, so they are kept off the helper threads.
  constexpr int k_large = 4;
  constexpr int k_functions = 6000;
  std::string large;
  for (int f = 0; f < k_functions; ++f) {
    char function[96];
    std::snprintf(function, sizeof function, "def f%d(a, b):\n    x = a + b * %d\n    return x\n\n",
                  f, f);
    large += function;
  }
  REQUIRE(large.size() > 256 * 1024);
  const auto large_name = [](int i) {
    char name[32];
    std::snprintf(name, sizeof name, "large%d.py", i);
    return std::string(name);
  };
  for (int i = 0; i < k_large; ++i) dir.write(large_name(i), large);
  constexpr int k_small = 40;
  for (int i = 0; i < k_small; ++i) {
    char name[32];
    std::snprintf(name, sizeof name, "small%d.py", i);
    dir.write(name, "def s():\n    return 1\n");
  }
  auto store = dir.open_index();
  auto inner = dir.open_source();
  ThreadRecordingSource source(*inner);
  index::IndexOptions options;
  options.threads = 2;
  auto summary = index::run_index(source, *store, options, {});
  REQUIRE(summary.ok());
  CHECK(summary->parsed == k_large + k_small);
  CHECK(store->counts().chunks == k_large * k_functions + k_small);
  for (int i = 0; i < k_large; ++i) {
    CHECK(source.readers.at(large_name(i)) == std::this_thread::get_id());
  }
}

TEST_CASE("index::run_index does not read unchanged files of a plain directory (stat cache)") {
  Folder dir;
  dir.write("a.py", "def a():\n    return 1\n");
  dir.write("b.go", "package b\n\nfunc B() {}\n");
  dir.write("new.py", "def fresh():\n    return 0\n");
  // Files modified just now are racy: their stat data is not trusted until they are older.
  set_old_mtime(dir.file("a.py"), std::chrono::hours(2));
  set_old_mtime(dir.file("b.go"), std::chrono::hours(2));
  auto store = dir.open_index();
  auto inner = dir.open_source();
  CountingSource source(*inner);

  auto first = index::run_index(source, *store, {}, {});
  REQUIRE(first.ok());
  CHECK(source.reads == 3);

  source.reads = 0;
  auto second = index::run_index(source, *store, {}, {});
  REQUIRE(second.ok());
  CHECK(source.reads == 1);  // only the racy new.py
  CHECK(second->unchanged == 3);
  CHECK(second->parsed == 0);

  // An edit changes the stat data (here the size), even with the old mtime put back.
  dir.write("a.py", "def a_changed():\n    return 2\n");
  set_old_mtime(dir.file("a.py"), std::chrono::hours(2));
  source.reads = 0;
  auto third = index::run_index(source, *store, {}, {});
  REQUIRE(third.ok());
  CHECK(third->parsed == 1);
  CHECK(source.reads == 2);  // a.py and the still racy new.py
  const auto states = store->file_states();
  CHECK(states.at("a.py").mtime_ns != 0);
  CHECK(states.at("new.py").mtime_ns == 0);
}

namespace {

// A thread-safe fake model: hashed bag of words, counting the texts it embeds.
class CountingEmbedder : public embed::Embedder {
public:
  explicit CountingEmbedder(std::string id) : m_id(std::move(id)) {}
  std::string model_id() const override { return m_id; }
  int dimensions() const override { return 32; }
  util::Result<std::vector<std::vector<float>>> embed(const std::vector<std::string_view>& inputs,
                                                      embed::InputKind) override {
    m_embedded += inputs.size();
    std::vector<std::vector<float>> vectors;
    for (const auto input : inputs) {
      std::vector<float> vector(32, 0.01f);
      for (std::size_t i = 0; i < input.size(); ++i) {
        vector[static_cast<unsigned char>(input[i]) % 32] += i % 2 == 0 ? 1.0f : -0.5f;
      }
      vectors.push_back(std::move(vector));
    }
    return vectors;
  }
  std::size_t embedded() const { return m_embedded; }

private:
  std::string m_id;
  std::atomic<std::size_t> m_embedded{0};
};

} // namespace

TEST_CASE("index::run_index embeds every chunk once and stamps the model") {
  Folder dir;
  for (int i = 0; i < 30; ++i) {
    dir.write("src/m" + std::to_string(i) + ".py",
              "def f" + std::to_string(i) + "():\n    return 1\n\ndef g():\n    pass\n");
  }
  const std::string index_path = (dir.root() / ".kasava" / "index.db").string();
  auto store = store::Store::open(index_path, store::OpenMode::read_write);
  REQUIRE(store.ok());
  auto source = repo::open_source(dir.root().string(), {});
  REQUIRE(source.ok());
  CountingEmbedder embedder("test:counting");
  index::IndexOptions options;
  options.embedder = &embedder;
  options.threads = 2;

  auto first = index::run_index(**source, **store, options, {});
  REQUIRE(first.ok());
  CHECK(embedder.embedded() == first->chunks);
  CHECK(index::index_model(**store) == "test:counting");
  CHECK((*store)->meta("embedding_dims") == "32");
  CHECK((*store)->stats().vectors == static_cast<std::int64_t>(first->chunks));
  auto check = store::check_index(index_path);
  REQUIRE(check.ok());
  CHECK(check->problems.empty());
  CHECK(check->inconsistent_paths.empty());

  // Incremental: only the changed file is embedded again.
  dir.write("src/m3.py", "def changed():\n    return 2\n");
  const std::size_t before = embedder.embedded();
  auto second = index::run_index(**source, **store, options, {});
  REQUIRE(second.ok());
  CHECK(second->parsed == 1);
  CHECK(embedder.embedded() - before == second->chunks_written);
  CHECK((*store)->stats().vectors == static_cast<std::int64_t>(second->chunks));
  check = store::check_index(index_path);
  CHECK(check->inconsistent_paths.empty());

  // Another model, or none, on a non-empty index: an error that says how to rebuild.
  CountingEmbedder other("test:other");
  options.embedder = &other;
  auto mismatch = index::run_index(**source, **store, options, {});
  REQUIRE_FALSE(mismatch.ok());
  CHECK(mismatch.error().message.find("'test:counting'") != std::string::npos);
  CHECK(mismatch.error().message.find("kasava index --rebuild") != std::string::npos);
  options.embedder = nullptr;
  CHECK_FALSE(index::run_index(**source, **store, options, {}).ok());
  CHECK(other.embedded() == 0);
}

namespace {

// A fake remote model (Locality::remote): fails every input containing `m_fail_word`, and
// records how many inputs each call carried.
class FlakyRemoteEmbedder : public embed::Embedder {
public:
  std::string model_id() const override { return "test:remote"; }
  int dimensions() const override { return 16; }
  embed::Locality locality() const override { return embed::Locality::remote; }
  util::Result<std::vector<std::vector<float>>> embed(const std::vector<std::string_view>&,
                                                      embed::InputKind) override {
    return util::Error{"all or nothing is not what the indexer should call"};
  }
  embed::EmbedReport embed_partial(const std::vector<std::string_view>& inputs,
                                   embed::InputKind) override {
    calls.push_back(inputs.size());
    embed::EmbedReport report;
    for (std::size_t i = 0; i < inputs.size(); ++i) {
      sent.emplace_back(inputs[i]);
      if (!fail_word.empty() && inputs[i].find(fail_word) != std::string_view::npos) {
        report.vectors.emplace_back();
        report.failures.push_back({i, i + 1, "HTTP 503", permanent});
        continue;
      }
      std::vector<float> vector(16, 0.1f);
      for (std::size_t k = 0; k < inputs[i].size(); ++k) vector[k % 16] += static_cast<float>(inputs[i][k] % 7);
      report.vectors.push_back(std::move(vector));
    }
    return report;
  }

  std::string fail_word;
  bool permanent = false;
  std::vector<std::size_t> calls;  // inputs per embed_partial call
  std::vector<std::string> sent;
};

} // namespace

TEST_CASE("index::run_index with a remote model: whole windows, cache, pending chunks sent again") {
  Folder dir;
  for (int i = 0; i < 40; ++i) {
    dir.write("src/m" + std::to_string(i) + ".py",
              "def f" + std::to_string(i) + "():\n    return 1\n\ndef g" + std::to_string(i) + "():\n    pass\n");
  }
  dir.write("src/flaky.py", "def flaky_function():\n    return 3\n");
  dir.write(".env", "TOKEN=abc\n");
  const std::string index_path = (dir.root() / ".kasava" / "index.db").string();
  auto store = store::Store::open(index_path, store::OpenMode::read_write);
  REQUIRE(store.ok());
  auto cache = store::VectorCache::open((dir.root() / "cache" / "vectors.db").string());
  REQUIRE(cache.ok());
  auto source = repo::open_source(dir.root().string(), {});
  REQUIRE(source.ok());
  FlakyRemoteEmbedder embedder;
  embedder.fail_word = "flaky_function";
  index::IndexOptions options;
  options.embedder = &embedder;
  options.vector_cache = cache->get();
  options.threads = 2;

  auto first = index::run_index(**source, **store, options, {});
  REQUIRE(first.ok());
  // One call for the whole window (not one per file), nothing of the secret file sent.
  CHECK(embedder.calls.size() == 1);
  CHECK(first->skipped.at("secret") == 1);
  for (const auto& input : embedder.sent) CHECK(input.find("TOKEN") == std::string::npos);
  CHECK(first->embedding.sent == first->chunks - 1);
  CHECK(first->embedding.pending == 1);
  CHECK(first->embedding.first_error == "src/flaky.py:1-2: HTTP 503");  // names the chunk
  CHECK((*store)->stats().pending_vectors == 1);
  auto check = store::check_index(index_path);
  REQUIRE(check.ok());
  CHECK(check->problems.empty());
  CHECK(check->inconsistent_paths.empty());

  // The service recovers: only the pending chunk is sent, and it gets its vector and code.
  embedder.fail_word.clear();
  embedder.sent.clear();
  auto second = index::run_index(**source, **store, options, {});
  REQUIRE(second.ok());
  REQUIRE(embedder.sent.size() == 1);
  CHECK(embedder.sent.front().find("flaky_function") != std::string::npos);
  CHECK(second->embedding.retried == 1);
  CHECK(second->embedding.pending == 0);
  CHECK((*store)->stats().pending_vectors == 0);
  CHECK((*store)->stats().vectors == static_cast<std::int64_t>(second->chunks));
  check = store::check_index(index_path);
  CHECK(check->problems.empty());
  CHECK(check->inconsistent_paths.empty());

  // A rebuild into a new index pays nothing: every vector comes from the cache.
  const std::string rebuilt_path = (dir.root() / "rebuilt.db").string();
  auto rebuilt = store::Store::open(rebuilt_path, store::OpenMode::read_write);
  REQUIRE(rebuilt.ok());
  embedder.sent.clear();
  auto third = index::run_index(**source, **rebuilt, options, {});
  REQUIRE(third.ok());
  CHECK(embedder.sent.empty());
  CHECK(third->embedding.cached == third->chunks);
  CHECK(store::check_index(rebuilt_path)->problems.empty());
}

TEST_CASE("index::run_index with a remote model stops at a permanent failure, leaving a sound index") {
  Folder dir;
  for (int i = 0; i < 300; ++i) {
    dir.write("src/m" + std::to_string(i) + ".py", "def f" + std::to_string(i) + "():\n    return 1\n");
  }
  dir.write("zz/last.py", "def rejected_everywhere():\n    pass\n");
  const std::string index_path = (dir.root() / ".kasava" / "index.db").string();
  auto store = store::Store::open(index_path, store::OpenMode::read_write);
  REQUIRE(store.ok());
  auto source = repo::open_source(dir.root().string(), {});
  REQUIRE(source.ok());
  FlakyRemoteEmbedder embedder;
  embedder.fail_word = "rejected_everywhere";
  embedder.permanent = true;
  index::IndexOptions options;
  options.embedder = &embedder;
  try {
    (void)index::run_index(**source, **store, options, {});
    FAIL("a permanent failure must stop the run");
  } catch (const util::Failure& failure) {
    CHECK(std::string(failure.what()).find("HTTP 503") != std::string::npos);
  }
  auto check = store::check_index(index_path);
  REQUIRE(check.ok());
  CHECK(check->problems.empty());
  CHECK(check->inconsistent_paths.empty());
}

TEST_CASE("index::run_index dry run: counts what a remote model would be sent, writes nothing") {
  Folder dir;
  dir.write("a.py", "def alpha():\n    return 1\n");
  dir.write("b.py", "def beta():\n    return 2\n");
  auto store = store::Store::open(":memory:", store::OpenMode::read_write);
  REQUIRE(store.ok());
  auto source = repo::open_source(dir.root().string(), {});
  REQUIRE(source.ok());
  FlakyRemoteEmbedder embedder;
  index::IndexOptions options;
  options.embedder = &embedder;
  options.dry_run = true;
  auto summary = index::run_index(**source, **store, options, {});
  REQUIRE(summary.ok());
  CHECK(embedder.calls.empty());
  CHECK(summary->embedding.would_send == 2);
  CHECK(summary->embedding.estimated_tokens > 2);
  CHECK(summary->chunks_written == 2);
  CHECK((*store)->file_states().empty());
  CHECK(index::index_model(**store).empty());
}

namespace {

// Sets every file under `root` to have been modified an hour ago: older than the racy margin,
// so a run may trust their stat data.
void age_files(const fs::path& root) {
  const auto an_hour_ago = fs::file_time_type::clock::now() - std::chrono::hours(1);
  for (const auto& entry : fs::recursive_directory_iterator(root)) {
    if (entry.is_regular_file() && entry.path().string().find(".kasava") == std::string::npos) {
      fs::last_write_time(entry.path(), an_hour_ago);
    }
  }
}

} // namespace

TEST_CASE("index::run_index keeps the listing digest with a symlink to a folder, not with a dangling one") {
  // A symlink to a folder is skipped on every run, and is no reason to distrust the listing
  // (the folder's files are listed under their own paths); a dangling one may be mended
  // without its own stat data changing, so it is read again every run, without the digest.
  Folder dir;
  dir.write("src/a.py", "def alpha():\n    return 1\n");
  REQUIRE(std::system(("ln -s src '" + (dir.root() / "link").string() + "'").c_str()) == 0);
  const std::string index_path = (dir.root() / ".kasava" / "index.db").string();
  auto store = store::Store::open(index_path, store::OpenMode::read_write);
  REQUIRE(store.ok());
  auto source = repo::open_source(dir.root().string(), {});
  REQUIRE(source.ok());
  age_files(dir.root());
  auto first = index::run_index(**source, **store, {}, {});
  REQUIRE(first.ok());
  CHECK(first->skipped.at("symlink") == 1);
  CHECK(first->indexed == 1);
  const std::string digest = (*store)->meta("listing_digest").value_or("");
  CHECK(digest.size() == 32);
  auto again = index::run_index(**source, **store, {}, {});
  REQUIRE(again.ok());
  CHECK(again->unchanged == 1);
  CHECK(again->skipped.at("symlink") == 1);
  CHECK((*store)->meta("listing_digest") == digest);

  REQUIRE(std::system(("ln -s missing '" + (dir.root() / "dangling").string() + "'").c_str()) == 0);
  auto dangling = index::run_index(**source, **store, {}, {});
  REQUIRE(dangling.ok());
  CHECK(dangling->skipped.at("symlink") == 2);
  CHECK((*store)->meta("listing_digest").value_or("").empty());
}

TEST_CASE("index::run_index skips a listing it has indexed completely, and nothing else") {
  Folder dir;
  dir.write("a.py", "def alpha():\n    return 1\n");
  dir.write("b.go", "package b\n\nfunc Beta() {}\n");
  dir.write("blob.bin", std::string("\0\1", 2));
  const std::string index_path = (dir.root() / ".kasava" / "index.db").string();
  auto store = store::Store::open(index_path, store::OpenMode::read_write);
  REQUIRE(store.ok());
  auto source = repo::open_source(dir.root().string(), {});
  REQUIRE(source.ok());

  // Files modified just now may change again unseen within the file system's timestamp
  // granularity: no digest is kept for them.
  auto first = index::run_index(**source, **store, {}, {});
  REQUIRE(first.ok());
  CHECK((*store)->meta("listing_digest").value_or("").empty());

  age_files(dir.root());
  auto second = index::run_index(**source, **store, {}, {});
  REQUIRE(second.ok());
  const std::string digest = (*store)->meta("listing_digest").value_or("");
  CHECK(digest.size() == 32);

  // The same listing: the same summary, from the fast path.
  auto third = index::run_index(**source, **store, {}, {});
  REQUIRE(third.ok());
  CHECK(third->indexed == second->indexed);
  CHECK(third->chunks == second->chunks);
  CHECK(third->unchanged == 2);
  CHECK(third->parsed == 0);
  CHECK(third->skipped == second->skipped);
  CHECK((*store)->meta("listing_digest") == digest);

  // The fast path reports the counts stored with the digest, not recounted rows...
  CHECK((*store)->meta("listing_counts") == digest + "\t2\t" + std::to_string(second->chunks) +
                                               "\tbinary=1");
  (*store)->set_meta("listing_counts", digest + "\t7\t99\tbinary=3");
  auto from_counts = index::run_index(**source, **store, {}, {});
  REQUIRE(from_counts.ok());
  CHECK(from_counts->indexed == 7);
  CHECK(from_counts->chunks == 99);
  CHECK(from_counts->skipped.at("binary") == 3);
  // ...and only those of the same digest: others (and unreadable ones) are counted again.
  for (const std::string& stale : {std::string("0123\t7\t99"), digest + "\t7", digest + "\tx\t1"}) {
    (*store)->set_meta("listing_counts", stale);
    auto recounted = index::run_index(**source, **store, {}, {});
    REQUIRE(recounted.ok());
    CHECK(recounted->indexed == second->indexed);
    CHECK(recounted->chunks == second->chunks);
    CHECK(recounted->skipped == second->skipped);
  }

  // A write by anyone else (verify --repair removes a damaged file) forgets the digest, so
  // the next run puts the file back.
  (*store)->remove_file("a.py");
  CHECK_FALSE((*store)->meta("listing_digest").has_value());
  auto repaired = index::run_index(**source, **store, {}, {});
  REQUIRE(repaired.ok());
  CHECK(repaired->parsed == 1);
  CHECK(repaired->indexed == 2);

  // A changed file changes the listing.
  dir.write("b.go", "package b\n\nfunc Beta() {}\n\nfunc Gamma() {}\n");
  age_files(dir.root());
  auto changed = index::run_index(**source, **store, {}, {});
  REQUIRE(changed.ok());
  CHECK(changed->parsed == 1);
  CHECK((*store)->meta("listing_digest") != digest);

  // Another size limit is another listing, even with the same files.
  index::IndexOptions smaller;
  smaller.max_file_size = 10;
  auto limited = index::run_index(**source, **store, smaller, {});
  REQUIRE(limited.ok());
  CHECK(limited->skipped.at("too large") == 2);
}

namespace {

// A git repository made by the test, indexed with `--rev` into an index outside it.
struct RevRepo {
  Folder work;
  test::TempDir indexes;
  RevRepo() { test::git(work.path(), "init -q"); }
  std::string commit(const std::string& message) {
    test::git(work.path(), "add -A");
    test::git(work.path(), "commit -q --allow-empty -m '" + message + "'");
    return test::git(work.path(), "rev-parse HEAD");
  }
  std::string index_path(const std::string& name) const { return indexes.file(name + ".db"); }
};

util::Result<index::IndexSummary> index_revision(const RevRepo& repo, store::Store& store,
                                                 const std::string& revision,
                                                 const index::IndexCallbacks& callbacks = {},
                                                 const index::IndexOptions& options = {}) {
  auto source = repo::open_source(repo.work.path(), {revision});
  REQUIRE(source.ok());
  return index::run_index(**source, store, options, callbacks);
}

// Requires `store` (indexed incrementally with --rev) to hold what a clean index of
// `revision` holds — the same files, blob ids, skip reasons and chunk counts — and `summary`
// to report the same figures as the clean run.
void require_clean_equal(const RevRepo& repo, const store::Store& store,
                         const std::string& revision, const index::IndexSummary& summary) {
  const std::string clean_path = repo.index_path("clean");
  REQUIRE(store::Store::remove(clean_path).ok());
  auto clean = store::Store::open(clean_path, store::OpenMode::read_write);
  REQUIRE(clean.ok());
  auto expected = index_revision(repo, **clean, revision);
  REQUIRE(expected.ok());
  const auto states = store.file_states();
  const auto clean_states = (*clean)->file_states();
  REQUIRE(states.size() == clean_states.size());
  for (const auto& [path, state] : clean_states) {
    INFO(path);
    REQUIRE(states.count(path) == 1);
    CHECK(states.at(path).blob_id == state.blob_id);
    CHECK(states.at(path).skip_reason == state.skip_reason);
  }
  const auto stats = store.stats();
  const auto clean_stats = (*clean)->stats();
  CHECK(stats.files == clean_stats.files);
  CHECK(stats.chunks == clean_stats.chunks);
  CHECK(stats.files_per_language == clean_stats.files_per_language);
  CHECK(store.meta("commit") == (*clean)->meta("commit"));
  CHECK(summary.files == expected->files);
  CHECK(summary.indexed == expected->indexed);
  CHECK(summary.chunks == expected->chunks);
  CHECK(summary.skipped == expected->skipped);
  CHECK(summary.unchanged + summary.parsed == summary.indexed);
  // The clean index stores the same tree rows as the incremental one.
  CHECK(store.tree_ids() == (*clean)->tree_ids());
  CHECK(store.meta("rev_submodules") == (*clean)->meta("rev_submodules"));
}

} // namespace

TEST_CASE("index::run_index keeps the work tree's untracked cache, and finds files it added") {
  Folder dir;
  test::run("git init -q -b main '" + dir.root().string() + "'");
  dir.write("src/a.py", "def alpha():\n    return 1\n");
  dir.write("src/deep/b.py", "def beta():\n    return 2\n");
  test::git(dir.root().string(), "add src");
  test::git(dir.root().string(), "commit -q -m first");
  for (const char* folder : {"", "src", "src/deep"}) {
    const fs::path path = dir.root() / folder;
    fs::last_write_time(path, fs::last_write_time(path) - std::chrono::minutes(1));
  }
  const std::string index_path = (dir.root() / ".kasava" / "index.db").string();
  auto store = store::Store::open(index_path, store::OpenMode::read_write);
  REQUIRE(store.ok());
  const auto run = [&] {
    auto source = repo::open_source(dir.root().string(), {});
    REQUIRE(source.ok());
    auto summary = index::run_index(**source, **store, {}, {});
    REQUIRE(summary.ok());
    return *summary;
  };

  CHECK(run().parsed == 2);
  // Kept by the run, and kept as it is by a run that changes nothing. (The root is not in
  // it: making .kasava for this index changed it just now.)
  const std::string cache = (*store)->meta("untracked_cache").value_or("");
  CHECK(cache.find(" src/\n") != std::string::npos);
  CHECK(cache.find(" src/deep/\n") != std::string::npos);
  CHECK(run().unchanged == 2);
  CHECK((*store)->meta("untracked_cache") == cache);

  // An untracked file in a folder the cache vouches for: its folder changed, so it is found.
  dir.write("src/deep/c.py", "def gamma():\n    return 3\n");
  const auto added = run();
  CHECK(added.parsed == 1);
  CHECK(added.indexed == 3);
  const std::string relearnt = (*store)->meta("untracked_cache").value_or("");
  CHECK(relearnt.find(" src/\n") != std::string::npos);
  CHECK(relearnt.find(" src/deep/\n") == std::string::npos);
}

TEST_CASE("index::run_index --rev walks only the folders whose tree id changed") {
  RevRepo repo;
  repo.work.write("top.py", "def top():\n    return 0\n");
  repo.work.write("a/x.py", "def ex():\n    return 1\n");
  repo.work.write("a/b/c/deep.py", "def deep():\n    return 2\n");
  repo.work.write("a/b/c/data.bin", std::string("\0\1\2", 3));
  repo.work.write("b/y.go", "package b\n\nfunc Why() {}\n");
  repo.work.write("b/z/w.rs", "fn w() {}\n");
  REQUIRE(std::system(("ln -s ../top.py '" + repo.work.file("a/link.py") + "'").c_str()) == 0);
  // A nested repository: committed as a gitlink (a submodule), which has no file row.
  repo.work.write("a/b/module/readme.md", "inner\n");
  test::git(repo.work.file("a/b/module"), "init -q");
  test::git(repo.work.file("a/b/module"), "add -A");
  test::git(repo.work.file("a/b/module"), "commit -q -m inner");
  const std::string first_commit = repo.commit("first");
  auto store = store::Store::open(repo.index_path("rev"), store::OpenMode::read_write);
  REQUIRE(store.ok());

  auto first = index_revision(repo, **store, first_commit);
  REQUIRE(first.ok());
  CHECK(first->parsed == 5);
  CHECK(first->skipped.at("submodule") == 1);
  CHECK(first->skipped.at("symlink") == 1);
  CHECK_FALSE((*store)->tree_ids().empty());
  require_clean_equal(repo, **store, first_commit, *first);

  SECTION("nothing changed: only the root tree is read, nothing is written") {
    const auto trees = (*store)->tree_ids();
    auto source = repo::open_source(repo.work.path(), {first_commit});
    REQUIRE(source.ok());
    auto listing = (*source)->list_changed(trees);
    REQUIRE(listing.has_value());
    REQUIRE(listing->ok());
    CHECK((*listing)->entries.empty());
    CHECK((*listing)->unchanged == std::vector<std::string>{""});
    const auto indexed_at = (*store)->meta("indexed_at");
    auto again = index_revision(repo, **store, first_commit);
    REQUIRE(again.ok());
    CHECK(again->parsed == 0);
    CHECK(again->removed == 0);
    CHECK(again->unchanged == first->indexed);
    CHECK((*store)->tree_ids() == trees);
    CHECK((*store)->meta("indexed_at") == indexed_at);
    require_clean_equal(repo, **store, first_commit, *again);
  }

  SECTION("one file changed deep down, a folder deleted, one added, a file moved") {
    repo.work.write("a/b/c/deep.py", "def deep():\n    return 3\n\ndef deeper():\n    return 4\n");
    const std::string changed = repo.commit("deep change");
    auto run = index_revision(repo, **store, changed);
    REQUIRE(run.ok());
    CHECK(run->parsed == 1);
    CHECK(run->removed == 0);
    require_clean_equal(repo, **store, changed, *run);

    test::git(repo.work.path(), "rm -r -q b");
    const std::string deleted = repo.commit("folder deleted");
    run = index_revision(repo, **store, deleted);
    REQUIRE(run.ok());
    CHECK(run->parsed == 0);
    CHECK(run->removed == 2);
    require_clean_equal(repo, **store, deleted, *run);

    repo.work.write("n/m/new.py", "def fresh():\n    return 5\n");
    const std::string added = repo.commit("folder added");
    run = index_revision(repo, **store, added);
    REQUIRE(run.ok());
    CHECK(run->parsed == 1);
    CHECK(run->removed == 0);
    require_clean_equal(repo, **store, added, *run);

    test::git(repo.work.path(), "mv a/x.py n/m/x.py");
    const std::string moved = repo.commit("file moved");
    run = index_revision(repo, **store, moved);
    REQUIRE(run.ok());
    CHECK(run->parsed == 1);
    CHECK(run->removed == 1);
    require_clean_equal(repo, **store, moved, *run);

    // Back and forth between two commits far apart.
    for (const std::string& revision : {first_commit, moved, first_commit, deleted, moved}) {
      INFO(revision);
      run = index_revision(repo, **store, revision);
      REQUIRE(run.ok());
      require_clean_equal(repo, **store, revision, *run);
    }
  }

  SECTION("another commit of the same tree stores its id and changes nothing else") {
    const std::string empty = repo.commit("empty");
    auto run = index_revision(repo, **store, empty);
    REQUIRE(run.ok());
    CHECK(run->parsed == 0);
    CHECK((*store)->meta("commit") == empty);
    require_clean_equal(repo, **store, empty, *run);
  }

  SECTION("a dry run leaves the rows as they were") {
    repo.work.write("a/b/c/deep.py", "def deep():\n    return 9\n");
    const std::string changed = repo.commit("deep change");
    const auto trees = (*store)->tree_ids();
    index::IndexOptions dry;
    dry.dry_run = true;
    auto run = index_revision(repo, **store, changed, {}, dry);
    REQUIRE(run.ok());
    CHECK(run->parsed == 1);
    CHECK(run->files == first->files);
    CHECK((*store)->tree_ids() == trees);
    run = index_revision(repo, **store, changed);
    REQUIRE(run.ok());
    require_clean_equal(repo, **store, changed, *run);
  }
}

TEST_CASE("index::run_index --rev after a working-tree run, and the reverse") {
  RevRepo repo;
  repo.work.write("a/one.py", "def one():\n    return 1\n");
  repo.work.write("b/two.py", "def two():\n    return 2\n");
  const std::string head = repo.commit("first");
  auto store = store::Store::open(repo.index_path("rev"), store::OpenMode::read_write);
  REQUIRE(store.ok());
  auto first = index_revision(repo, **store, head);
  REQUIRE(first.ok());
  REQUIRE_FALSE((*store)->tree_ids().empty());

  // An uncommitted edit indexed from the working tree: the index is no longer HEAD's tree.
  repo.work.write("a/one.py", "def one():\n    return 11\n");
  auto work_tree = repo::open_source(repo.work.path(), {});
  REQUIRE(work_tree.ok());
  auto edited = index::run_index(**work_tree, **store, {}, {});
  REQUIRE(edited.ok());
  CHECK(edited->parsed == 1);
  CHECK((*store)->tree_ids().empty());

  // --rev HEAD again: a full listing puts the committed version back.
  auto back = index_revision(repo, **store, head);
  REQUIRE(back.ok());
  CHECK(back->parsed == 1);
  CHECK_FALSE((*store)->tree_ids().empty());
  require_clean_equal(repo, **store, head, *back);

  // A working-tree run after it writes the edit again and clears the rows.
  auto again = index::run_index(**work_tree, **store, {}, {});
  REQUIRE(again.ok());
  CHECK(again->parsed == 1);
  CHECK((*store)->tree_ids().empty());
}

TEST_CASE("index::run_index --rev interrupted leaves no tree rows") {
  RevRepo repo;
  for (int i = 0; i < 600; ++i) {
    repo.work.write("f" + std::to_string(i % 3) + "/m" + std::to_string(i) + ".py",
                    "def f" + std::to_string(i) + "():\n    return " + std::to_string(i) + "\n");
  }
  const std::string first_commit = repo.commit("first");
  auto store = store::Store::open(repo.index_path("rev"), store::OpenMode::read_write);
  REQUIRE(store.ok());
  REQUIRE(index_revision(repo, **store, first_commit).ok());
  REQUIRE_FALSE((*store)->tree_ids().empty());

  for (int i = 0; i < 600; ++i) {
    repo.work.write("f" + std::to_string(i % 3) + "/m" + std::to_string(i) + ".py",
                    "def g" + std::to_string(i) + "():\n    return " + std::to_string(i) + "\n");
  }
  const std::string second_commit = repo.commit("second");
  std::atomic<int> windows{0};  // cancelled() is polled from the parser threads too
  index::IndexCallbacks callbacks;
  callbacks.progress = [&](const index::IndexProgress&) { ++windows; };
  callbacks.cancelled = [&] { return windows >= 1; };  // after the first window
  auto interrupted = index_revision(repo, **store, second_commit, callbacks);
  REQUIRE_FALSE(interrupted.ok());
  CHECK(interrupted.error().message == "interrupted");
  CHECK((*store)->tree_ids().empty());

  // The next run lists everything and finishes the job; so does going back.
  auto finished = index_revision(repo, **store, second_commit);
  REQUIRE(finished.ok());
  require_clean_equal(repo, **store, second_commit, *finished);
  auto previous = index_revision(repo, **store, first_commit);
  REQUIRE(previous.ok());
  require_clean_equal(repo, **store, first_commit, *previous);
}
