// `kasava index [TARGET]`: builds or refreshes the index of a repository, a directory, or a
// URL cloned into the cache, then prints a one-line summary (or JSON with --json).
#include <filesystem>

#include "commands/commands.hpp"
#include "commands/index_lock.hpp"
#include "core/index/locate.hpp"
#include "core/repo/source.hpp"
#include "core/util/files.hpp"
#include "core/util/json.hpp"

namespace kasava::commands {

namespace {

std::string summary_json(const index::IndexSummary& summary, const std::string& root,
                         const std::string& index_path, const std::string& model) {
  util::JsonWriter json;
  json.begin_object();
  json.key("root").value(root);
  json.key("index").value(index_path);
  json.key("commit").value(summary.commit);
  json.key("files").value(summary.files);
  json.key("indexed").value(summary.indexed);
  json.key("parsed").value(summary.parsed);
  json.key("unchanged").value(summary.unchanged);
  json.key("removed").value(summary.removed);
  json.key("chunks").value(summary.chunks);
  json.key("chunks_written").value(summary.chunks_written);
  json.key("model").value(model);
  json.key("skipped").value(summary.skipped_total());
  json.key("skipped_by_reason").begin_object();
  for (const auto& [reason, count] : summary.skipped) json.key(reason).value(count);
  json.end_object();
  json.key("seconds").value(summary.seconds);
  json.end_object();
  return json.str() + "\n";
}

} // namespace

ExitStatus run_index(const IndexCommandOptions& options, Context& context) {
  std::string path = options.target.empty() ? context.cwd : options.target;
  if (repo::is_url(options.target)) {
    const std::string destination = repo::clone_path_for(options.target, util::cache_directory());
    if (context.output.shows_progress()) {
      context.output.progress("cloning " + repo::redact_url(options.target) + " ...");
    }
    const bool cloned_before = std::filesystem::is_directory(destination);
    auto cloned = repo::clone_or_fetch(options.target, destination);
    context.output.end_progress();
    if (!cloned && cloned_before) {
      // Offline or the host is down: the clone from last time is still worth indexing.
      context.output.warning(cloned.error().message + "; indexing the clone from the last fetch");
      path = destination;
    } else {
      path = std::move(cloned).value_or_throw();
    }
  }

  context.embedder();  // a bad --model fails before anything is written
  repo::OpenOptions open_options;
  if (!options.revision.empty()) open_options.revision = options.revision;
  auto source = repo::open_source(path, open_options).value_or_throw();
  const std::string root = source->root();

  std::string index_path = context.global.index_path.empty()
                               ? index::default_index_path(root)
                               : util::absolute_path(context.global.index_path);
  // One writer at a time: a second `kasava index` on the same index waits for the first
  // (SQLite alone would interleave the two runs' batches and fail one with "database is
  // locked" after its busy timeout).
  const IndexLock lock(index_path, LockWait::wait, [&] {
    context.output.warning("another `kasava index` is writing '" + index_path +
                           "'; waiting for it to finish");
  });
  if (options.rebuild) store::Store::remove(index_path).value_or_throw();
  auto store = open_index_for_writing(context, index_path, ModelChange::rebuild);
  index::exclude_from_git(root);

  index::IndexOptions index_options = index_options_for(context, *store, options.max_file_size);
  index_options.threads = options.threads;
  auto summary = index::run_index(*source, *store, index_options, progress_callbacks(context));
  context.output.end_progress();
  if (!summary) throw util::Failure(summary.error());
  // Written only when it changes: a no-change run writes nothing.
  if (store->meta("revision").value_or("") != options.revision) {
    store->set_meta("revision", options.revision);
  }
  // A first index (or a rebuild) leaves many small FTS segments: merge them once.
  if (summary->unchanged == 0 && summary->parsed > 0) store->optimize();

  if (options.json) {
    context.output.out(summary_json(*summary, root, index_path, context.embedder().model_id()));
  } else {
    context.output.out(format_summary(*summary) + "\n");
  }
  return ExitStatus::success;
}

} // namespace kasava::commands
