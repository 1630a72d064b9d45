// bench/chunk_dump ROOT [THREADS]: the chunks of every file `kasava index` would chunk, one
// line each (path, lines, kind, symbol, parent, signature, doc and an FNV-1a digest of the
// text), sorted by path, on stdout; on stderr the files, chunks and seconds of chunking alone
// (files read before the clock starts). For checking that a change of the chunker leaves its
// output as it was (diff two dumps) and what it costs (the seconds, or callgrind).
#include <algorithm>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

#include "bench/indexable_files.hpp"
#include "core/parse/chunker.hpp"
#include "core/util/hash.hpp"

namespace {

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
  const std::vector<bench::IndexableFile> files = bench::read_indexable_files("chunk_dump", argv[1]);
  std::vector<std::vector<types::Chunk>> chunks(files.size());

  const double seconds =
      bench::on_threads(files.size(), threads, [&](parse::Chunker& chunker, std::size_t i) {
        chunks[i] = chunker.chunk(files[i].path, files[i].language, files[i].content);
      });

  std::vector<std::size_t> order(files.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(),
            [&](std::size_t a, std::size_t b) { return files[a].path < files[b].path; });
  std::size_t count = 0;
  for (const std::size_t i : order) {
    for (const types::Chunk& chunk : chunks[i]) {
      std::printf("%s\t%d-%d\t%s\t%s\t%s\t%s\t%s\t%016llx\n", files[i].path.c_str(),
                  chunk.start_line, chunk.end_line, chunk.kind.c_str(),
                  one_line(chunk.symbol).c_str(), one_line(chunk.parent).c_str(),
                  one_line(chunk.signature).c_str(), one_line(chunk.doc).c_str(),
                  static_cast<unsigned long long>(util::fnv1a64(chunk.text)));
      ++count;
    }
  }
  std::fprintf(stderr, "{\"files\": %zu, \"chunks\": %zu, \"threads\": %u, \"seconds\": %.4f}\n",
               files.size(), count, threads, seconds);
  return 0;
}
