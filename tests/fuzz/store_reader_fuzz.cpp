// Fuzzes reading an index file that may be damaged or hostile (an index is shared as a CI
// artifact, downloaded, committed by mistake): the bytes are written to a file, opened
// read-only and read the ways `ask`, `status` and `verify` read it — meta values, a lexical
// search (plain, and bounded with the kept term counts), the Hamming scan, vectors, chunk
// records with their packed text, the statistics and the full check. Any of these may fail with an error; none may crash, read out of
// range or hang. The committed corpus holds small real indexes, so mutations reach every table.
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <exception>
#include <string>
#include <vector>

#include "core/search/search.hpp"
#include "core/store/store.hpp"

namespace {

// One file per process, rewritten for every input (SQLite opens files by path).
const std::string& scratch_path() {
  static const std::string path = "/tmp/kasava-store-fuzz-" + std::to_string(::getpid()) + ".db";
  return path;
}

void remove_scratch() {
  for (const char* suffix : {"", "-wal", "-shm", "-journal"}) {
    std::remove((scratch_path() + suffix).c_str());
  }
}

void read_everything(const std::string& path) {
  using namespace kasava;
  (void)store::Store::schema_version(path);
  (void)store::Store::peek_meta(path, "root");
  auto opened = store::Store::open(path, store::OpenMode::read_only);
  if (!opened) return;
  const store::Store& index = **opened;
  for (const char* key : {"root", "revision", "embedding_model", "max_file_size", "listing_counts"}) {
    (void)index.meta(key);
  }
  (void)index.stats();
  (void)index.counts();
  (void)index.skipped_files();
  (void)index.file_states();

  // The bounded search of a large index, and the kept term counts it reads (term_docs).
  (*opened)->set_bounded_search(0);
  (void)index.lexical_search("\"open\" OR \"file\" OR \"pars\" OR \"config\"", store::FieldWeights{}, 5);
  (*opened)->set_bounded_search(200'000);

  search::SearchOptions options;
  options.query = "open file parse config";
  options.mode = search::Mode::lexical;
  options.limit = 20;
  if (auto hits = search::search(index, options, nullptr)) {
    for (const auto& hit : *hits) (void)hit.record.chunk.text.size();
  }

  std::vector<std::int64_t> ids;
  const std::int64_t last = index.last_chunk_id();
  for (std::int64_t id = 1; id <= last && id <= 64; ++id) ids.push_back(id);
  (void)index.chunks_by_id(ids);
  for (int dims : {64, 256}) {
    const std::vector<std::uint8_t> code(static_cast<std::size_t>(dims / 8), 0x5a);
    (void)index.nearest_codes(code, 50);
    (void)index.nearest_codes(code, 50, {}, store::CodeScan::nearest_partitions);
    (void)index.vectors_by_id(ids, dims);
  }
  (void)index.pending_chunks(0, 16);
  (void)store::check_index(path);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  remove_scratch();
  if (std::FILE* file = std::fopen(scratch_path().c_str(), "wb")) {
    const bool written = std::fwrite(data, 1, size, file) == size;
    std::fclose(file);
    if (written) {
      try {
        read_everything(scratch_path());
      } catch (const std::exception&) {
        // An error is an acceptable answer to a damaged file; a crash is not.
      }
    }
  }
  remove_scratch();
  return 0;
}
