// Finding the index and its repository, or the repository to index: see target.hpp.
#include "commands/target.hpp"

#include <filesystem>

#include "commands/open_index.hpp"
#include "core/index/locate.hpp"
#include "core/repo/source.hpp"
#include "core/util/files.hpp"
#include "core/util/strings.hpp"

namespace kasava::commands {

namespace fs = std::filesystem;

QueryTarget resolve_query_target(Context& context, std::unique_ptr<store::Store>* opened) {
  QueryTarget target;
  const bool named = !context.global.index_path.empty();
  if (named) {
    target.index_path = util::absolute_path(context.global.index_path);
    if (!fs::exists(target.index_path)) {
      throw util::Failure("no index at '" + context.global.index_path +
                          "': run `kasava index` first");
    }
  } else if (auto found = index::find_index_upward(context.cwd)) {
    target.index_path = *found;
  } else if (auto work_tree = repo::find_work_tree(context.cwd)) {
    target.index_path = index::default_index_path(*work_tree);
    target.root = *work_tree;
    target.repository = *work_tree;
    context.use_repository(target.root);
    return target;
  } else {
    throw util::Failure("no index found in '" + context.cwd +
                        "' or its parents: run `kasava index` first");
  }
  std::optional<std::string> recorded_root;
  std::optional<std::string> revision;
  std::string index_model;
  auto store = store::Store::open(target.index_path, store::OpenMode::read_only);
  if (store) {
    recorded_root = (*store)->meta("root");
    revision = (*store)->meta("revision");
    index_model = index::index_model(**store);
  } else if (const auto version = store::Store::schema_version(target.index_path);
             version && *version < store::k_schema_version) {
    // An older kasava's index: the refresh rebuilds it, where it belongs.
    recorded_root = store::Store::peek_meta(target.index_path, "root");
    revision = store::Store::peek_meta(target.index_path, "revision");
  } else if (!store::is_damage(store.error())) {
    open_store(target.index_path, store::OpenMode::read_only);  // throws its error, with the hint
  }
  // A damaged file is not refreshed: `verify` reports it and `verify --repair` rebuilds it;
  // the other commands fail to open it, saying so.
  const bool damaged = !store && store::is_damage(store.error());

  // Which repository on disk the index belongs to: never what it records, only a folder found
  // from where it lies (or from the current folder, for a named index) that it records.
  const auto around = index::folder_of_index(target.index_path);
  if (around && (!recorded_root || index::same_folder(*recorded_root, *around))) {
    target.repository = *around;
  } else if (named && !around && recorded_root) {
    if (auto work_tree = repo::find_work_tree(context.cwd);
        work_tree && index::same_folder(*recorded_root, *work_tree)) {
      target.repository = *work_tree;
    }
  }
  if (!target.repository) {
    if (around) {
      target.no_root_reason = "index '" + target.index_path +
                              "' records another repository ('" +
                              util::escape_controls(recorded_root.value_or("")) + "') than '" +
                              *around + "', where it lies";
      context.warn_once(target.no_root_reason +
                        ": answering from the index alone, without refreshing it or reading "
                        "files (`kasava index --rebuild` there makes it that repository's)");
    } else {
      target.no_root_reason = "index '" + target.index_path +
                              "' lies outside the repository it was built from, and the current "
                              "folder is not in that repository";
    }
  } else if (damaged) {
    target.no_root_reason = "index '" + target.index_path + "' is damaged";
  } else if (!revision.value_or("").empty()) {
    // An index of a commit (--rev) is not refreshed from the working tree.
    target.no_root_reason = "index '" + target.index_path + "' is of a commit (--rev), not of "
                            "the working tree";
  } else {
    target.root = target.repository;
  }
  // The repository's config applies to an index that belongs to it.
  if (target.repository) context.use_repository(target.repository);
  context.adopt_index_model(index_model, target.repository ? IndexTrust::own : IndexTrust::foreign);
  if (opened != nullptr && store) *opened = std::move(store).value();
  return target;
}

IndexTarget resolve_index_target(Context& context, const std::string& given,
                                 const std::string& revision) {
  if (!context.global.url.empty() && !given.empty()) {
    throw util::Failure("-C '" + repo::redact_url(context.global.url) + "' and a target ('" +
                        given + "'): give one of them");
  }
  // `kasava -C URL index` is `kasava index URL`.
  const std::string& target = given.empty() ? context.global.url : given;
  std::string path = target.empty() ? context.cwd : target;
  const bool url = repo::is_url(target);
  if (url) {
    const std::string destination = repo::clone_path_for(target, util::cache_directory());
    if (context.output.shows_progress()) {
      context.output.progress("cloning " + repo::redact_url(target) + " ...");
    }
    const bool cloned_before = fs::is_directory(destination);
    auto cloned = repo::clone_or_fetch(target, destination);
    context.output.end_progress();
    if (!cloned && cloned_before) {
      // Offline or the host is down: the clone from last time is still worth indexing.
      context.output.warning(cloned.error().message + "; indexing the clone from the last fetch");
      path = destination;
    } else {
      path = std::move(cloned).value_or_throw();
    }
  }

  IndexTarget found;
  repo::OpenOptions open_options;
  if (!revision.empty()) open_options.revision = revision;
  found.source = repo::open_source(path, open_options).value_or_throw();
  const std::string root = found.source->root();
  if (url) found.cloned_into = root;
  context.use_repository(root);
  found.index_path = context.global.index_path.empty()
                         ? index::default_index_path(root)
                         : util::absolute_path(context.global.index_path);
  // An index built with a remote model keeps it unless another one is chosen (--model builtin
  // switches back), if it is this repository's own.
  context.adopt_index_model(found.index_path, root);
  context.embedder();  // a bad model fails before anything is written
  return found;
}

} // namespace kasava::commands
