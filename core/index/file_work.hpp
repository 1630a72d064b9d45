// One file of an index run on the worker threads (internal to core/index): the work item,
// reading it (which hashes a changed file), the skip rules, chunking, embedding with a local
// model and packing the text for the store; and a window of such items on all threads.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/embed/embedder.hpp"
#include "core/parse/chunker.hpp"
#include "core/repo/source.hpp"
#include "core/store/store.hpp"
#include "core/store/text_packs.hpp"
#include "core/store/vectors.hpp"
#include "core/types/chunk.hpp"

namespace kasava::index {

// One file that needs reading, a skip decision or chunking.
struct Work {
  repo::SourceEntry* entry = nullptr;
  const store::FileState* known = nullptr;  // what the index has for this path, if anything
  bool size_decision_changed = false;
  bool read = false;  // content must be read (and, for changed files, hashed)
  std::string language;
  std::string skip_reason;
  std::string read_error;  // set when reading failed
  // The failure is a lasting fact of the listing (repo::k_symlink_to_directory), not one to
  // try again: it does not keep the listing digest from being stored.
  bool read_error_lasting = false;
  bool unchanged = false;  // read, but the content was already indexed (touched file)
  std::uint64_t content_size = 0;
  std::vector<types::Chunk> chunks;
  std::vector<store::QuantizedVector> vectors;  // one per chunk when the run embeds
  store::PackedTexts texts;                     // the chunks' strings compressed for the store
};

// Whether the run writes to the index: a dry run does not, so it compresses nothing.
enum class Writing { yes, dry_run };

// Processes every item of a window on all chunkers' threads (the caller's included), largest
// files first, so that the window does not end waiting on one large file while the other
// threads have nothing left to do. Files of k_large_file_bytes and more, at the front then, go
// to the calling thread only, while the helpers start on the rest. The first exception of any
// thread is rethrown here, after all threads have stopped. False when `cancelled` said stop
// midway: some files were not processed, so the window must not be stored.
bool process_in_parallel(std::vector<Work>& work, repo::Source& source,
                         std::vector<std::unique_ptr<parse::Chunker>>& chunkers,
                         embed::Embedder* embedder, Writing writing,
                         const std::function<bool()>& cancelled);

}  // namespace kasava::index
