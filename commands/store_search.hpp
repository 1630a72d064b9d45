// Searching the shared PostgreSQL store, for every command that does (`ask --store`,
// `mcp --store`): which refs a search covers — repositories chosen by globs, one ref of each —
// and the search itself over them, ranked by the one ranking of core/search.
#pragma once

#include <string>
#include <vector>

#include "commands/context.hpp"
#include "core/pgstore/search.hpp"
#include "core/search/search.hpp"

namespace kasava::commands {

/// The shared store a command uses: `option` (its --store), else KASAVA_STORE; "" = none. A
/// user's config `store` is for publishing only, so a plain `ask` or `mcp` stays local.
std::string chosen_store(const std::string& option);

/// The refs a search covers: of each repository one of `globs` matches (every repository
/// when empty), the ref named `ref`, else its latest publish. All of one model. Throws
/// util::Failure naming what was asked when nothing matches, or when the refs' models differ;
/// `glob_option` and `ref_option` name where the globs and the ref came from in that message
/// ("--repo", "--ref" for ask).
std::vector<pgstore::RefInfo> choose_refs(pgstore::Reader& reader, const std::vector<std::string>& globs,
                                          const std::string& ref, const std::string& glob_option,
                                          const std::string& ref_option);

/// The search of `options` over `refs` of the store `reader` reads.
std::vector<search::SearchHit> search_store(Context& context, pgstore::Reader& reader,
                                            std::vector<pgstore::RefInfo> refs,
                                            const search::SearchOptions& options);

} // namespace kasava::commands
