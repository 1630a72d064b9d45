// `kasava unpublish --store URL REPOSITORY [--ref REF]`: a repository (every ref) or one ref
// removed from the shared store, with the blobs no snapshot references any more
// (pgstore::remove_published). One line says what went; a repository or ref that is not in
// the store is one error line and exit 1, like a search that finds nothing.
#include <cstdio>

#include "commands/commands.hpp"
#include "core/pgstore/maintenance.hpp"
#include "core/util/strings.hpp"

namespace kasava::commands {

namespace {

std::string count(std::int64_t n, const char* word) {
  return std::to_string(n) + " " + word + (n == 1 ? "" : "s");
}

} // namespace

ExitStatus run_unpublish(const UnpublishCommandOptions& options, Context& context) {
  // As `index --store`: the flag, then KASAVA_STORE, then the user's config (never a repository's).
  const std::string conninfo = !options.store.empty() ? options.store : context.settings().store.value;
  if (conninfo.empty()) {
    throw util::Failure("unpublish: no store named: give --store URL (or set KASAVA_STORE)");
  }
  auto opened = pgstore::Store::open(conninfo);
  if (!opened) throw util::Failure(opened.error());
  const std::optional<std::string> ref =
      options.ref.empty() ? std::nullopt : std::optional<std::string>(options.ref);
  const auto removed = pgstore::remove_published(**opened, options.repository, ref);
  if (!removed) {
    context.output.flush();
    std::fprintf(stderr, "kasava: error: %s\n", util::escape_controls(removed.error().message).c_str());
    return ExitStatus::no_result;
  }
  std::string refs;
  for (const std::string& name : removed->refs) refs += (refs.empty() ? "" : ", ") + name;
  std::string line = "removed " + removed->repository + " " +
                     (removed->refs.size() == 1 ? "ref " : "refs ") + (refs.empty() ? "(none)" : refs);
  if (removed->repository_removed) line += " and the repository";
  line += " from " + (*opened)->where() + ": " + count(removed->blobs, "blob") + ", " +
          count(removed->chunks, "chunk") + " no longer referenced\n";
  context.output.out(util::escape_controls(line.substr(0, line.size() - 1)) + "\n");
  return ExitStatus::success;
}

} // namespace kasava::commands
