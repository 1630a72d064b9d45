// The local index as a search source: see source.hpp.
#include "core/search/source.hpp"

#include "core/util/glob.hpp"

namespace kasava::search {

bool FileFilterSpec::accepts(std::string_view path, std::string_view file_language) const {
  return (language.empty() || file_language == language) &&
         (path_glob.empty() || util::glob_match(path_glob, path));
}

std::string LocalSource::model_stamp() const { return m_store.meta("embedding_model").value_or(""); }

std::string LocalSource::no_vectors_message() const {
  return "index '" + m_store.path() +
         "' has no vectors (it was built without a model): rebuild it with "
         "`kasava index --rebuild`, or use --mode lexical";
}

std::string LocalSource::model_mismatch_message(const std::string& stamp, const std::string& model) const {
  return "index '" + m_store.path() + "' was built with model '" + stamp + "', but the model in use is '" +
         model +
         "': rebuild it with `kasava index --rebuild` (or pass --model with the "
         "model it was built with)";
}

util::Result<std::vector<store::LexicalHit>> LocalSource::lexical_search(const Query& query,
                                                                         const store::FieldWeights& weights,
                                                                         int limit) const {
  return m_store.lexical_search(query.match_expression, weights, limit);
}

std::vector<store::CodeHit> LocalSource::nearest_codes(std::span<const std::uint8_t> code, int limit,
                                                       const FileFilterSpec& filter, store::CodeScan scan) const {
  if (filter.empty()) return m_store.nearest_codes(code, limit, {}, scan);
  return m_store.nearest_codes(code, limit, [&filter](std::string_view path, std::string_view language) {
    return filter.accepts(path, language);
  });
}

std::vector<store::StoredVector> LocalSource::vectors_by_id(const std::vector<std::int64_t>& ids, int dims) const {
  return m_store.vectors_by_id(ids, dims);
}

std::vector<store::ChunkRecord> LocalSource::chunks_by_id(const std::vector<std::int64_t>& ids,
                                                          store::Store::Detail detail) const {
  return m_store.chunks_by_id(ids, detail);
}

util::Result<std::vector<store::HistoryHit>> LocalSource::history_search(const Query& query, int limit) const {
  return m_store.history_search(query.match_expression, limit);
}

} // namespace kasava::search
