// Porter stemming through libstemmer: see stem.hpp.
#include "core/util/stem.hpp"

#include <libstemmer.h>

#include <memory>

namespace kasava::util {
namespace {

// FTS5's porter tokenizer leaves these lengths alone (fts5_tokenize.c: 3 to 64 bytes).
constexpr std::size_t k_shortest_stemmed = 3;
constexpr std::size_t k_longest_stemmed = 64;

struct StemmerDeleter {
  void operator()(sb_stemmer* stemmer) const { sb_stemmer_delete(stemmer); }
};

// A stemmer holds its working buffer: one per thread.
sb_stemmer* thread_stemmer() {
  thread_local std::unique_ptr<sb_stemmer, StemmerDeleter> stemmer(sb_stemmer_new("porter", "UTF_8"));
  return stemmer.get();
}

} // namespace

std::string porter_stem(std::string_view token) {
  if (token.size() < k_shortest_stemmed || token.size() > k_longest_stemmed) return std::string(token);
  sb_stemmer* stemmer = thread_stemmer();
  if (stemmer == nullptr) return std::string(token);
  const sb_symbol* stemmed =
      sb_stemmer_stem(stemmer, reinterpret_cast<const sb_symbol*>(token.data()), static_cast<int>(token.size()));
  if (stemmed == nullptr) return std::string(token);
  return std::string(reinterpret_cast<const char*>(stemmed),
                     static_cast<std::size_t>(sb_stemmer_length(stemmer)));
}

const std::string& StemCache::stem(std::string_view token) {
  const auto found = m_stems.find(token);
  if (found != m_stems.end()) return found->second;
  trim();
  return m_stems.emplace(std::string(token), porter_stem(token)).first->second;
}

const std::string* StemCache::kept_stem(std::string_view token) {
  auto found = m_stems.find(token);
  if (found == m_stems.end()) found = m_stems.emplace(std::string(token), porter_stem(token)).first;
  return &found->second;
}

void StemCache::trim() {
  if (m_stems.size() >= k_most_tokens) m_stems.clear();
}

} // namespace kasava::util
