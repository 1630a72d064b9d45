// `kasava status`: what the index holds — files, chunks, languages, model, last indexed
// commit, files changed since, size on disk — and the settings in use with where each came
// from (API keys only as set or unset), for people or as JSON.
#include <cstdio>
#include <cstdlib>

#include "commands/commands.hpp"
#include "core/pgstore/store.hpp"
#include "core/repo/source.hpp"
#include "core/util/json.hpp"
#include "core/util/strings.hpp"

namespace kasava::commands {

namespace {

// Files whose content differs from the index (changed, new or deleted), or -1 when the
// source is not available to compare.
long count_stale_files(const store::Store& store, const std::optional<std::string>& root) {
  if (!root) return -1;
  const std::uint64_t max_file_size = max_file_size_for(store);
  auto source = repo::open_source(*root, {});
  if (!source) return -1;
  auto entries = (*source)->list();
  if (!entries) return -1;
  auto states = store.file_states();
  long stale = 0;
  for (auto& entry : *entries) {
    if (entry.kind == repo::EntryKind::submodule) continue;
    auto state = states.find(entry.path);
    if (state == states.end()) {
      ++stale;
      continue;
    }
    if (entry.blob_id.empty() && entry.size <= max_file_size) (*source)->read(entry);
    if (entry.blob_id != state->second.blob_id &&
        !(entry.blob_id.empty() && !state->second.skip_reason.empty())) {
      ++stale;
    }
    states.erase(state);
  }
  return stale + static_cast<long>(states.size());
}

// The settings `kasava status` shows, in order, with their names in config files.
std::vector<std::pair<const char*, const Setting*>> shown_settings(const Settings& settings) {
  return {{"model", &settings.model},
          {"answer_model", &settings.answer_model},
          {"dimensions", &settings.dimensions},
          {"output_dtype", &settings.output_dtype},
          {"retries", &settings.retries},
          {"parallel_requests", &settings.parallel_requests},
          {"rate_limit", &settings.rate_limit},
          {"openai_base_url", &settings.openai_base_url},
          {"voyage_base_url", &settings.voyage_base_url},
          {"anthropic_base_url", &settings.anthropic_base_url},
          {"allow_repository_models", &settings.allow_repository_models}};
}

// The shared store `status` describes: --store, else KASAVA_STORE (a user's config `store`
// is for publishing; `status` alone keeps describing the local index).
std::string status_store(const StatusCommandOptions& options) {
  return !options.store.empty() ? options.store : environment("KASAVA_STORE");
}

// `kasava status --store URL`: repositories, refs, commits, last publish, chunks, unique
// blobs and size of the shared store.
ExitStatus run_store_status(const StatusCommandOptions& options, Context& context) {
  auto opened = pgstore::Store::open(status_store(options));
  if (!opened) throw util::Failure(opened.error());
  const pgstore::StoreStatus status = (*opened)->status();
  if (options.json) {
    util::JsonWriter json;
    json.begin_object();
    json.key("store").value(status.where);
    json.key("schema_version").value(status.schema_version);
    json.key("repositories").value(status.repositories);
    json.key("refs").begin_array();
    for (const pgstore::RefStatus& ref : status.refs) {
      json.begin_object();
      json.key("repository").value(ref.repository);
      json.key("ref").value(ref.ref);
      json.key("commit").value(ref.commit);
      json.key("model").value(ref.model);
      json.key("published_at").value(ref.published_at);
      json.key("files").value(ref.files);
      json.key("chunks").value(ref.chunks);
      json.end_object();
    }
    json.end_array();
    json.key("unique_blobs").value(status.unique_blobs);
    json.key("chunks").value(status.chunks);
    json.key("bytes").value(status.bytes);
    json.end_object();
    context.output.out(json.str() + "\n");
    return ExitStatus::success;
  }
  std::string text;
  auto row = [&](const char* label, const std::string& value) {
    char padded[16];
    std::snprintf(padded, sizeof padded, "%-13s", label);
    text += context.output.paint(padded, Style::kind) + util::escape_controls(value) + "\n";
  };
  row("store", status.where + " (schema " + std::to_string(status.schema_version) + ", " +
                   util::format_bytes(static_cast<std::uint64_t>(status.bytes)) + ")");
  row("repositories", std::to_string(status.repositories) + " (" + std::to_string(status.refs.size()) + " refs)");
  row("unique blobs", std::to_string(status.unique_blobs) + " (" + std::to_string(status.chunks) + " chunks)");
  for (const pgstore::RefStatus& ref : status.refs) {
    const std::string commit = ref.commit.size() > 12 ? ref.commit.substr(0, 12) : ref.commit;
    row("", ref.repository + " " + ref.ref + "  " + (commit.empty() ? "(no commit)" : commit) + "  " +
                std::to_string(ref.files) + " files, " + std::to_string(ref.chunks) + " chunks, " +
                ref.model + ", published " + ref.published_at);
  }
  context.output.out(text);
  return ExitStatus::success;
}

} // namespace

SetupHooks status_setup(const StatusCommandOptions& options) {
  SetupHooks hooks;
  if (!status_store(options).empty()) hooks.needs = Needs::index_per_call;
  return hooks;
}

namespace {

// What status shows of an index, read once for the text and the JSON view.
struct IndexFacts {
  store::Stats stats;
  std::string root;
  std::string commit;
  std::string revision;
  std::string indexed_at;
  bool partial = false;
  std::string model;  ///< "none" when the index has no vectors
  std::string dims;
  long stale = -1;    ///< files changed since indexing; -1 for a --rev index
  store::HistoryExtent history;
};

IndexFacts read_index_facts(const QueryTarget& target, const store::Store& store) {
  IndexFacts facts;
  facts.stats = store.stats();
  facts.root = store.meta("root").value_or("");
  facts.commit = store.meta("commit").value_or("");
  facts.revision = store.meta("revision").value_or("");
  facts.indexed_at = store.meta("indexed_at").value_or("");
  facts.partial = index_is_partial(store);
  facts.model = store.meta("embedding_model").value_or("");
  if (facts.model.empty()) facts.model = "none";
  facts.dims = store.meta("embedding_dims").value_or("");
  facts.stale = facts.revision.empty() ? count_stale_files(store, target.root) : -1;
  facts.history = store.history_extent();
  return facts;
}

} // namespace

std::string status_json(Context& context, const QueryTarget& target, const store::Store& store) {
  const IndexFacts facts = read_index_facts(target, store);
  const auto& [stats, root, commit, revision, indexed_at, partial, model, dims, stale, history] = facts;
  const Settings& settings = context.settings();
  util::JsonWriter json;
  json.begin_object();
  json.key("index").value(target.index_path);
  json.key("root").value(root);
  json.key("commit").value(commit);
  json.key("revision").value(revision);
  json.key("indexed_at").value(indexed_at);
  json.key("complete").value(!partial);
  json.key("files").value(static_cast<std::int64_t>(stats.files));
  json.key("skipped_files").value(static_cast<std::int64_t>(stats.skipped_files));
  json.key("chunks").value(static_cast<std::int64_t>(stats.chunks));
  json.key("languages").begin_object();
  for (const auto& [language, count] : stats.files_per_language) {
    json.key(language.empty() ? "text" : language).value(static_cast<std::int64_t>(count));
  }
  json.end_object();
  json.key("model").value(model);
  json.key("dimensions").value(static_cast<std::int64_t>(dims.empty() ? 0 : std::atoi(dims.c_str())));
  json.key("vectors").value(static_cast<std::int64_t>(stats.vectors));
  json.key("pending_vectors").value(static_cast<std::int64_t>(stats.pending_vectors));
  json.key("history_commits").value(history.commits);
  json.key("history_files").value(history.paths);
  json.key("settings").begin_object();
  for (const auto& [name, setting] : shown_settings(settings)) {
    json.key(name).begin_object();
    json.key("value").value(setting->value);
    json.key("origin").value(setting->is_set() ? origin_name(setting->origin) : "unset");
    json.key("source").value(setting->is_set() ? setting->source : "");
    json.end_object();
  }
  json.end_object();
  json.key("api_keys").begin_object();
  for (const auto& [name, set] : api_key_status()) json.key(name).value(set ? "set" : "unset");
  json.end_object();
  json.key("source_bytes").value(static_cast<std::int64_t>(stats.source_bytes));
  json.key("index_bytes").value(static_cast<std::int64_t>(stats.index_bytes));
  json.key("stale_files");
  if (stale >= 0) {
    json.value(static_cast<std::int64_t>(stale));
  } else {
    json.null();
  }
  json.end_object();
  return json.str() + "\n";
}

ExitStatus run_status(const StatusCommandOptions& options, Context& context, Prepared& prepared) {
  if (!status_store(options).empty()) return run_store_status(options, context);
  const QueryTarget& target = prepared.target;
  const std::unique_ptr<store::Store> store = std::move(prepared.store);
  if (options.json) {
    context.output.out(status_json(context, target, *store));
    return ExitStatus::success;
  }
  const IndexFacts facts = read_index_facts(target, *store);
  const auto& [stats, root, commit, revision, indexed_at, partial, model, dims, stale, history] = facts;
  const Settings& settings = context.settings();

  std::string languages;
  for (const auto& [language, count] : stats.files_per_language) {
    if (!languages.empty()) languages += ", ";
    languages += (language.empty() ? "text" : language) + " " + std::to_string(count);
  }
  std::string text;
  auto row = [&](const char* label, const std::string& value) {
    char padded[16];
    std::snprintf(padded, sizeof padded, "%-11s", label);
    text += context.output.paint(padded, Style::kind) + util::escape_controls(value) + "\n";
  };
  row("index", target.index_path + " (" + util::format_bytes(stats.index_bytes) + ")");
  row("root", root);
  row("commit", commit.empty() ? "(none)" : commit + (revision.empty() ? "" : " (--rev " + revision + ")"));
  // A partial index may still say when a run last completed (an update killed midway).
  row("indexed", !partial ? indexed_at
                 : indexed_at.empty() ? std::string(k_partial_index)
                                      : std::string(k_partial_index) + "; last complete run " + indexed_at);
  row("files", std::to_string(stats.files) + " indexed, " + std::to_string(stats.skipped_files) +
                   " skipped, " + util::format_bytes(stats.source_bytes) + " of source");
  row("chunks", std::to_string(stats.chunks));
  row("languages", languages.empty() ? "(none)" : languages);
  std::string vectors = std::to_string(stats.vectors) + " vectors";
  if (stats.pending_vectors > 0) {
    vectors += ", " + std::to_string(stats.pending_vectors) + " pending: `kasava index` sends them again";
  }
  row("model", model == "none" ? "none (lexical search only)"
                               : model + " (" + dims + " dimensions, " + vectors + ")");
  row("history", history.tip.empty() ? std::string("(none)")
                                      : std::to_string(history.commits) + " commits read, " +
                                            std::to_string(history.paths) + " files with a history");
  bool first = true;
  for (const auto& [name, setting] : shown_settings(settings)) {
    if (!setting->is_set()) continue;
    row(first ? "settings" : "", std::string(name) + " = " + setting->value + "  (" +
                                     origin_name(setting->origin) +
                                     (setting->origin == Origin::default_value ? "" : ": " + setting->source) + ")");
    first = false;
  }
  std::string keys;
  for (const auto& [name, set] : api_key_status()) {
    if (!keys.empty()) keys += ", ";
    keys += name + (set ? " set" : " unset");
  }
  row("keys", keys);
  if (stale >= 0) {
    row("stale", stale == 0 ? "up to date" : std::to_string(stale) + " files changed since indexed");
  }
  context.output.out(text);
  return ExitStatus::success;
}

} // namespace kasava::commands
