// What the bench programs share: the files `kasava index` would read under a root (same Source
// listing, size limit and skip rules as the indexer), read into memory, each with the language
// it is chunked as; and running work over them on all threads, one Chunker each.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "core/index/indexer.hpp"
#include "core/parse/chunker.hpp"
#include "core/repo/source.hpp"
#include "core/util/parallel.hpp"

namespace kasava::bench {

struct IndexableFile {
  std::string path;
  std::string language;
  std::string content;
};

/// The files under `root`, in listing order. Prints "`program`: error" and exits with 2 when
/// the root cannot be listed.
inline std::vector<IndexableFile> read_indexable_files(const char* program, const char* root) {
  auto source = repo::open_source(root, {});
  if (!source) {
    std::fprintf(stderr, "%s: %s\n", program, source.error().message.c_str());
    std::exit(2);
  }
  auto listed = (*source)->list();
  if (!listed) {
    std::fprintf(stderr, "%s: %s\n", program, listed.error().message.c_str());
    std::exit(2);
  }
  const index::IndexOptions defaults;
  std::vector<IndexableFile> files;
  for (repo::SourceEntry& entry : *listed) {
    if (entry.kind == repo::EntryKind::submodule || entry.size > defaults.max_file_size) continue;
    auto content = (*source)->read(entry);
    if (!content || !index::skip_reason_for_content(entry.path, *content).empty()) continue;
    files.push_back({entry.path, parse::detect_language(entry.path), std::move(*content)});
  }
  return files;
}

/// Calls work(chunker, i) for every i < count on `threads` threads (the caller's included),
/// each with its own Chunker (one parser per thread, as in the indexer), taking the next index
/// as it finishes one. Returns the wall seconds it took.
template <typename Work>
double on_threads(std::size_t count, unsigned threads, Work work) {
  std::atomic<std::size_t> next{0};
  const auto start = std::chrono::steady_clock::now();
  util::run_threads(threads, [&](unsigned) {
    parse::Chunker chunker;
    for (std::size_t i = next++; i < count; i = next++) work(chunker, i);
  });
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace kasava::bench
