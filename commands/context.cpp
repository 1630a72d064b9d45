// The resolve step shared by commands: see context.hpp.
#include "commands/context.hpp"

#include <chrono>
#include <cstdio>
#include <filesystem>

#include "commands/index_lock.hpp"
#include "commands/interrupt.hpp"
#include "core/index/locate.hpp"
#include "core/repo/source.hpp"
#include "core/util/files.hpp"

namespace kasava::commands {

namespace fs = std::filesystem;

Context::Context(GlobalOptions options) : global(std::move(options)), output(global) {
  std::error_code error;
  cwd = fs::current_path(error).string();
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
  const auto store = open_store(target.index_path, store::OpenMode::read_only);
  // An index of a commit (--rev) is not refreshed from the working tree.
  const bool of_revision = !store->meta("revision").value_or("").empty();
  if (auto root = store->meta("root"); root && !of_revision && fs::is_directory(*root)) {
    target.root = *root;
  }
  return target;
}

index::IndexOptions index_options_for(const store::Store& store, std::uint64_t max_file_size) {
  index::IndexOptions options;
  if (max_file_size > 0) {
    options.max_file_size = max_file_size;
  } else if (auto stored = store.meta("max_file_size")) {
    try {
      options.max_file_size = std::stoull(*stored);
    } catch (const std::exception&) {  // unreadable setting: keep the default
    }
  }
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
  auto store = store::Store::open(target.index_path, store::OpenMode::read_write);
  if (!store) {
    if (existed) {
      context.output.warning("not refreshing the index: " + store.error().message);
      return false;
    }
    throw util::Failure(store.error());
  }
  auto source = repo::open_source(*target.root, {});
  if (!source) {
    context.output.warning("not refreshing the index: " + source.error().message);
    return false;
  }
  // An index that exists was excluded when it was made; reading .git/info/exclude again (a
  // second repository open) would only cost time.
  if (!existed) index::exclude_from_git(*target.root);
  auto summary = index::run_index(**source, **store, index_options_for(**store, 0),
                                  progress_callbacks(context));
  context.output.end_progress();
  if (!summary) throw util::Failure(summary.error());
  return true;
}

} // namespace kasava::commands
