// The resolve step shared by commands: see context.hpp.
#include "commands/context.hpp"

#include <chrono>
#include <cstdio>
#include <filesystem>

#include "commands/index_lock.hpp"
#include "commands/interrupt.hpp"
#include "core/embed/model.hpp"
#include "core/index/locate.hpp"
#include "core/repo/source.hpp"
#include "core/util/files.hpp"

namespace kasava::commands {

namespace fs = std::filesystem;

Context::Context(GlobalOptions options) : global(std::move(options)), output(global) {
  std::error_code error;
  cwd = fs::current_path(error).string();
}

embed::Embedder& Context::embedder() {
  if (!m_embedder) {
    if (global.model_path.empty()) {
      m_embedder = embed::make_model_embedder(embed::builtin_model());
    } else {
      const std::string path = util::absolute_path(global.model_path);
      if (!fs::is_regular_file(path)) {
        throw util::Failure("loading model '" + global.model_path +
                            "': no such file (--model takes a .kmodel file)");
      }
      m_embedder = embed::make_model_embedder(embed::load_model_file(path).value_or_throw());
    }
  }
  return *m_embedder;
}

embed::Embedder* embedder_for_query(Context& context, const store::Store& store, bool lexical) {
  if (!context.global.model_path.empty()) context.embedder();  // a bad --model is always an error
  if (lexical || index::index_model(store).empty()) return nullptr;
  return &context.embedder();
}

std::string model_mismatch_message(const std::string& index_path, const std::string& index_model,
                                   const std::string& model_in_use) {
  return "index '" + index_path + "' was built with model '" + index_model +
         "', but the model in use is '" + model_in_use +
         "': rebuild it with `kasava index --rebuild` (or pass --model with the model it was "
         "built with)";
}

std::unique_ptr<store::Store> open_index_for_writing(Context& context, const std::string& path,
                                                     ModelChange on_model_change) {
  // An index of an older kasava is a cache of another shape: start over. (Asked only when
  // opening fails: the refresh before every `ask` must not pay for a second open.)
  std::unique_ptr<store::Store> store;
  if (auto opened = store::Store::open(path, store::OpenMode::read_write)) {
    store = std::move(opened).value();
  } else if (const auto version = store::Store::schema_version(path);
             version && *version < store::k_schema_version) {
    context.output.warning("index '" + path + "' was built by an older kasava (schema " +
                           std::to_string(*version) + ", now " +
                           std::to_string(store::k_schema_version) + "); rebuilding it");
    store::Store::remove(path).value_or_throw();
    store = open_store(path, store::OpenMode::read_write);
  } else {
    store = open_store(path, store::OpenMode::read_write);  // its error, with the hint
  }
  const std::string model = context.embedder().model_id();
  const std::string stamped = index::index_model(*store);
  if (!stamped.empty() && stamped != model) {
    if (on_model_change == ModelChange::fail) {
      throw ModelMismatch(model_mismatch_message(path, stamped, model));
    }
    context.output.warning("index '" + path + "' was built with model '" + stamped +
                           "'; re-embedding everything with model '" + model + "'");
    store.reset();
    store::Store::remove(path).value_or_throw();
    store = open_store(path, store::OpenMode::read_write);
  }
  return store;
}

QueryTarget resolve_query_target(const Context& context) {
  QueryTarget target;
  if (!context.global.index_path.empty()) {
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
    return target;
  } else {
    throw util::Failure("no index found in '" + context.cwd +
                        "' or its parents: run `kasava index` first");
  }
  // An existing index knows where it was built from; refresh from there if it still exists.
  std::optional<std::string> root;
  std::optional<std::string> revision;
  if (auto store = store::Store::open(target.index_path, store::OpenMode::read_only)) {
    root = (*store)->meta("root");
    revision = (*store)->meta("revision");
  } else if (const auto version = store::Store::schema_version(target.index_path);
             version && *version < store::k_schema_version) {
    // An older kasava's index: its meta table still says where it came from, so the refresh
    // can rebuild it there.
    root = store::Store::peek_meta(target.index_path, "root");
    revision = store::Store::peek_meta(target.index_path, "revision");
  } else {
    open_store(target.index_path, store::OpenMode::read_only);  // throws its error, with the hint
  }
  // An index of a commit (--rev) is not refreshed from the working tree.
  const bool of_revision = !revision.value_or("").empty();
  if (root && !of_revision && fs::is_directory(*root)) target.root = *root;
  return target;
}

std::uint64_t max_file_size_for(const store::Store& store) {
  std::uint64_t max_file_size = index::IndexOptions{}.max_file_size;
  if (auto stored = store.meta("max_file_size")) {
    try {
      max_file_size = std::stoull(*stored);
    } catch (const std::exception&) {  // unreadable setting: keep the default
    }
  }
  return max_file_size;
}

index::IndexOptions index_options_for(Context& context, const store::Store& store,
                                      std::uint64_t max_file_size) {
  index::IndexOptions options;
  options.max_file_size = max_file_size > 0 ? max_file_size : max_file_size_for(store);
  options.embedder = &context.embedder();
  return options;
}

std::unique_ptr<store::Store> open_store(const std::string& path, store::OpenMode mode) {
  auto store = store::Store::open(path, mode);
  if (store) return std::move(store).value();
  std::string message = store.error().message;
  if (message.find("not a database") != std::string::npos ||
      message.find("not a kasava index") != std::string::npos) {
    message += " (start over with `kasava index --rebuild`)";
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
    store = open_index_for_writing(context, target.index_path, ModelChange::fail);
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
  return true;
}

} // namespace kasava::commands
