// The one place commands are set up: see setup.hpp.
#include "commands/setup.hpp"

#include <cctype>
#include <filesystem>
#include <system_error>

#include "commands/open_index.hpp"
#include "commands/refresh.hpp"
#include "core/index/locate.hpp"
#include "core/repo/source.hpp"
#include "core/util/files.hpp"

namespace kasava::commands {

namespace fs = std::filesystem;

namespace {

void require_index(const QueryTarget& target) {
  if (!fs::exists(target.index_path)) {
    throw util::Failure("no index at '" + target.index_path + "': run `kasava index` first");
  }
}

// -C: changes the process's folder, once, before anything reads a path. A URL's clone must
// hold an index (or --index names one) unless the command makes it (`kasava index`).
void enter_place(GlobalOptions& global, Needs needs) {
  if (global.directory.empty()) return;
  const Place place = place_of(global.directory, util::cache_directory());
  if (!place.url.empty()) {
    global.url = place.url;
    if (needs == Needs::writable_index) return;  // `kasava -C URL index` clones or fetches it
    const std::string shown = repo::redact_url(place.url);
    const std::string index = index::default_index_path(place.directory);
    if (!fs::is_directory(place.directory) || (global.index_path.empty() && !fs::exists(index))) {
      throw util::Failure("-C '" + shown + "': not indexed yet (no index at '" + index +
                          "'): run `kasava index " + shown + "` first");
    }
  }
  std::error_code error;
  fs::current_path(place.directory, error);
  if (error) {
    std::string why = error.message();
    if (!why.empty()) why[0] = static_cast<char>(std::tolower(static_cast<unsigned char>(why[0])));
    throw util::Failure("-C '" + global.directory + "': " + why);
  }
}

// Needs::writable_index: see setup.hpp.
void prepare_writable(Context& context, const SetupHooks& hooks, Prepared& prepared) {
  const WriteRequest& request = hooks.write;
  IndexTarget found = resolve_index_target(context, request.target, request.revision);
  prepared.source = std::move(found.source);
  prepared.cloned_into = std::move(found.cloned_into);
  prepared.target.index_path = std::move(found.index_path);
  prepared.target.root = prepared.target.repository = prepared.source->root();
  const std::string& path = prepared.target.index_path;
  const std::string& root = *prepared.target.root;
  if (hooks.before_write) hooks.before_write(context);
  if (request.dry_run) return;
  // One writer at a time: a second `kasava index` on the same index waits for the first
  // (SQLite alone would interleave the two runs' batches and fail one with "database is
  // locked" after its busy timeout).
  prepared.lock = std::make_unique<IndexLock>(path, LockWait::wait, [&] {
    context.output.warning("another `kasava index` is writing '" + path +
                           "'; waiting for it to finish");
  });
  discard_unfinished_rebuild(path);
  // An index that exists was excluded from git when it was made: reading .git/info/exclude
  // again (a second repository open) would only cost time, on every no-change run.
  const bool existed = fs::exists(path);
  // A rebuild writes beside the index, which stays searchable until the new one is complete.
  prepared.store = open_index_for_writing(context, path, root, ModelChange::rebuild,
                                          request.rebuild ? Existing::rebuild : Existing::update);
  if (!existed) index::exclude_from_git(root);
}

} // namespace

Place place_of(const std::string& value, const std::string& cache_dir) {
  if (repo::is_url(value)) return Place{repo::clone_path_for(value, cache_dir), value};
  return Place{value, ""};
}

Prepared prepare(Context& context, Needs needs, const SetupHooks& hooks) {
  Prepared prepared;
  if (needs == Needs::index_per_call) return prepared;
  if (needs == Needs::writable_index) {
    prepare_writable(context, hooks, prepared);
    return prepared;
  }
  std::unique_ptr<store::Store> opened;  // the index as resolve_query_target opened it
  prepared.target = resolve_query_target(context, &opened);
  switch (needs) {
    case Needs::writable_index:
    case Needs::index_per_call:
    case Needs::located_index:
      break;
    case Needs::index:
      require_index(prepared.target);
      break;
    case Needs::readable_index:
      require_index(prepared.target);
      prepared.store = opened ? std::move(opened)
                              : open_store(prepared.target.index_path, store::OpenMode::read_only);
      break;
    case Needs::fresh_index:
      if (hooks.before_refresh) hooks.before_refresh(context, prepared);
      if (hooks.refresh) {
        refresh_index(context, prepared.target);
      } else {
        require_index(prepared.target);
        prepared.store = std::move(opened);  // nothing changes it before the command reads it
      }
      break;
  }
  return prepared;
}

ExitStatus run_command(GlobalOptions global, Needs needs, const SetupHooks& hooks,
                       const std::function<ExitStatus(Context&, Prepared&)>& run) {
  needs = hooks.needs.value_or(needs);
  enter_place(global, needs);
  Context context(std::move(global));
  Prepared prepared = prepare(context, needs, hooks);
  const ExitStatus status = run(context, prepared);
  context.output.flush();  // a closed stdout ends the command quietly: its status stands
  return status;
}

} // namespace kasava::commands
