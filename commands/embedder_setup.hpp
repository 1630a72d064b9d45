// The embedding model: made from the model setting (builtin, a .kmodel file, or a remote
// service), and chosen for a query on a given index (a foreign index's remote model is never
// sent a query).
#pragma once

#include <memory>
#include <string_view>
#include <vector>

#include "commands/context.hpp"
#include "commands/settings.hpp"
#include "core/embed/embedder.hpp"
#include "core/search/search.hpp"
#include "core/store/store.hpp"

namespace kasava::commands {

/// "voyage:…" or "openai:…" (with or without an "@dimensions" suffix): a model served remotely.
bool names_remote_model(std::string_view value);

/// The embedder the model setting names (see Context::embedder()); a bad setting throws
/// util::Failure naming it and where it came from.
std::unique_ptr<embed::Embedder> make_embedder(const Settings& settings);

/// The embedder a query on `store` in `mode` needs: null for a lexical query or an index
/// without vectors (nothing is loaded then), else context.embedder(). An index whose remote
/// model was not adopted (Context::unadopted_index_model) and is not the model chosen gets
/// null after a warning (hybrid: the words still answer) or an error (semantic): kasava does
/// not send a query to a service because a file it did not make names it.
embed::Embedder* embedder_for_query(Context& context, const store::Store& store, search::Mode mode);

/// Runs a search on `store` with the embedder the mode needs (embedder_for_query). When a
/// hybrid search fails because a remote model's service does not answer, the words still
/// do: it warns and returns the lexical results.
util::Result<std::vector<search::SearchHit>> run_search(Context& context, const store::Store& store,
                                                        search::SearchOptions options);

} // namespace kasava::commands
