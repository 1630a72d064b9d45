// Keeping the shared PostgreSQL store: removing a published repository or ref together with
// the blobs no snapshot references any more (`kasava unpublish`), and checking and repairing
// the store's references, vectors and statistics (`kasava verify --store`). Both collect
// unreferenced blobs under k_collect_lock held exclusively (store.hpp): a publisher holds it
// shared from its presence check to its swap, so no blob it counted on disappears meanwhile.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/pgstore/store.hpp"
#include "core/util/result.hpp"

namespace kasava::pgstore {

/// What a removal took out of the store.
struct Removal {
  std::string repository;
  std::vector<std::string> refs;  ///< the refs removed, by name
  bool repository_removed = false;  ///< no ref of it was left, so its row went too
  std::int64_t blobs = 0;   ///< (blob, model) rows no snapshot referenced any more
  std::int64_t chunks = 0;  ///< their chunks
  std::int64_t texts = 0;   ///< blob texts no model's blob nor snapshot needed any more
};

/// Removes `ref` of `repository` (every ref and the repository when `ref` is nullopt) and, in
/// the same transaction, the blobs of those snapshots that no other snapshot references for
/// its model: their chunks and texts, their terms and tokens subtracted from term_stats and
/// model_stats. An error (not a throw) when the repository or the ref is not in the store;
/// throws util::Failure when the server fails.
util::Result<Removal> remove_published(Store& store, const std::string& repository,
                                       const std::optional<std::string>& ref);

/// A ref whose snapshot names blobs the store lacks for the ref's model.
struct MissingBlobs {
  std::string repository;
  std::string ref;
  std::int64_t blobs = 0;
};

/// What check_store found. Orphans are not damage (a killed publish leaves some), only waste.
struct StoreCheck {
  std::string where;
  std::int64_t refs = 0;
  std::int64_t blobs = 0;
  std::int64_t chunks = 0;
  std::vector<MissingBlobs> missing;   ///< snapshot files whose blob is not stored
  std::int64_t damaged_blobs = 0;   ///< chunk rows not as many as the blob row says, ordinals
                                    ///< not 0..n-1, a code or vector of the wrong length for
                                    ///< the model, or no text
  std::int64_t stray_chunks = 0;    ///< chunk rows without their blob row
  std::int64_t term_stats_wrong = 0;   ///< (model, term) counts that differ from the chunks'
  std::int64_t model_stats_wrong = 0;  ///< models whose chunk or token totals differ
  std::int64_t history_stats_wrong = 0;  ///< refs whose history totals differ from their
                                         ///< file histories
  std::int64_t codes_astray = 0;    ///< codes in a partition their model does not have, which
                                    ///< a search of the nearest partitions never reads
  std::int64_t orphan_blobs = 0;    ///< (blob, model) rows no snapshot of that model references
  std::int64_t orphan_texts = 0;    ///< texts without a blob row or a snapshot file naming them
  bool sound() const {
    return missing.empty() && damaged_blobs == 0 && stray_chunks == 0 && term_stats_wrong == 0 &&
           model_stats_wrong == 0 && history_stats_wrong == 0 && codes_astray == 0;
  }
};

/// Checks the store (read-only; one snapshot of it, in a repeatable-read transaction).
StoreCheck check_store(Store& store);

/// What repair_store did.
struct StoreRepair {
  std::int64_t blobs_removed = 0;   ///< damaged and orphaned (blob, model) rows
  std::int64_t chunks_removed = 0;  ///< their chunks and stray chunks
  std::int64_t texts_removed = 0;
  std::int64_t codes_placed = 0;    ///< codes astray set to -1 (read by every search)
  bool statistics_recomputed = false;
};

/// In one transaction under k_collect_lock: deletes damaged blobs (their refs then lack them,
/// and the next publish of those refs sends them again), stray chunks, orphaned blobs and
/// texts, recomputes term_stats and model_stats from the chunks when they differ or anything
/// was deleted, and the refs' history totals from their histories when they differ; codes
/// astray are set to partition -1, which every search reads, until training places them. Refs are
/// never dropped: a ref missing blobs needs a publish.
StoreRepair repair_store(Store& store);

} // namespace kasava::pgstore
