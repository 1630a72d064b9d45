// The refresh before a query: brings an index up to date with its repository, under the
// index lock, without waiting for another writer when there is something to search already.
#pragma once

#include "commands/context.hpp"
#include "commands/target.hpp"

namespace kasava::commands {

/// Brings the index at target.index_path up to date with target.root (creating it when
/// missing), showing progress on a terminal. Returns false, after a warning, when the index
/// cannot be written (e.g. a read-only CI artifact) but can still be read.
bool refresh_index(Context& context, const QueryTarget& target);

} // namespace kasava::commands
