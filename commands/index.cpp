// `kasava index [TARGET]`: builds or refreshes the index of a repository, a directory, or a
// URL cloned into the cache (found, opened and locked by the setup: Needs::writable_index),
// then prints a one-line summary (or JSON with --json) that says where a URL was cloned.
#include <cstdio>
#include <filesystem>
#include <optional>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

#include "commands/commands.hpp"
#include "commands/publish.hpp"
#include "core/remote/embedder.hpp"
#include "core/repo/source.hpp"
#include "core/util/json.hpp"
#include "core/util/parallel.hpp"
#include "core/util/strings.hpp"

namespace kasava::commands {

namespace {

// glibc raises its mmap threshold to the size of each large block freed (up to 32 MiB), so
// after the first windows the large buffers of a run (file contents, packed texts, tree-sitter's
// arrays) come from the threads' heaps, which keep what they once held: indexing the Linux
// kernel peaked at 140.6 MB with at most ~56 MB of heap in use (heaptrack). A fixed threshold
// hands blocks of 256 KiB and more back to the system when freed: 126.7 and 130.8 MB in two
// runs, user time 530 and 563 s against 556.
void return_large_blocks_when_freed() {
#if defined(__GLIBC__)
  mallopt(M_MMAP_THRESHOLD, 256 * 1024);
#endif
}

// `cloned_into`: the clone of a URL target (its root), "" for a folder.
std::string summary_json(const index::IndexSummary& summary, const std::string& root,
                         const std::string& index_path, const std::string& model,
                         bool remote, bool dry_run, long requests,
                         const std::string& cloned_into) {
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
  json.key("dry_run").value(dry_run);
  if (!cloned_into.empty()) json.key("cloned_into").value(cloned_into);
  if (remote) {
    const auto& e = summary.embedding;
    json.key("embedding").begin_object();
    json.key("sent").value(e.sent);
    json.key("cached").value(e.cached);
    json.key("retried").value(e.retried);
    json.key("pending").value(e.pending);
    json.key("requests").value(static_cast<std::int64_t>(requests));
    if (dry_run) {
      json.key("would_send").value(e.would_send);
      json.key("estimated_tokens").value(e.estimated_tokens);
    }
    json.end_object();
  }
  json.end_object();
  return json.str() + "\n";
}

// What a remote model did (or, in a dry run, would do), for people: "" for a local model.
std::string embedding_line(const index::IndexSummary& summary, bool dry_run, long requests) {
  const auto& e = summary.embedding;
  std::string line;
  if (dry_run) {
    line = "would send " + std::to_string(e.would_send) + " chunks (~" +
           std::to_string(e.estimated_tokens) + " tokens); " + std::to_string(e.cached) +
           " cached";
  } else {
    line = "embedded " + std::to_string(e.sent + e.retried) + " chunks in " +
           std::to_string(requests) + " requests, " + std::to_string(e.cached) + " from the cache";
    if (e.retried > 0) line += " (" + std::to_string(e.retried) + " pending from before)";
  }
  return line;
}

// Where a URL was cloned, and how to ask it from anywhere ("" when nothing was cloned).
std::string clone_line(const IndexCommandOptions& options, const Context& context,
                       const std::string& cloned_into) {
  if (cloned_into.empty()) return "";
  const std::string& url = options.target.empty() ? context.global.url : options.target;
  return "cloned into " + cloned_into + " (ask it with `kasava -C " + repo::redact_url(url) +
         " ask QUESTION`)\n";
}

// The "publish" member of the summary JSON (with its leading comma).
std::string publish_json(const PublishSummary& published) {
  util::JsonWriter json;
  json.begin_object();
  json.key("store").value(published.where);
  json.key("repository").value(published.repository);
  json.key("ref").value(published.ref);
  json.key("files").value(published.files);
  json.key("blobs").value(published.blobs);
  json.key("blobs_sent").value(published.blobs_sent);
  json.key("chunks_sent").value(published.chunks_sent);
  json.key("chunks").value(published.chunks);
  json.key("changed").value(published.changed);
  json.key("codes_partitioned").value(published.codes_partitioned);
  json.key("seconds").value(published.seconds);
  json.end_object();
  return ",\"publish\":" + json.str();
}

// What a publish did, for people.
std::string publish_line(const PublishSummary& published) {
  char seconds[32];
  std::snprintf(seconds, sizeof seconds, "%.2f", published.seconds);
  return "published " + util::escape_controls(published.repository) + " " +
         util::escape_controls(published.ref) + " to " + published.where + ": " +
         std::to_string(published.files) + " files, " + std::to_string(published.blobs_sent) + " of " +
         std::to_string(published.blobs) + " blobs sent (" + std::to_string(published.chunks_sent) +
         " chunks), " + (published.changed ? "snapshot updated" : "snapshot unchanged") +
         (published.codes_partitioned > 0
              ? ", the store's " + std::to_string(published.codes_partitioned) + " codes partitioned"
              : "") +
         " in " + seconds + " s";
}

// A warning when chunks are left without vectors: they are searchable by words now and by
// meaning after a later run.
void report_pending(const index::IndexSummary& summary, Context& context) {
  const auto& e = summary.embedding;
  if (!e.cache_error.empty()) {
    context.output.warning(e.cache_error + "; these vectors are not cached for the next run");
  }
  if (e.pending == 0) return;
  std::string message = std::to_string(e.pending) +
                        " chunks have no vector yet and are found by words only; the next "
                        "`kasava index` sends them again";
  if (!e.first_error.empty()) message += " (first failure: " + e.first_error + ")";
  context.output.warning(message);
}

// `kasava index --dry-run`: lists and chunks as a real run would, against what the index
// already holds (read only), and prints what would be indexed and sent. Nothing is written,
// nothing is sent, no lock is taken.
ExitStatus run_dry(const IndexCommandOptions& options, Context& context, repo::Source& source,
                   const std::string& index_path, const std::string& cloned_into) {
  // The index's current content, when it is one this run would keep (same model); else
  // an empty index in memory, as a rebuild would start from.
  std::unique_ptr<store::Store> store;
  if (!options.rebuild && std::filesystem::exists(index_path)) {
    if (auto opened = store::Store::open(index_path, store::OpenMode::read_only)) {
      const std::string stamped = index::index_model(**opened);
      if (stamped.empty() || stamped == context.embedder().model_id()) store = std::move(opened).value();
    }
  }
  if (!store) store = open_store(":memory:", store::OpenMode::read_write);
  index::IndexOptions index_options = index_options_for(context, *store, options.max_file_size);
  index_options.threads = options.threads;
  index_options.dry_run = true;
  auto summary = index::run_index(source, *store, index_options, progress_callbacks(context));
  context.output.end_progress();
  if (!summary) throw util::Failure(summary.error());
  const bool remote = context.embedder().locality() == embed::Locality::remote;
  if (options.json) {
    context.output.out(summary_json(*summary, source.root(), index_path,
                                    context.embedder().model_id(), remote, true, 0, cloned_into));
    return ExitStatus::success;
  }
  char line[256];
  std::snprintf(line, sizeof line,
                "dry run: would index %zu files (%zu to parse, %zu unchanged, %zu to remove), "
                "%zu chunks to write, %zu skipped\n",
                summary->parsed + summary->unchanged, summary->parsed, summary->unchanged,
                summary->removed, summary->chunks_written, summary->skipped_total());
  context.output.out(line);
  context.output.out(clone_line(options, context, cloned_into));
  if (remote) {
    context.output.out("dry run: model " + context.embedder().model_id() + ": " +
                       embedding_line(*summary, true, 0) + "\n");
  } else {
    context.output.out("dry run: model " + context.embedder().model_id() +
                       " runs on this machine: nothing would be sent\n");
  }
  return ExitStatus::success;
}

} // namespace

namespace {
// The store to publish to: --store, else KASAVA_STORE or the user's config; "" = none.
std::string store_conninfo(const IndexCommandOptions& options, Context& context) {
  return !options.store.empty() ? options.store : context.settings().store.value;
}
} // namespace

SetupHooks index_setup(const IndexCommandOptions& options) {
  SetupHooks hooks;
  hooks.write = WriteRequest{options.target, options.revision, options.rebuild, options.dry_run};
  hooks.before_write = [&options](Context& context) {
    if ((!options.name.empty() || !options.ref.empty()) && store_conninfo(options, context).empty()) {
      throw util::Failure("--name and --ref say what to publish, but no store is named: pass "
                          "--store URL (or set KASAVA_STORE, or `store =` in your config)");
    }
  };
  return hooks;
}

// After a first index (or a rebuild): merges the full-text index into one segment
// (Store::optimize) and meanwhile, on a second connection, does the reading work of what
// finish_index_run would do next when it is due: counting the common terms (update_term_docs)
// and training the codes' partitions (update_partitions). On the Linux kernel the merge takes
// 6.5 s on one core, the count 4.5 s and the training 2.5 s on two. The merge changes no row
// the second connection reads, so what it found holds after the merge.
void merge_index(store::Store& store) {
  const std::optional<store::Store::TermDocsRefill> terms_due = store.term_docs_refill_due();
  const std::optional<std::int64_t> partitions_due = store.partitions_due();
  std::optional<std::vector<std::pair<std::string, std::int64_t>>> counted;
  std::shared_ptr<const store::PartitionPlan> trained;
  util::run_threads(terms_due || partitions_due ? 2 : 1, [&](unsigned thread) {
    if (thread == 0) return store.optimize();
    try {
      // read_write although it only reads: a read-only connection may be query_only, which
      // refuses the temporary vocabulary table the count reads through.
      auto other = store::Store::open(store.path(), store::OpenMode::read_write);
      if (!other) return;
      if (terms_due) counted = (*other)->count_common_terms(terms_due->min_docs);
      if (partitions_due) trained = (*other)->plan_partitions(*partitions_due);
    } catch (const std::exception&) {
      // finish_index_run does what is missing on this connection.
    }
  });
  if (terms_due && counted) store.refill_term_docs(*terms_due, *counted);
  if (trained) store.update_partitions(trained);
}

ExitStatus run_index(const IndexCommandOptions& options, Context& context, Prepared& prepared) {
  repo::Source& source = *prepared.source;
  const std::string& index_path = prepared.target.index_path;
  const std::string root = source.root();
  const std::string& cloned_into = prepared.cloned_into;
  // The shared store, when one is named: published to once the local index is complete.
  const std::string conninfo = store_conninfo(options, context);
  if (options.dry_run) return run_dry(options, context, source, index_path, cloned_into);
  std::unique_ptr<store::Store> store = std::move(prepared.store);
  index::IndexOptions index_options = index_options_for(context, *store, options.max_file_size);
  index_options.threads = options.threads;
  return_large_blocks_when_freed();
  auto summary = index::run_index(source, *store, index_options, progress_callbacks(context));
  context.output.end_progress();
  if (!summary) throw util::Failure(summary.error());
  // Written only when it changes: a no-change run writes nothing.
  if (store->meta("revision").value_or("") != options.revision) {
    store->set_meta("revision", options.revision);
  }
  // A first index (or a rebuild) leaves many small FTS segments: merge them once.
  if (summary->unchanged == 0 && summary->parsed > 0) merge_index(*store);
  finish_index_run(std::move(store), index_path);

  const auto* remote_embedder = dynamic_cast<const remote::RemoteEmbedder*>(&context.embedder());
  const long requests = remote_embedder != nullptr ? remote_embedder->requests_sent() : 0;
  report_pending(*summary, context);
  // The local index is complete whatever happens in the store.
  std::optional<PublishSummary> published;
  std::optional<util::Failure> publish_failure;
  if (!conninfo.empty()) {
    auto local = store::Store::open(index_path, store::OpenMode::read_only);
    if (!local) throw util::Failure(local.error());
    const PublishRequest request{conninfo, repository_name(options.name, root),
                                 !options.ref.empty() ? options.ref : ref_name(options.revision, root),
                                 context.embedder().model_id()};
    try {
      published = publish(request, **local, source, context.output);
    } catch (const util::Failure& failure) {
      publish_failure = failure;
    }
  }
  if (options.json) {
    std::string json = summary_json(*summary, root, index_path, context.embedder().model_id(),
                                    remote_embedder != nullptr, false, requests, cloned_into);
    if (published) json.insert(json.rfind('}'), publish_json(*published));
    context.output.out(json);
  } else {
    context.output.out(format_summary(*summary) + "\n");
    context.output.out(clone_line(options, context, cloned_into));
    if (remote_embedder != nullptr) {
      context.output.out(embedding_line(*summary, false, requests) + "\n");
    }
    if (published) context.output.out(publish_line(*published) + "\n");
  }
  if (publish_failure) {
    context.output.flush();  // the summary first: the local index is up to date
    throw *publish_failure;
  }
  return ExitStatus::success;
}

} // namespace kasava::commands
