// The resolve step shared by commands: see context.hpp.
#include "commands/context.hpp"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>

#include "commands/index_lock.hpp"
#include "commands/interrupt.hpp"
#include "core/embed/model.hpp"
#include "core/index/locate.hpp"
#include "core/remote/embedder.hpp"
#include "core/repo/source.hpp"
#include "core/util/files.hpp"
#include "core/util/strings.hpp"

namespace kasava::commands {

namespace fs = std::filesystem;

namespace {

// " (from KASAVA_MODEL)": where a setting came from, for errors about its value.
std::string from(const Setting& setting) {
  return setting.origin == Origin::default_value ? "" : " (from " + setting.source + ")";
}

// A setting that must hold a number in [low, high]; nullopt when unset.
std::optional<double> number_setting(const Setting& setting, const char* name, double low,
                                     double high) {
  if (!setting.is_set()) return std::nullopt;
  try {
    std::size_t used = 0;
    const double value = std::stod(setting.value, &used);
    if (used == setting.value.size() && value >= low && value <= high) return value;
  } catch (const std::exception&) {  // reported below
  }
  char range[64];
  std::snprintf(range, sizeof range, "a number from %g to %g", low, high);
  throw util::Failure("invalid " + std::string(name) + " '" + setting.value + "'" + from(setting) +
                      ": expected " + range);
}

// "voyage:…" or "openai:…" (with or without an "@dimensions" suffix): a model served remotely.
bool names_remote_model(std::string_view value) {
  return value.starts_with("voyage:") || value.starts_with("openai:");
}

bool is_model_file(const std::string& value) {
  return value.ends_with(".kmodel") || value.find('/') != std::string::npos;
}

// The embedder the model setting names: see Context::embedder().
std::unique_ptr<embed::Embedder> make_embedder(const Settings& settings) {
  const Setting& model = settings.model;
  if (model.value == "builtin") return embed::make_model_embedder(embed::builtin_model());
  if (is_model_file(model.value)) {
    const std::string path = util::absolute_path(model.value);
    if (!fs::is_regular_file(path)) {
      throw util::Failure("loading model '" + model.value + "'" + from(model) +
                          ": no such file (a model is builtin, voyage:<model>, openai:<model> "
                          "or a .kmodel file)");
    }
    return embed::make_model_embedder(embed::load_model_file(path).value_or_throw());
  }
  // An index's id of a remote model carries its output dimension: "voyage:voyage-code-3@512".
  std::string text = model.value;
  std::optional<int> output_dimension;
  if (const auto at = text.rfind('@'); at != std::string::npos && text.find(':') < at) {
    try {
      output_dimension = std::stoi(text.substr(at + 1));
    } catch (const std::exception&) {
      throw util::Failure("model '" + model.value + "'" + from(model) +
                          ": expected a number of dimensions after '@'");
    }
    text.resize(at);
  }
  auto spec = remote::parse_model_spec(text);
  if (!spec) throw util::Failure(spec.error().message + from(model));
  if (!spec->is_remote()) return embed::make_model_embedder(embed::builtin_model());

  remote::RemoteSettings remote_settings;
  remote_settings.base_url = spec->provider == remote::Provider::voyage
                                 ? settings.voyage_base_url.value
                                 : settings.openai_base_url.value;
  remote_settings.api_key = environment(remote::key_variable(spec->provider));
  if (const auto dims = number_setting(settings.dimensions, "dimensions", 1, 65536);
      dims && !output_dimension) {
    output_dimension = static_cast<int>(*dims);
  }
  remote_settings.output_dimension = output_dimension;
  if (settings.output_dtype.is_set()) {
    if (spec->provider != remote::Provider::voyage) {
      throw util::Failure("output_dtype '" + settings.output_dtype.value + "'" +
                          from(settings.output_dtype) + " applies to voyage: models only");
    }
    remote_settings.output_dtype = settings.output_dtype.value;
  }
  if (const auto retries = number_setting(settings.retries, "retries", 0, 20)) {
    remote_settings.retry.max_attempts = 1 + static_cast<int>(*retries);
  }
  if (const auto parallel = number_setting(settings.parallel_requests, "parallel_requests", 1, 64)) {
    remote_settings.max_parallel_requests = static_cast<int>(*parallel);
  }
  if (const auto rate = number_setting(settings.rate_limit, "rate_limit", 0.01, 10000)) {
    remote_settings.requests_per_second = *rate;
  }
  remote_settings.cancel = &interrupt_flag();
  auto made = remote::make_remote_embedder(*spec, std::move(remote_settings));
  if (!made) throw util::Failure(made.error().message + from(model));
  return std::move(made).value();
}

} // namespace

Context::Context(GlobalOptions options) : global(std::move(options)), output(global) {
  std::error_code error;
  cwd = fs::current_path(error).string();
}

void Context::use_repository(std::optional<std::string> root) {
  if (m_embedder || root == m_repository) return;
  m_repository = std::move(root);
  m_settings.reset();  // resolved again, with this repository's config
}

const Settings& Context::settings() {
  if (!m_settings) {
    m_settings = resolve_settings(global.model, m_repository);
    for (const std::string& warning : m_settings->warnings) output.warning(warning);
  }
  return *m_settings;
}

void Context::adopt_index_model(const std::string& index_path, const std::string& root) {
  const auto recorded = store::Store::peek_meta(index_path, "root");
  const bool own = !recorded || index::same_folder(*recorded, root);
  adopt_index_model(store::Store::peek_meta(index_path, "embedding_model").value_or(""),
                    own ? IndexTrust::own : IndexTrust::foreign);
}

void Context::adopt_index_model(const std::string& index_model, IndexTrust trust) {
  if (m_embedder || index_model.empty()) return;
  const Setting& model = settings().model;
  if (model.origin != Origin::default_value) return;
  // Only remote models can be made again from their id: a .kmodel file's id names no file.
  if (!names_remote_model(index_model)) return;
  if (trust == IndexTrust::foreign) {
    m_unadopted_index_model = index_model;
    return;
  }
  m_settings->model = Setting{index_model, Origin::index, "the index"};
}

void Context::warn_once(const std::string& message) {
  if (m_warned.insert(message).second) output.warning(message);
}

bool Context::model_is_remote() {
  return names_remote_model(settings().model.value);
}

store::VectorCache* Context::vector_cache() {
  if (!m_vector_cache_tried) {
    m_vector_cache_tried = true;
    auto opened = store::VectorCache::open(store::VectorCache::default_path());
    if (opened) {
      m_vector_cache = std::move(opened).value();
    } else {
      output.warning(opened.error().message + "; remote vectors are not cached this time");
    }
  }
  return m_vector_cache.get();
}

embed::Embedder& Context::embedder() {
  if (!m_embedder) m_embedder = make_embedder(settings());
  return *m_embedder;
}

embed::Embedder* embedder_for_query(Context& context, const store::Store& store,
                                    search::Mode mode) {
  // A model chosen by the user must be sound even when this query does not need it.
  const Origin origin = context.settings().model.origin;
  if (origin != Origin::default_value && origin != Origin::index && !context.model_is_remote()) {
    context.embedder();
  }
  const std::string stamped = index::index_model(store);
  if (mode == search::Mode::lexical || stamped.empty()) return nullptr;
  if (origin == Origin::default_value && stamped == context.unadopted_index_model()) {
    const std::string why = "index '" + store.path() + "' was built with model '" +
                            util::escape_controls(stamped) +
                            "' and does not belong to this repository";
    if (mode == search::Mode::semantic) {
      throw util::Failure(why + ": choose its model (--model or KASAVA_MODEL) to search it by "
                                "meaning, or use --mode lexical");
    }
    context.warn_once(why + ": searching by words only (choose its model with --model or "
                            "KASAVA_MODEL to search by meaning)");
    return nullptr;
  }
  return &context.embedder();
}

namespace {

// The hybrid blend's weight for queries in words: KASAVA_HYBRID_WEIGHT, a number in [0, 1],
// is a hidden setting for tuning runs (bench/quality.py --weights); anything else is ignored.
double prose_weight() {
  const std::string text = environment("KASAVA_HYBRID_WEIGHT");
  if (text.empty()) return search::k_hybrid_weight;
  char* end = nullptr;
  const double value = std::strtod(text.c_str(), &end);
  return *end == '\0' && value >= 0.0 && value <= 1.0 ? value : search::k_hybrid_weight;
}

} // namespace

util::Result<std::vector<search::SearchHit>> run_search(Context& context, const store::Store& store,
                                                        search::SearchOptions options) {
  options.prose_weight = prose_weight();
  embed::Embedder* embedder = embedder_for_query(context, store, options.mode);
  const store::Store::ReadSnapshot snapshot(store);
  auto found = search::search(store, options, embedder);
  if (!found && options.mode == search::Mode::hybrid && embedder != nullptr &&
      embedder->locality() == embed::Locality::remote && !interrupted()) {
    context.output.warning("searching by meaning failed, so results are by words only: " +
                           found.error().message);
    options.mode = search::Mode::lexical;
    found = search::search(store, options, nullptr);
  }
  return found;
}

std::string model_mismatch_message(const std::string& index_path, const std::string& index_model,
                                   const std::string& model_in_use) {
  return "index '" + index_path + "' was built with model '" + index_model +
         "', but the model in use is '" + model_in_use +
         "': rebuild it with `kasava index --rebuild` (or pass --model with the model it was "
         "built with)";
}

namespace {

// Whether `path` lies directly in a folder named `.kasava`: kasava's own place (`kasava
// index` makes it), where a file that is no index is a damaged one, which a rebuild may
// replace.
bool in_kasava_folder(const std::string& path) {
  return fs::path(path).parent_path().filename() == ".kasava";
}

// Throws, saying how to remove it by hand, unless what is at `path` (if anything) is
// kasava's to replace: a kasava index of any version, or a file in a `.kasava` folder.
void check_replaceable(const std::string& path) {
  std::error_code error;
  const auto status = fs::status(path, error);
  if (!fs::exists(status)) return;
  const std::string quoted = "'" + path + "'";
  if (fs::is_directory(status)) {
    throw util::Failure("rebuilding index " + quoted +
                        ": it is a directory, not a kasava index; if it is not needed, remove "
                        "it by hand (rm -r " + quoted + ") and run `kasava index` again");
  }
  if (fs::is_regular_file(status) &&
      (store::Store::schema_version(path) || in_kasava_folder(path) ||
       store::Store::open(path, store::OpenMode::read_only))) {
    return;
  }
  throw util::Failure("rebuilding index " + quoted +
                      ": the file is not a kasava index; if it is not needed, remove it by "
                      "hand (rm " + quoted + ") and run `kasava index` again");
}

// Starts a rebuild of the index at `path` beside it (see open_index_for_writing).
std::unique_ptr<store::Store> open_rebuild(const std::string& path) {
  check_replaceable(path);
  if (!fs::exists(path)) return open_store(path, store::OpenMode::read_write);
  discard_unfinished_rebuild(path);
  return open_store(rebuild_path(path), store::OpenMode::read_write);
}

} // namespace

std::string rebuild_path(const std::string& path) {
  return path + ".rebuild";
}

void discard_unfinished_rebuild(const std::string& path) {
  const std::string beside = rebuild_path(path);
  std::error_code error;
  if (fs::exists(beside, error)) store::Store::remove(beside).value_or_throw();
}

bool index_is_partial(const store::Store& store) {
  // Every complete run writes indexed_at in its last transaction: a first run killed before
  // has none, whether or not it wrote any file.
  return !store.marked_complete() || !store.meta("indexed_at");
}

void finish_index_run(std::unique_ptr<store::Store> store, const std::string& path) {
  store->mark_complete();
  if (store->path() == path) return;
  const std::string built = store->path();
  store.reset();
  store::Store::swap_in(built, path).value_or_throw();
}

std::unique_ptr<store::Store> open_index_for_writing(Context& context, const std::string& path,
                                                     const std::string& root,
                                                     ModelChange on_model_change,
                                                     Existing existing) {
  // An index of an older kasava is a cache of another shape: start over. (Asked only when
  // opening fails: the refresh before every `ask` must not pay for a second open.)
  std::unique_ptr<store::Store> store;
  if (existing == Existing::rebuild) {
    store = open_rebuild(path);
  } else if (auto opened = store::Store::open(path, store::OpenMode::read_write)) {
    store = std::move(opened).value();
  } else if (const auto version = store::Store::schema_version(path);
             version && *version < store::k_schema_version) {
    context.output.warning("index '" + path + "' was built by an older kasava (schema " +
                           std::to_string(*version) + ", now " +
                           std::to_string(store::k_schema_version) + "); rebuilding it");
    store = open_rebuild(path);
  } else {
    store = open_store(path, store::OpenMode::read_write);  // its error, with the hint
  }
  // A foreign index (a CI artifact, one committed to the repository): its rows are not this
  // folder's files, even where their blob ids match, so nothing of it is kept.
  if (const auto recorded = store->meta("root"); recorded && !index::same_folder(*recorded, root)) {
    context.output.warning("index '" + path + "' was built from another folder ('" +
                           util::escape_controls(*recorded) + "'); rebuilding it from '" + root +
                           "'");
    store.reset();
    store = open_rebuild(path);
  }
  const std::string model = context.embedder().model_id();
  const std::string stamped = index::index_model(*store);
  if (!stamped.empty() && stamped != model) {
    // No model was chosen, and the index has an older kasava's built-in model (same name,
    // other content): re-embedding with this kasava's is what the refresh is for (local, no
    // key, seconds per thousand files). A model file of another name was someone's choice.
    const bool upgraded_builtin =
        context.settings().model.origin == Origin::default_value &&
        stamped.starts_with("builtin:" + embed::builtin_model()->name() + "-");
    if (on_model_change == ModelChange::fail && !upgraded_builtin) {
      throw ModelMismatch(model_mismatch_message(path, stamped, model));
    }
    context.output.warning("index '" + path + "' was built with model '" + stamped +
                           "'; re-embedding everything with model '" + model + "'");
    store.reset();
    store = open_rebuild(path);
  }
  // A remote model of unknown vector length (most OpenAI-compatible servers) says it once,
  // before the index is stamped with it: one short request, only for a new index.
  if (index::index_model(*store).empty()) {
    if (auto* remote_embedder = dynamic_cast<remote::RemoteEmbedder*>(&context.embedder());
        remote_embedder != nullptr && remote_embedder->dimensions() <= 0) {
      auto dims = remote_embedder->probe_dimensions();
      if (!dims) throw util::Failure("asking model '" + model + "' for its dimensions: " + dims.error().message);
    }
  }
  return store;
}

QueryTarget resolve_query_target(Context& context) {
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
  return target;
}

std::uint64_t max_file_size_for(const store::Store& store) {
  std::uint64_t max_file_size = index::IndexOptions{}.max_file_size;
  // Only a plain positive number: std::stoull would take "-1" (as 2^64 - 1), " 12" or "12kB".
  const auto stored = store.meta("max_file_size");
  if (!stored || stored->empty() || stored->size() > 19) return max_file_size;
  std::uint64_t value = 0;
  for (const char c : *stored) {
    if (c < '0' || c > '9') return max_file_size;
    value = value * 10 + static_cast<std::uint64_t>(c - '0');
  }
  return value > 0 ? value : max_file_size;
}

index::IndexOptions index_options_for(Context& context, const store::Store& store,
                                      std::uint64_t max_file_size) {
  index::IndexOptions options;
  options.max_file_size = max_file_size > 0 ? max_file_size : max_file_size_for(store);
  options.embedder = &context.embedder();
  if (options.embedder->locality() == embed::Locality::remote) {
    options.vector_cache = context.vector_cache();
  }
  return options;
}

std::unique_ptr<store::Store> open_store(const std::string& path, store::OpenMode mode) {
  auto store = store::Store::open(path, mode);
  if (store) return std::move(store).value();
  std::string message = store.error().message;
  if (message.find("not a database") != std::string::npos ||
      message.find("not a kasava index") != std::string::npos) {
    // In kasava's own folder it is a damaged index; elsewhere it may be anybody's file.
    message += in_kasava_folder(path)
                   ? " (start over with `kasava index --rebuild`)"
                   : " (if it is not needed, remove it by hand (rm '" + path +
                         "') and run `kasava index`, or choose another --index)";
  }
  throw util::Failure(message);
}

index::IndexCallbacks progress_callbacks(Context& context) {
  index::IndexCallbacks callbacks;
  const auto started = std::chrono::steady_clock::now();
  auto last_draw = started - std::chrono::seconds(1);
  callbacks.progress = [&context, started, last_draw](const index::IndexProgress& p) mutable {
    if (!context.output.shows_progress()) return;
    const auto now = std::chrono::steady_clock::now();
    if (now - last_draw < std::chrono::milliseconds(100) && p.files_done < p.files_total) return;
    last_draw = now;
    const double elapsed = std::chrono::duration<double>(now - started).count();
    const double rate = elapsed > 0 ? static_cast<double>(p.files_done) / elapsed : 0.0;
    char line[160];
    if (rate > 0 && p.files_done < p.files_total) {
      const double eta = static_cast<double>(p.files_total - p.files_done) / rate;
      std::snprintf(line, sizeof line, "indexing: %zu/%zu files, %zu chunks, %.0f files/s, ETA %.0fs",
                    p.files_done, p.files_total, p.chunks, rate, eta);
    } else {
      std::snprintf(line, sizeof line, "indexing: %zu/%zu files, %zu chunks", p.files_done,
                    p.files_total, p.chunks);
    }
    context.output.progress(line);
  };
  callbacks.warning = [&context](const std::string& message) { context.output.warning(message); };
  callbacks.cancelled = [] { return interrupted(); };
  return callbacks;
}

std::string format_summary(const index::IndexSummary& summary) {
  char line[256];
  std::snprintf(line, sizeof line, "%zu files indexed (%zu parsed, %zu unchanged, %zu removed), "
                "%zu chunks, %zu skipped, %.2fs",
                summary.indexed, summary.parsed, summary.unchanged, summary.removed, summary.chunks,
                summary.skipped_total(), summary.seconds);
  std::string text = line;
  if (!summary.skipped.empty()) {
    text += " (";
    bool first = true;
    for (const auto& [reason, count] : summary.skipped) {
      if (!first) text += ", ";
      first = false;
      text += std::to_string(count) + " " + reason;
    }
    text += ")";
  }
  return text;
}

bool refresh_index(Context& context, const QueryTarget& target) {
  if (!target.root) return true;
  // This runs before every `ask`: everything here is on its latency (see bench/README.md).
  const bool existed = fs::exists(target.index_path);
  // Another user's index, or a read-only artifact, is searched as it is: nothing of ours
  // (lock file included) is left beside it.
  if (existed && !store::Store::may_write(target.index_path)) {
    context.output.warning("not refreshing the index: '" + target.index_path +
                           "' cannot be written here");
    return false;
  }
  // While a `kasava index` writes, search what it has committed so far instead of waiting
  // for it (and then parsing the same files again).
  std::optional<IndexLock> lock;
  try {
    lock.emplace(target.index_path, LockWait::no_wait);
  } catch (const util::Failure& failure) {
    if (!existed) throw;
    context.output.warning(std::string("not refreshing the index: ") + failure.what());
    return false;
  }
  if (!lock->held()) {
    if (!existed) {
      lock.reset();
      lock.emplace(target.index_path, LockWait::wait);  // nothing to search yet: wait for it
    } else {
      return true;
    }
  }
  context.embedder();  // a bad --model is an error of its own, not a reason to skip the refresh
  std::unique_ptr<store::Store> store;
  try {
    store = open_index_for_writing(context, target.index_path, *target.root, ModelChange::fail);
  } catch (const ModelMismatch&) {
    throw;  // the user's to rebuild: the message says how
  } catch (const util::Failure& failure) {
    // An index that cannot be written (a read-only artifact) can still be searched.
    if (!existed) throw;
    context.output.warning(std::string("not refreshing the index: ") + failure.what());
    return false;
  }
  auto source = repo::open_source(*target.root, {});
  if (!source) {
    context.output.warning("not refreshing the index: " + source.error().message);
    return false;
  }
  // An index that exists was excluded when it was made; reading .git/info/exclude again (a
  // second repository open) would only cost time.
  if (!existed) index::exclude_from_git(*target.root);
  auto summary = index::run_index(**source, *store, index_options_for(context, *store, 0),
                                  progress_callbacks(context));
  context.output.end_progress();
  if (!summary) throw util::Failure(summary.error());
  finish_index_run(std::move(store), target.index_path);
  return true;
}

} // namespace kasava::commands
