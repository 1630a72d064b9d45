// Embedding with a remote model during an index run (internal to core/index): a window's
// chunks at once, through the vector cache, and the chunks earlier runs left pending.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/index/file_work.hpp"
#include "core/index/indexer.hpp"
#include "core/store/store.hpp"

namespace kasava::index {

// The remote half of a window: every chunk of the window's parsed files in one call.
void embed_window_remotely(std::vector<Work>& work, const IndexOptions& options,
                           IndexSummary::Embedding& tally);

// Embeds the chunks left pending by earlier runs (ids up to `last_id`), a transaction per
// batch. False when cancelled (what was committed stays).
bool embed_pending(store::Store& store, const IndexOptions& options, std::int64_t last_id,
                   IndexSummary::Embedding& tally, const IndexCallbacks& callbacks,
                   std::size_t& stored);

}  // namespace kasava::index
