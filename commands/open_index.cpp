// Opening an index, read-only or for writing, and the model-change policy: see open_index.hpp.
#include "commands/open_index.hpp"

#include <filesystem>

#include "core/embed/model.hpp"
#include "core/index/locate.hpp"
#include "core/remote/embedder.hpp"
#include "core/util/strings.hpp"

namespace kasava::commands {

namespace fs = std::filesystem;

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
  store->update_partitions();
  store->update_term_docs();
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

} // namespace kasava::commands
