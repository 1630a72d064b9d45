// Unit tests for core/index: skip rules, index location, and an incremental run on a
// plain directory.
#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <unistd.h>

#include "core/index/indexer.hpp"
#include "core/index/locate.hpp"
#include "support.hpp"

using namespace kasava;
namespace fs = std::filesystem;

namespace {

// A temporary folder with a write() for files relative to it.
struct Folder : test::TempDir {
  fs::path root() const { return path(); }
  void write(const std::string& relative, const std::string& content) const {
    test::write(file(relative), content);
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
  auto store = store::Store::open((dir.root() / ".kasava" / "index.db").string(),
                                  store::OpenMode::read_write);
  REQUIRE(store.ok());
  auto source = repo::open_source(dir.root().string(), {});
  REQUIRE(source.ok());

  auto first = index::run_index(**source, **store, {}, {});
  REQUIRE(first.ok());
  CHECK(first->files == 3);
  CHECK(first->parsed == 2);
  CHECK(first->indexed == 2);
  CHECK(first->skipped.at("binary") == 1);
  CHECK(first->chunks >= 2);

  auto second = index::run_index(**source, **store, {}, {});
  REQUIRE(second.ok());
  CHECK(second->parsed == 0);
  CHECK(second->unchanged == 2);
  CHECK(second->skipped.at("binary") == 1);

  fs::remove(dir.root() / "src" / "util.go");
  dir.write("src/auth.py", "def logout(user):\n    return None\n");
  auto third = index::run_index(**source, **store, {}, {});
  REQUIRE(third.ok());
  CHECK(third->parsed == 1);
  CHECK(third->removed == 1);
  CHECK(third->indexed == 1);
  const auto states = (*store)->file_states();
  CHECK(states.count("src/util.go") == 0);
  CHECK(states.count("src/auth.py") == 1);
}

TEST_CASE("index::run_index writes nothing when nothing changed") {
  Folder dir;
  dir.write("a.py", "def a():\n    return 1\n");
  dir.write("b.go", "package b\n\nfunc B() {}\n");
  auto store = store::Store::open((dir.root() / ".kasava" / "index.db").string(),
                                  store::OpenMode::read_write);
  REQUIRE(store.ok());
  auto source = repo::open_source(dir.root().string(), {});
  REQUIRE(source.ok());
  auto first = index::run_index(**source, **store, {}, {});
  REQUIRE(first.ok());

  // A no-change refresh (the one before every `ask`) must stay a read: not even a timestamp.
  (*store)->set_meta("indexed_at", "sentinel");
  auto second = index::run_index(**source, **store, {}, {});
  REQUIRE(second.ok());
  CHECK((*store)->meta("indexed_at") == "sentinel");
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
  int progress_calls = 0;
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

// A Source that counts the files it reads, around a real one.
class CountingSource final : public repo::Source {
public:
  explicit CountingSource(repo::Source& inner) : m_inner(inner) {}
  const std::string& root() const override { return m_inner.root(); }
  bool is_git() const override { return m_inner.is_git(); }
  std::string commit_id() const override { return m_inner.commit_id(); }
  util::Result<std::vector<repo::SourceEntry>> list() override { return m_inner.list(); }
  util::Result<std::string> read(repo::SourceEntry& entry) override {
    ++reads;
    return m_inner.read(entry);
  }
  std::atomic<int> reads{0};

private:
  repo::Source& m_inner;
};

void set_old_mtime(const fs::path& file, std::chrono::hours age) {
  fs::last_write_time(file, fs::file_time_type::clock::now() - age);
}

} // namespace

TEST_CASE("index::run_index does not read unchanged files of a plain directory (stat cache)") {
  Folder dir;
  dir.write("a.py", "def a():\n    return 1\n");
  dir.write("b.go", "package b\n\nfunc B() {}\n");
  dir.write("new.py", "def fresh():\n    return 0\n");
  // Files modified just now are racy: their stat data is not trusted until they are older.
  set_old_mtime(dir.file("a.py"), std::chrono::hours(2));
  set_old_mtime(dir.file("b.go"), std::chrono::hours(2));
  auto store = store::Store::open((dir.root() / ".kasava" / "index.db").string(),
                                  store::OpenMode::read_write);
  REQUIRE(store.ok());
  auto inner = repo::open_source(dir.root().string(), {});
  REQUIRE(inner.ok());
  CountingSource source(**inner);

  auto first = index::run_index(source, **store, {}, {});
  REQUIRE(first.ok());
  CHECK(source.reads == 3);

  source.reads = 0;
  auto second = index::run_index(source, **store, {}, {});
  REQUIRE(second.ok());
  CHECK(source.reads == 1);  // only the racy new.py
  CHECK(second->unchanged == 3);
  CHECK(second->parsed == 0);

  // An edit changes the stat data (here the size), even with the old mtime put back.
  dir.write("a.py", "def a_changed():\n    return 2\n");
  set_old_mtime(dir.file("a.py"), std::chrono::hours(2));
  source.reads = 0;
  auto third = index::run_index(source, **store, {}, {});
  REQUIRE(third.ok());
  CHECK(third->parsed == 1);
  CHECK(source.reads == 2);  // a.py and the still racy new.py
  const auto states = (*store)->file_states();
  CHECK(states.at("a.py").mtime_ns != 0);
  CHECK(states.at("new.py").mtime_ns == 0);
}
