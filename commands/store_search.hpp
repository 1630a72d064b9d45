// Searching the shared PostgreSQL store, for every command that does (`ask --store`,
// `mcp --store`): which refs a search covers — repositories chosen by globs, one ref of each —
// and the search itself over them, ranked by the one ranking of core/search.
#pragma once

#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "commands/context.hpp"
#include "core/pgstore/search.hpp"
#include "core/search/pg_source.hpp"
#include "core/search/search.hpp"
#include "core/util/json_value.hpp"

namespace kasava::commands {

/// The shared store a command uses: `option` (its --store), else KASAVA_STORE; "" = none. A
/// user's config `store` is for publishing only, so a plain `ask` or `mcp` stays local.
std::string chosen_store(const std::string& option);

/// What a long-running process (`serve --store`, `mcp --store`) keeps of the store between
/// searches: open connections.
struct StoreAccess {
  StoreAccess(const std::string& conninfo, std::size_t connections_kept)
      : readers(conninfo, connections_kept) {}
  pgstore::ReaderPool readers;
};

/// Whether a caller may see the repository with this name (a token's globs); null: all.
using Visible = std::function<bool(const std::string& repository)>;

/// The refs a search covers: of each repository one of `globs` matches (every repository
/// when empty) and `visible` lets through, the ref named `ref`, else its latest publish. All
/// of one model. Throws util::Failure naming what was asked when nothing matches, or when the
/// refs' models differ; `glob_option` and `ref_option` name where the globs and the ref came
/// from in that message ("--repo", "--ref" for ask).
std::vector<pgstore::RefInfo> choose_refs(pgstore::Reader& reader, const std::vector<std::string>& globs,
                                          const std::string& ref, const std::string& glob_option,
                                          const std::string& ref_option, const Visible& visible = nullptr);

/// The ref whose file a read reads: of the repository named `repository` (which may be ""
/// when only one is visible), the ref named `ref`, else its latest publish. Throws
/// util::Failure saying what is missing (a repository that is not visible is not there).
pgstore::RefInfo choose_file_ref(pgstore::Reader& reader, const std::string& repository, const std::string& ref,
                                 const Visible& visible = nullptr);

/// The store's published refs that `visible` lets through, as `index_status` and
/// /api/status give them: {"store", "repositories", "refs": [{repository, ref, model,
/// published_at}]}.
util::JsonValue store_status_document(pgstore::Reader& reader, const Visible& visible = nullptr);

/// The search of `options` over `refs` of the store `reader` reads; with `another`, the
/// Hamming scan runs on another reader while `reader` runs the lexical side.
std::vector<search::SearchHit> search_store(Context& context, pgstore::Reader& reader,
                                            std::vector<pgstore::RefInfo> refs,
                                            const search::SearchOptions& options,
                                            search::StoreSource::OpenReader another = {});

/// Loads the shared store's client library on a thread of its own when this command line
/// names a store (`--store`, `--store=…` or KASAVA_STORE; a store set in a config file is
/// not seen this early): it then loads while the command line is parsed and the command set
/// up. Joined when the returned thread goes (none when nothing was started).
std::jthread load_store_library_early(int argc, char** argv);

/// Another reader of `conninfo` for search_store, nullptr when it cannot connect (or was
/// taken already). Its connection opens at once, in the background: beside the search's own,
/// it is ready when the search starts its statements on it (a connection is ~2.5 ms, a
/// search of one repository ~30).
search::StoreSource::OpenReader another_reader(const std::string& conninfo);
/// A reader of `pool` for search_store, nullptr when none can be had; back in the pool when
/// released. Without `may_connect`, only an idle one: a server under load then opens no
/// second connection per search (PostgreSQL's max_connections is 100 by default).
search::StoreSource::OpenReader pooled_reader(pgstore::ReaderPool& pool, bool may_connect);

} // namespace kasava::commands
