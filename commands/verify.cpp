// `kasava verify [--repair]`: checks the index against itself (SQLite and full-text
// integrity, chunks against files and full-text rows, vectors against the model stamp) and
// against the repository it was built from; with --repair, re-indexes the files whose rows
// disagree, or rebuilds the index when the file itself is damaged. With --store, checks (and
// repairs) the shared store instead (pgstore::check_store, repair_store).
#include "commands/commands.hpp"
#include "commands/index_lock.hpp"
#include "core/index/verify.hpp"
#include "core/pgstore/maintenance.hpp"
#include "core/repo/source.hpp"
#include "core/util/json.hpp"
#include "core/util/strings.hpp"

namespace kasava::commands {

namespace {

// The repository the index belongs to (found on disk, never read from the index: see
// resolve_query_target), to compare with and repair from, at the commit the index records
// (`--rev`); null when there is none.
std::unique_ptr<repo::Source> open_origin(const QueryTarget& target,
                                          const std::optional<std::string>& revision) {
  const auto& root = target.repository;
  if (!root) return nullptr;
  repo::OpenOptions open_options;
  if (revision && !revision->empty()) open_options.revision = *revision;
  auto source = repo::open_source(*root, open_options);
  return source ? std::move(source).value() : nullptr;
}

std::string plural(std::size_t count, const char* word) {
  return std::to_string(count) + " " + word + (count == 1 ? "" : "s");
}

void print_text(Output& output, const std::string& index_path, const index::VerifyReport& report,
                bool have_source, bool partial) {
  const auto& check = report.check;
  std::string text = "index '" + index_path + "': " + plural(check.files, "file") + ", " +
                     plural(check.chunks, "chunk") + ", " + std::to_string(check.fts_rows) +
                     " full-text rows, " + plural(check.vectors, "vector") + ", model " +
                     (check.embedding_model.empty() ? "none" : check.embedding_model) + "\n";
  if (partial) text += std::string("run: ") + k_partial_index + "\n";
  if (check.problems.empty()) {
    text += "integrity: ok\n";
  } else {
    for (const auto& problem : check.problems) text += "damaged: " + util::escape_controls(problem) + "\n";
  }
  if (check.problems.empty()) {
    if (check.inconsistent_paths.empty()) {
      text += "consistency: ok\n";
    } else {
      for (const auto& path : check.inconsistent_paths)
        text += "inconsistent: " + util::escape_controls(path) + "\n";
    }
  }
  if (report.needs_rebuild()) {
    text += "source: not compared (the index itself is damaged)\n";
  } else if (!have_source) {
    text += "source: not available (the index was built elsewhere); not compared\n";
  } else if (report.gone.empty() && report.stale.empty()) {
    text += "source: up to date (" + plural(report.source_files, "file") + ")\n";
  } else {
    text += "source: " + plural(report.gone.size(), "file") + " gone, " +
            plural(report.stale.size(), "file") + " new or changed (run `kasava index`)\n";
  }
  output.out(text);
}

void print_json(Output& output, const std::string& index_path, const index::VerifyReport& report,
                bool have_source, bool repaired, bool partial) {
  const auto& check = report.check;
  util::JsonWriter json;
  json.begin_object();
  json.key("index").value(index_path);
  json.key("ok").value(check.problems.empty() && check.inconsistent_paths.empty());
  json.key("complete").value(!partial);
  json.key("repaired").value(repaired);
  json.key("files").value(check.files);
  json.key("chunks").value(check.chunks);
  json.key("fts_rows").value(check.fts_rows);
  json.key("vectors").value(check.vectors);
  json.key("embedding_model").value(check.embedding_model);
  json.key("problems").begin_array();
  for (const auto& problem : check.problems) json.value(problem);
  json.end_array();
  json.key("inconsistent").begin_array();
  for (const auto& path : check.inconsistent_paths) json.value(path);
  json.end_array();
  json.key("source_compared").value(have_source);
  json.key("gone").value(report.gone.size());
  json.key("stale").value(report.stale.size());
  json.end_object();
  output.out(json.str() + "\n");
}

// Re-indexes what verify found wrong: the whole index when the file is damaged, else the
// inconsistent files (forgotten first, so the indexer parses them again) and whatever changed.
void repair(Context& context, repo::Source& source, const std::string& index_path,
            const index::VerifyReport& report) {
  const IndexLock lock(index_path, LockWait::wait, [&] {
    context.output.warning("another `kasava index` is writing '" + index_path +
                           "'; waiting for it to finish");
  });
  discard_unfinished_rebuild(index_path);
  if (report.needs_rebuild()) {
    context.output.warning("index '" + index_path + "' is damaged; rebuilding it");
  }
  auto store = open_index_for_writing(context, index_path, source.root(), ModelChange::rebuild,
                                      report.needs_rebuild() ? Existing::rebuild : Existing::update);
  const auto options = index_options_for(context, *store, 0);
  if (!report.needs_rebuild() && !report.check.inconsistent_paths.empty()) {
    store->begin();
    for (const auto& path : report.check.inconsistent_paths) store->remove_file(path);
    store->commit();
  }
  auto summary = index::run_index(source, *store, options, progress_callbacks(context));
  context.output.end_progress();
  if (!summary) throw util::Failure(summary.error());
  finish_index_run(std::move(store), index_path);
}

// The shared store verify checks: --store, else KASAVA_STORE (as `status --store`).
std::string verify_store(const VerifyCommandOptions& options) {
  return !options.store.empty() ? options.store : environment("KASAVA_STORE");
}

void print_store_text(Output& output, const pgstore::StoreCheck& check) {
  std::string text = "store " + check.where + ": " + plural(static_cast<std::size_t>(check.refs), "ref") + ", " +
                     plural(static_cast<std::size_t>(check.blobs), "blob") + ", " +
                     plural(static_cast<std::size_t>(check.chunks), "chunk") + "\n";
  if (check.missing.empty()) text += "references: ok\n";
  for (const auto& missing : check.missing) {
    text += "missing: " + util::escape_controls(missing.repository + " " + missing.ref) + ": " +
            plural(static_cast<std::size_t>(missing.blobs), "blob") + " not stored (publish it again)\n";
  }
  if (check.damaged_blobs == 0 && check.stray_chunks == 0 && check.codes_astray == 0) text += "blobs: ok\n";
  if (check.damaged_blobs > 0) {
    text += "damaged: " + plural(static_cast<std::size_t>(check.damaged_blobs), "blob") +
            " whose chunks, vectors or text disagree with the blob and its model\n";
  }
  if (check.stray_chunks > 0) {
    text += "damaged: " + plural(static_cast<std::size_t>(check.stray_chunks), "chunk") + " without their blob\n";
  }
  if (check.codes_astray > 0) {
    text += "damaged: " + plural(static_cast<std::size_t>(check.codes_astray), "code") +
            " in a partition their model does not have (searches miss them; --repair puts them where every "
            "search reads)\n";
  }
  if (check.term_stats_wrong == 0 && check.model_stats_wrong == 0 &&
      check.history_stats_wrong == 0) {
    text += "statistics: ok\n";
  }
  if (check.term_stats_wrong > 0 || check.model_stats_wrong > 0) {
    text += "stale: " + plural(static_cast<std::size_t>(check.term_stats_wrong), "term count") + ", " +
            plural(static_cast<std::size_t>(check.model_stats_wrong), "model total") + " differ from the chunks\n";
  }
  if (check.history_stats_wrong > 0) {
    text += "stale: " + plural(static_cast<std::size_t>(check.history_stats_wrong), "ref") +
            " whose history totals differ from its file histories\n";
  }
  if (check.orphan_blobs == 0 && check.orphan_texts == 0) {
    text += "orphans: none\n";
  } else {
    text += "orphans: " + plural(static_cast<std::size_t>(check.orphan_blobs), "blob") + ", " +
            plural(static_cast<std::size_t>(check.orphan_texts), "text") +
            " nothing references (--repair removes them)\n";
  }
  output.out(text);
}

void print_store_json(Output& output, const pgstore::StoreCheck& check, bool repaired) {
  util::JsonWriter json;
  json.begin_object();
  json.key("store").value(check.where);
  json.key("ok").value(check.sound());
  json.key("repaired").value(repaired);
  json.key("refs").value(check.refs);
  json.key("blobs").value(check.blobs);
  json.key("chunks").value(check.chunks);
  json.key("missing").begin_array();
  for (const auto& missing : check.missing) {
    json.begin_object();
    json.key("repository").value(missing.repository);
    json.key("ref").value(missing.ref);
    json.key("blobs").value(missing.blobs);
    json.end_object();
  }
  json.end_array();
  json.key("damaged_blobs").value(check.damaged_blobs);
  json.key("stray_chunks").value(check.stray_chunks);
  json.key("term_stats_wrong").value(check.term_stats_wrong);
  json.key("model_stats_wrong").value(check.model_stats_wrong);
  json.key("history_stats_wrong").value(check.history_stats_wrong);
  json.key("codes_astray").value(check.codes_astray);
  json.key("orphan_blobs").value(check.orphan_blobs);
  json.key("orphan_texts").value(check.orphan_texts);
  json.end_object();
  output.out(json.str() + "\n");
}

// `kasava verify --store URL [--repair]`: exit 0 sound, 1 damaged; a repair that leaves
// damage (a ref missing blobs, which only a publish can bring) is an error.
ExitStatus run_store_verify(const VerifyCommandOptions& options, Context& context) {
  auto opened = pgstore::Store::open(verify_store(options));
  if (!opened) throw util::Failure(opened.error());
  pgstore::Store& store = **opened;
  pgstore::StoreCheck check = pgstore::check_store(store);
  const bool needs_repair = !check.sound() || check.orphan_blobs > 0 || check.orphan_texts > 0;
  std::optional<pgstore::StoreRepair> repaired;
  if (options.repair && needs_repair) {
    repaired = pgstore::repair_store(store);
    check = pgstore::check_store(store);
  }
  if (options.json) {
    print_store_json(context.output, check, repaired.has_value());
  } else {
    print_store_text(context.output, check);
    if (repaired) {
      context.output.out("repaired: " + plural(static_cast<std::size_t>(repaired->blobs_removed), "blob") + ", " +
                         plural(static_cast<std::size_t>(repaired->chunks_removed), "chunk") + ", " +
                         plural(static_cast<std::size_t>(repaired->texts_removed), "text") + " removed" +
                         (repaired->codes_placed > 0
                              ? "; " + plural(static_cast<std::size_t>(repaired->codes_placed), "code") +
                                    " put where every search reads"
                              : "") +
                         (repaired->statistics_recomputed ? "; statistics recomputed" : "") + "\n");
    }
  }
  if (check.sound()) return ExitStatus::success;
  std::string refs;
  for (const auto& missing : check.missing) refs += (refs.empty() ? "" : ", ") + missing.repository + " " + missing.ref;
  if (repaired) {
    context.output.flush();  // the report first
    throw util::Failure("store at " + check.where + " still damaged after repair" +
                        (refs.empty() ? std::string() : ": publish again " + refs));
  }
  context.output.warning("store is damaged: run `kasava verify --store URL --repair`" +
                         (refs.empty() ? std::string() : ", then publish again " + refs));
  return ExitStatus::no_result;
}

} // namespace

SetupHooks verify_setup(const VerifyCommandOptions& options) {
  SetupHooks hooks;
  if (!verify_store(options).empty()) hooks.needs = Needs::index_per_call;
  return hooks;
}

ExitStatus run_verify(const VerifyCommandOptions& options, Context& context, Prepared& prepared) {
  if (!verify_store(options).empty()) return run_store_verify(options, context);
  const QueryTarget& target = prepared.target;
  std::unique_ptr<repo::Source> source;
  bool partial = false;
  auto read_partial = [&] {
    partial = index_is_partial(*open_store(target.index_path, store::OpenMode::read_only));
  };
  {
    // Opening first gives the clear errors: not a database, not a kasava index, other schema.
    // A damaged file is what verify is for: its checks say what is wrong.
    const auto store = store::Store::open(target.index_path, store::OpenMode::read_only);
    if (store) {
      source = open_origin(target, (*store)->meta("revision"));
      partial = index_is_partial(**store);
    } else if (store::is_damage(store.error())) {
      source = open_origin(target, store::Store::peek_meta(target.index_path, "revision"));
    } else {
      open_store(target.index_path, store::OpenMode::read_only);  // throws, with the hint
    }
  }

  // Without the source, compare with an empty listing: only the file's own checks count.
  auto verified = [&]() -> index::VerifyReport {
    if (source) return index::verify_index(*source, target.index_path).value_or_throw();
    index::VerifyReport report;
    report.check = store::check_index(target.index_path).value_or_throw();
    return report;
  };
  index::VerifyReport report = verified();
  const bool damaged = !report.check.problems.empty() || !report.check.inconsistent_paths.empty();
  bool repaired = false;
  if (options.repair && (damaged || partial || !report.gone.empty() || !report.stale.empty())) {
    if (!source) {
      throw util::Failure("cannot repair index '" + target.index_path +
                          "': the repository it was built from is not available");
    }
    repair(context, *source, target.index_path, report);
    report = verified();
    read_partial();
    repaired = true;
  }

  if (options.json) {
    print_json(context.output, target.index_path, report, source != nullptr, repaired, partial);
  } else {
    print_text(context.output, target.index_path, report, source != nullptr, partial);
    if (repaired) context.output.out("repaired: index re-indexed from the repository\n");
  }
  const bool still_damaged =
      !report.check.problems.empty() || !report.check.inconsistent_paths.empty();
  if (still_damaged && repaired) throw util::Failure("index still damaged after repair");
  if (still_damaged) {
    context.output.warning("index is damaged: run `kasava verify --repair`");
    return ExitStatus::no_result;
  }
  return ExitStatus::success;
}

} // namespace kasava::commands
