// The parse limit: how fast tree-sitter alone parses the files `kasava index` would parse,
// on all cores, doing nothing else (no query, no chunks, no store). The indexer can at best
// approach this throughput; bench/run.py compares the two.
//
// usage: parse_limit ROOT [THREADS]   prints one JSON object on stdout
// Files are listed by the same Source as `kasava index` (git status / tree / directory walk),
// with the same skip rules (1 MiB limit, binary, minified, generated), and read into memory
// before the clock starts, so the figure is the parse alone.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

#include "bench/indexable_files.hpp"
#include "core/parse/chunker.hpp"

int main(int argc, char** argv) {
  using namespace kasava;
  if (argc < 2) {
    std::fprintf(stderr, "usage: parse_limit ROOT [THREADS]\n");
    return 2;
  }
  unsigned threads = argc > 2 ? static_cast<unsigned>(std::stoul(argv[2]))
                              : std::thread::hardware_concurrency();
  threads = std::max(1u, threads);
  const auto read_start = std::chrono::steady_clock::now();
  std::vector<bench::IndexableFile> files = bench::read_indexable_files("parse_limit", argv[1]);
  std::erase_if(files, [](const bench::IndexableFile& file) { return !parse::has_grammar(file.language); });
  std::size_t bytes = 0;
  for (const auto& file : files) bytes += file.content.size();
  const double read_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - read_start).count();

  // Largest first, so one big file does not finish last on one core.
  std::sort(files.begin(), files.end(),
            [](const bench::IndexableFile& a, const bench::IndexableFile& b) {
              return a.content.size() > b.content.size();
            });
  std::atomic<std::size_t> parsed{0};
  const double parse_seconds =
      bench::on_threads(files.size(), threads, [&](parse::Chunker& chunker, std::size_t i) {
        if (chunker.parse_only(files[i].language, files[i].content)) ++parsed;
      });

  std::printf("{\"files\": %zu, \"parsed\": %zu, \"bytes\": %zu, \"threads\": %u, "
              "\"read_seconds\": %.4f, \"parse_seconds\": %.4f}\n",
              files.size(), parsed.load(), bytes, threads, read_seconds, parse_seconds);
  return 0;
}
