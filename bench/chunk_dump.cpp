// bench/chunk_dump ROOT [THREADS]: the chunks of every file `kasava index` would chunk, one
// line each (path, lines, kind, symbol, parent, signature, doc and an FNV-1a digest of the
// text), sorted by path, on stdout; on stderr the files, chunks and seconds of chunking alone
// (files read before the clock starts). For checking that a change of the chunker leaves its
// output as it was (diff two dumps) and what it costs (the seconds, or callgrind).
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

#include "core/index/indexer.hpp"
#include "core/parse/chunker.hpp"
#include "core/repo/source.hpp"
#include "core/util/hash.hpp"

namespace {

struct File {
  std::string path;
  std::string language;
  std::string content;
  std::vector<kasava::types::Chunk> chunks;
};

// Keeps a dump one line per chunk.
std::string one_line(std::string text) {
  std::replace(text.begin(), text.end(), '\n', ' ');
  std::replace(text.begin(), text.end(), '\t', ' ');
  return text;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace kasava;
  if (argc < 2) {
    std::fprintf(stderr, "usage: chunk_dump ROOT [THREADS]\n");
    return 2;
  }
  const unsigned threads =
      std::max(1u, argc > 2 ? static_cast<unsigned>(std::stoul(argv[2]))
                            : std::thread::hardware_concurrency());
  auto source = repo::open_source(argv[1], {});
  if (!source) {
    std::fprintf(stderr, "chunk_dump: %s\n", source.error().message.c_str());
    return 2;
  }
  auto listed = (*source)->list();
  if (!listed) {
    std::fprintf(stderr, "chunk_dump: %s\n", listed.error().message.c_str());
    return 2;
  }
  const index::IndexOptions defaults;
  std::vector<File> files;
  for (repo::SourceEntry& entry : *listed) {
    if (entry.kind == repo::EntryKind::submodule || entry.size > defaults.max_file_size) continue;
    auto content = (*source)->read(entry);
    if (!content || !index::skip_reason_for_content(entry.path, *content).empty()) continue;
    files.push_back({entry.path, parse::detect_language(entry.path), std::move(*content), {}});
  }

  std::atomic<std::size_t> next{0};
  auto run = [&] {
    parse::Chunker chunker;
    for (std::size_t i = next++; i < files.size(); i = next++) {
      files[i].chunks = chunker.chunk(files[i].path, files[i].language, files[i].content);
    }
  };
  const auto start = std::chrono::steady_clock::now();
  std::vector<std::thread> pool;
  for (unsigned t = 1; t < threads; ++t) pool.emplace_back(run);
  run();
  for (auto& thread : pool) thread.join();
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

  std::sort(files.begin(), files.end(),
            [](const File& a, const File& b) { return a.path < b.path; });
  std::size_t chunks = 0;
  for (const File& file : files) {
    for (const types::Chunk& chunk : file.chunks) {
      std::printf("%s\t%d-%d\t%s\t%s\t%s\t%s\t%s\t%016llx\n", file.path.c_str(), chunk.start_line,
                  chunk.end_line, chunk.kind.c_str(), one_line(chunk.symbol).c_str(),
                  one_line(chunk.parent).c_str(), one_line(chunk.signature).c_str(),
                  one_line(chunk.doc).c_str(),
                  static_cast<unsigned long long>(util::fnv1a64(chunk.text)));
      ++chunks;
    }
  }
  std::fprintf(stderr, "{\"files\": %zu, \"chunks\": %zu, \"threads\": %u, \"seconds\": %.4f}\n",
               files.size(), chunks, threads, seconds);
  return 0;
}
