// The context of a command: its settings, the embedding model in use, its vector cache.
#include "commands/context.hpp"

#include <filesystem>
#include <mutex>

#include "commands/embedder_setup.hpp"
#include "core/index/locate.hpp"
#include "core/store/store.hpp"

namespace kasava::commands {

namespace fs = std::filesystem;

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
  // `kasava serve` searches on several threads, and a search may warn.
  static std::mutex mutex;
  const std::lock_guard lock(mutex);
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

} // namespace kasava::commands
