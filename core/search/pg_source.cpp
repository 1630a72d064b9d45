// The shared store as a search source: see pg_source.hpp.
//
// Lexical: PostgreSQL matches the query's Porter-stemmed terms against the chunks' stemmed
// terms (GIN) within the selected refs' blobs and sends the best `limit` by a BM25 of their
// fields; this file scores each (blob, ordinal, path) exactly as FTS5 scores a local chunk:
// bm25() below with the same k1, b and IDF floor, the same column weights (symbol and parent:
// symbol; signature and doc: doc; body: body) and the path's tokens as FTS5's path column,
// document frequencies and the average length from the store's statistics (term_stats,
// model_stats), whose chunks are the unique chunks of all repositories. A chunk whose only
// match is in its path is not found (the store's terms have no path); a local index finds it.
// History: BM25 of the query's stemmed terms over each (ref, path)'s commit subjects, one
// document each, the files of the selected refs as the collection; PostgreSQL sends the best
// `limit` with their counts, and bm25() below scores them.
#include "core/search/pg_source.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <set>
#include <thread>
#include <unordered_map>

#include "core/store/vectors.hpp"
#include "core/util/stem.hpp"
#include "core/util/strings.hpp"
#include "core/util/tokenize.hpp"

namespace kasava::search {
namespace {

constexpr double k_bm25_k1 = 1.2;
constexpr double k_bm25_b = 0.75;
constexpr double k_idf_floor = 1e-6;
// A path-filtered Hamming scan reads this many times more rows, since PostgreSQL cannot
// apply the glob.
constexpr int k_filtered_scan_factor = 4;

// The stemmed tokens of a text, as FTS5's `porter kasava` emits them; each token stemmed
// once per search, since candidates' paths repeat their words.
std::vector<std::string> stemmed_tokens(std::string_view text, util::StemCache& stems) {
  std::vector<std::string> tokens;
  util::for_each_code_token(text, [&](std::string_view token, std::size_t, std::size_t) {
    tokens.push_back(stems.stem(token));
  });
  return tokens;
}

// The query's terms stemmed, in order, repeats kept (each is one FTS5 phrase).
std::vector<std::string> stemmed_terms(const Query& query) {
  std::vector<std::string> terms;
  for (const std::string& term : query.terms) terms.push_back(util::porter_stem(term));
  return terms;
}

std::vector<std::string> unique_of(const std::vector<std::string>& terms) {
  std::vector<std::string> unique;
  for (const std::string& term : terms) {
    if (std::find(unique.begin(), unique.end(), term) == unique.end()) unique.push_back(term);
  }
  return unique;
}

std::string file_key_of(std::int64_t ref_id, const std::string& path) { return std::to_string(ref_id) + '\n' + path; }

} // namespace

double bm25(const std::vector<double>& frequencies, const std::vector<std::int64_t>& document_frequencies,
            double length, double documents, double average_length) {
  double score = 0.0;
  for (std::size_t i = 0; i < frequencies.size() && i < document_frequencies.size(); ++i) {
    const double hits = static_cast<double>(document_frequencies[i]);
    double idf = std::log((documents - hits + 0.5) / (hits + 0.5));
    if (!(idf > 0.0)) idf = k_idf_floor;
    const double f = frequencies[i];
    score += idf * ((f * (k_bm25_k1 + 1.0)) /
                    (f + k_bm25_k1 * (1 - k_bm25_b + k_bm25_b * length / average_length)));
  }
  return score;
}

struct StoreSource::State {
  pgstore::Reader& reader;
  std::vector<pgstore::RefInfo> refs;
  std::vector<std::int64_t> ref_ids;
  std::unordered_map<std::int64_t, std::size_t> ref_order;  // ref id → position in refs
  std::int16_t model_id = 0;

  // A candidate: a chunk of a blob at a path, and the refs holding it there (refs' order).
  struct Entry {
    pgstore::ChunkKey key;
    std::string path;
    std::string language;
    std::vector<std::int64_t> holders;
  };
  std::vector<Entry> entries;  // id = position + 1
  std::map<std::tuple<std::string, int, std::string>, std::int64_t> ids;
  std::map<std::string, std::vector<pgstore::Holder>> holders;  // by blob, refs' order
  util::StemCache stems;

  // The Hamming scan started on another reader (start_nearest_codes), then the history
  // search if one was asked for first: their arguments, and their results once `scan` has
  // joined, or none when they failed.
  OpenReader another;
  struct HistoryAsked {
    std::vector<std::string> terms;
    int limit = 0;
    std::int64_t files = 0;  // the refs' histories
  };
  std::optional<HistoryAsked> history_asked;  // by start_history_search, for the next start
  struct Started {
    std::string code;
    int limit = 0;
    std::string language;
    double share = 0.0;
    std::optional<HistoryAsked> history_asked;
    std::optional<std::vector<pgstore::CodeMatch>> matches;
    // The matches' holders and rows, which the semantic side reads next: read on the other
    // reader too, beside the lexical statement rather than after it.
    std::set<std::string> blobs;
    std::vector<pgstore::Holder> holders;
    std::vector<pgstore::ChunkRow> rows;
    std::optional<pgstore::HistoryMatches> history;
    std::thread scan;
  };
  std::unique_ptr<Started> started;

  // The refs' files with a history: what BM25 of the histories counts as its collection.
  std::int64_t history_files() const {
    std::int64_t files = 0;
    for (const pgstore::RefInfo& ref : refs) files += ref.history_files;
    return files;
  }

  // The started searches, finished: their results may be taken.
  Started* finished() {
    if (started && started->scan.joinable()) started->scan.join();
    return started.get();
  }

  State(pgstore::Reader& r, std::vector<pgstore::RefInfo> chosen, OpenReader other)
      : reader(r), refs(std::move(chosen)), another(std::move(other)) {
    for (std::size_t i = 0; i < refs.size(); ++i) {
      ref_ids.push_back(refs[i].id);
      ref_order.emplace(refs[i].id, i);
    }
    if (!refs.empty()) model_id = refs.front().model_id;
  }

  // The chunks' fields and vectors read so far in this search: hybrid search asks for the
  // vectors of the semantic candidates and then the fields of all, the fields of the lexical
  // ones and then their vectors, and last the fields of the results; each chunk is read once.
  std::map<pgstore::ChunkKey, pgstore::ChunkRow> rows;

  // Reads the rows of the keys not yet read, in one statement; a key the store lacks (a
  // chunk removed meanwhile) stays absent.
  void load_rows(const std::vector<pgstore::ChunkKey>& keys) {
    std::vector<pgstore::ChunkKey> wanted;
    for (const auto& key : keys) {
      if (rows.count(key) == 0) wanted.push_back(key);
    }
    if (wanted.empty()) return;
    for (auto& row : reader.chunks(model_id, wanted)) {
      const pgstore::ChunkKey key = row.key;
      rows.insert_or_assign(key, std::move(row));
    }
  }

  // Reads the holders of the blobs not yet known, in one query.
  void load_holders(const std::vector<pgstore::ChunkKey>& keys) {
    std::set<std::string> wanted;
    for (const auto& key : keys) {
      if (holders.count(key.blob) == 0) wanted.insert(key.blob);
    }
    if (wanted.empty()) return;
    keep_holders(wanted, reader.holders(ref_ids, {wanted.begin(), wanted.end()}));
  }

  // Keeps the holders `found` of the blobs `asked` (none found: none among the refs) that
  // are not yet known, each blob's in the refs' order.
  void keep_holders(const std::set<std::string>& asked, std::vector<pgstore::Holder> found) {
    std::set<std::string> wanted;
    for (const std::string& blob : asked) {
      if (holders.try_emplace(blob).second) wanted.insert(blob);
    }
    for (auto& holder : found) {
      if (wanted.count(holder.blob) != 0) holders[holder.blob].push_back(std::move(holder));
    }
    for (const std::string& blob : wanted) {
      auto& list = holders[blob];
      std::stable_sort(list.begin(), list.end(), [&](const pgstore::Holder& a, const pgstore::Holder& b) {
        return ref_order.at(a.ref_id) < ref_order.at(b.ref_id);
      });
    }
  }

  // The candidates of a chunk: one per path its blob has in the selected refs.
  std::vector<std::int64_t> expand(const pgstore::ChunkKey& key) {
    std::vector<std::int64_t> found;
    for (const pgstore::Holder& holder : holders[key.blob]) {
      auto [at, added] = ids.try_emplace({key.blob, key.ordinal, holder.path},
                                         static_cast<std::int64_t>(entries.size()) + 1);
      if (added) entries.push_back(Entry{key, holder.path, holder.language, {}});
      Entry& entry = entries[static_cast<std::size_t>(at->second - 1)];
      if (std::find(entry.holders.begin(), entry.holders.end(), holder.ref_id) == entry.holders.end()) {
        entry.holders.push_back(holder.ref_id);
      }
      if (std::find(found.begin(), found.end(), at->second) == found.end()) found.push_back(at->second);
    }
    return found;
  }

  const Entry* entry(std::int64_t id) const {
    if (id < 1 || id > static_cast<std::int64_t>(entries.size())) return nullptr;
    return &entries[static_cast<std::size_t>(id - 1)];
  }
};

StoreSource::StoreSource(pgstore::Reader& reader, std::vector<pgstore::RefInfo> refs, OpenReader another)
    : m_state(std::make_unique<State>(reader, std::move(refs), std::move(another))) {}

StoreSource::~StoreSource() {
  if (m_state->started && m_state->started->scan.joinable()) m_state->started->scan.join();
}

std::string StoreSource::model_stamp() const {
  return m_state->refs.empty() ? std::string() : m_state->refs.front().model;
}

std::string StoreSource::no_vectors_message() const {
  return "store at " + m_state->reader.where() +
         ": the refs asked were published without a model: publish them with one, or use --mode lexical";
}

std::string StoreSource::model_mismatch_message(const std::string& stamp, const std::string& model) const {
  return "store at " + m_state->reader.where() + ": the refs asked were published with model '" + stamp +
         "', but the model in use is '" + model +
         "': publish them again with this model (or pass --model with the model they were published with)";
}

util::Result<std::vector<store::LexicalHit>> StoreSource::lexical_search(const Query& query,
                                                                         const store::FieldWeights& weights,
                                                                         int limit) const {
  State& s = *m_state;
  const std::vector<std::string> phrases = stemmed_terms(query);
  const std::vector<std::string> unique = unique_of(phrases);
  if (unique.empty() || s.model_id == 0) return std::vector<store::LexicalHit>{};
  const pgstore::TermStatistics statistics = s.reader.term_statistics(s.model_id, s.ref_ids, unique);
  auto matches = s.reader.match_terms(s.model_id, s.ref_ids, unique, statistics,
                                      {weights.symbol, weights.doc, weights.doc, weights.body}, limit);
  if (matches.empty()) return std::vector<store::LexicalHit>{};
  for (auto& match : matches) s.rows.try_emplace(match.key, std::move(match.row));
  std::vector<std::int64_t> frequencies_of_phrases;
  for (const std::string& phrase : phrases) {
    const auto at = std::find(unique.begin(), unique.end(), phrase) - unique.begin();
    frequencies_of_phrases.push_back(static_cast<std::size_t>(at) < statistics.document_frequency.size()
                                         ? statistics.document_frequency[static_cast<std::size_t>(at)]
                                         : 0);
  }
  std::vector<pgstore::ChunkKey> keys;
  for (const auto& match : matches) keys.push_back(match.key);
  s.load_holders(keys);

  // Every candidate with its path's tokens: FTS5's path column.
  struct Scored {
    std::int64_t id;
    const pgstore::TermMatch* match;
    std::vector<std::string> path_tokens;
  };
  std::vector<Scored> scored;
  double path_tokens = 0.0;
  for (const auto& match : matches) {
    for (const std::int64_t id : s.expand(match.key)) {
      scored.push_back(Scored{
          id, &match, stemmed_tokens(s.entries[static_cast<std::size_t>(id - 1)].path, s.stems)});
      path_tokens += static_cast<double>(scored.back().path_tokens.size());
    }
  }
  if (scored.empty()) return std::vector<store::LexicalHit>{};
  const double documents = static_cast<double>(std::max<std::int64_t>(statistics.chunks, 1));
  const double average_length =
      std::max(1.0, static_cast<double>(statistics.tokens) / documents + path_tokens / static_cast<double>(scored.size()));
  std::vector<store::LexicalHit> hits;
  for (const Scored& candidate : scored) {
    std::vector<double> frequencies;
    for (const std::string& phrase : phrases) {
      double f = 0.0;
      for (const auto& [term, counts] : candidate.match->terms) {
        if (term == phrase) {
          f += counts[0] * weights.symbol + (counts[1] + counts[2]) * weights.doc + counts[3] * weights.body;
        }
      }
      f += static_cast<double>(std::count(candidate.path_tokens.begin(), candidate.path_tokens.end(), phrase)) *
           weights.path;
      frequencies.push_back(f);
    }
    const double length = candidate.match->length + static_cast<double>(candidate.path_tokens.size());
    const double score = bm25(frequencies, frequencies_of_phrases, length, documents, average_length);
    if (score > 0.0) hits.push_back(store::LexicalHit{candidate.id, score});
  }
  std::sort(hits.begin(), hits.end(), [](const store::LexicalHit& a, const store::LexicalHit& b) {
    return a.score != b.score ? a.score > b.score : a.chunk_id < b.chunk_id;
  });
  if (hits.size() > static_cast<std::size_t>(limit)) hits.resize(static_cast<std::size_t>(limit));
  return hits;
}

namespace {

// What Reader::nearest_codes is asked for a Source::nearest_codes call.
double probe_share(store::CodeScan reads) {
  return reads == store::CodeScan::every_code ? 1.0 : pgstore::Reader::k_probe_share;
}
int codes_asked(int limit, const FileFilterSpec& filter) {
  return filter.path_glob.empty() ? limit : limit * k_filtered_scan_factor;
}

} // namespace

void StoreSource::start_nearest_codes(std::span<const std::uint8_t> code, int limit, const FileFilterSpec& filter,
                                      store::CodeScan reads) const {
  State& s = *m_state;
  if (!s.another || s.started || s.model_id == 0) return;
  auto started = std::make_unique<State::Started>();
  started->code.assign(reinterpret_cast<const char*>(code.data()), code.size());
  started->limit = codes_asked(limit, filter);
  started->language = filter.language;
  started->share = probe_share(reads);
  started->history_asked = std::move(s.history_asked);
  s.history_asked.reset();
  State::Started& scan = *started;
  started->scan = std::thread([&scan, another = s.another, model = s.model_id, refs = s.ref_ids] {
    try {
      if (const auto reader = another()) {
        auto matches = reader->nearest_codes(model, refs, scan.code, scan.limit, scan.language, scan.share);
        std::vector<pgstore::ChunkKey> keys;
        std::set<std::string> blobs;
        for (const auto& match : matches) {
          keys.push_back(match.key);
          blobs.insert(match.key.blob);
        }
        scan.holders = reader->holders(refs, {blobs.begin(), blobs.end()});
        scan.rows = reader->chunks(model, keys);
        scan.blobs = std::move(blobs);
        scan.matches = std::move(matches);
        if (const auto& asked = scan.history_asked) {
          scan.history = reader->match_history(refs, asked->files, asked->terms, asked->limit);
        }
      }
    } catch (...) {
      // Run again on the search's own reader, whose error, if any, is the search's.
    }
  });
  s.started = std::move(started);
}

void StoreSource::start_history_search(const Query& query, int limit) const {
  State& s = *m_state;
  if (!s.another || s.started) return;
  s.history_asked = State::HistoryAsked{stemmed_terms(query), limit, s.history_files()};
}

std::vector<store::CodeHit> StoreSource::nearest_codes(std::span<const std::uint8_t> code, int limit,
                                                       const FileFilterSpec& filter, store::CodeScan reads) const {
  State& s = *m_state;
  if (s.model_id == 0) return {};
  const int scan = codes_asked(limit, filter);
  std::string wanted(reinterpret_cast<const char*>(code.data()), code.size());
  std::optional<std::vector<pgstore::CodeMatch>> found;
  if (State::Started* started = s.finished()) {
    if (started->matches && started->code == wanted && started->limit == scan &&
        started->language == filter.language && started->share == probe_share(reads)) {
      found = std::move(started->matches);
      s.keep_holders(started->blobs, std::move(started->holders));
      for (auto& row : started->rows) s.rows.try_emplace(row.key, std::move(row));
    }
    started->matches.reset();  // taken once; the history may still be to take
    started->holders.clear();
    started->rows.clear();
  }
  const auto near = found ? std::move(*found)
                          : s.reader.nearest_codes(s.model_id, s.ref_ids, wanted, scan, filter.language,
                                                   probe_share(reads));
  std::vector<pgstore::ChunkKey> keys;
  for (const auto& hit : near) keys.push_back(hit.key);
  s.load_holders(keys);
  std::vector<store::CodeHit> hits;
  for (const auto& hit : near) {
    for (const std::int64_t id : s.expand(hit.key)) {
      const auto& entry = s.entries[static_cast<std::size_t>(id - 1)];
      if (!filter.accepts(entry.path, entry.language)) continue;
      if (static_cast<int>(hits.size()) >= limit) return hits;
      hits.push_back(store::CodeHit{id, hit.distance});
    }
  }
  return hits;
}

std::vector<store::StoredVector> StoreSource::vectors_by_id(const std::vector<std::int64_t>& ids, int dims) const {
  State& s = *m_state;
  std::map<pgstore::ChunkKey, std::vector<std::int64_t>> ids_of;
  for (const std::int64_t id : ids) {
    if (const auto* entry = s.entry(id)) ids_of[entry->key].push_back(id);
  }
  std::vector<pgstore::ChunkKey> keys;
  for (const auto& [key, unused] : ids_of) keys.push_back(key);
  s.load_rows(keys);
  std::vector<store::StoredVector> vectors;
  for (const auto& key : keys) {
    const auto found = s.rows.find(key);
    if (found == s.rows.end()) continue;
    const pgstore::ChunkRow& row = found->second;
    store::StoredVector vector;
    const std::span<const std::uint8_t> bytes(reinterpret_cast<const std::uint8_t*>(row.vector.data()), row.vector.size());
    if (!store::unpack_values(bytes, dims, vector.values, vector.scale)) continue;
    for (const std::int64_t id : ids_of[row.key]) {
      vector.chunk_id = id;
      vectors.push_back(vector);
    }
  }
  return vectors;
}

std::vector<store::ChunkRecord> StoreSource::chunks_by_id(const std::vector<std::int64_t>& ids,
                                                          store::Store::Detail detail) const {
  State& s = *m_state;
  std::map<pgstore::ChunkKey, std::vector<std::int64_t>> ids_of;
  for (const std::int64_t id : ids) {
    if (const auto* entry = s.entry(id)) ids_of[entry->key].push_back(id);
  }
  std::vector<pgstore::ChunkKey> keys;
  std::set<std::string> blobs;
  for (const auto& [key, unused] : ids_of) {
    keys.push_back(key);
    blobs.insert(key.blob);
  }
  s.load_rows(keys);
  std::map<std::string, std::vector<std::string_view>> lines;
  std::vector<std::pair<std::string, std::string>> texts;
  if (detail == store::Store::Detail::full) {
    texts = s.reader.texts({blobs.begin(), blobs.end()});
    for (const auto& [blob, text] : texts) {
      auto& split = lines[blob];
      std::size_t start = 0;
      while (start <= text.size()) {
        const std::size_t end = text.find('\n', start);
        if (end == std::string::npos) {
          if (start < text.size()) split.push_back(std::string_view(text).substr(start));
          break;
        }
        split.push_back(std::string_view(text).substr(start, end - start));
        start = end + 1;
      }
    }
  }
  std::vector<store::ChunkRecord> records;
  for (const auto& key : keys) {
    const auto found = s.rows.find(key);
    if (found == s.rows.end()) continue;
    const pgstore::ChunkRow& row = found->second;
    types::Chunk chunk = row.chunk;
    if (detail == store::Store::Detail::full) {
      const auto& split = lines[row.key.blob];
      std::string text;
      for (int line = std::max(chunk.start_line, 1); line <= chunk.end_line && line <= static_cast<int>(split.size());
           ++line) {
        if (!text.empty() || line > std::max(chunk.start_line, 1)) text += '\n';
        text.append(split[static_cast<std::size_t>(line - 1)]);
      }
      chunk.text = std::move(text);
    } else {
      chunk.doc.clear();
      chunk.signature.clear();
    }
    for (const std::int64_t id : ids_of[row.key]) {
      const auto* entry = s.entry(id);
      records.push_back(store::ChunkRecord{id, entry->path, entry->language, chunk});
    }
  }
  return records;
}

util::Result<std::vector<store::HistoryHit>> StoreSource::history_search(const Query& query, int limit) const {
  State& s = *m_state;
  const std::int64_t histories = s.history_files();
  const std::vector<std::string> terms = stemmed_terms(query);
  std::optional<pgstore::HistoryMatches> found;
  if (State::Started* started = s.finished()) {
    const auto& asked = started->history_asked;
    if (asked && asked->terms == terms && asked->limit == limit && asked->files == histories) {
      found = std::move(started->history);
    }
    started->history.reset();
  }
  const pgstore::HistoryMatches matches =
      found ? std::move(*found) : s.reader.match_history(s.ref_ids, histories, terms, limit);
  const double files = static_cast<double>(matches.files);
  const double average = std::max(static_cast<double>(matches.tokens) / std::max(files, 1.0), 1.0);
  std::vector<store::HistoryHit> hits;
  for (const pgstore::HistoryMatch& match : matches.best) {
    const std::vector<double> frequencies(match.frequency.begin(), match.frequency.end());
    hits.push_back(store::HistoryHit{file_key_of(match.ref_id, match.path),
                                     bm25(frequencies, matches.document_frequency,
                                          static_cast<double>(match.length), files, average)});
  }
  std::sort(hits.begin(), hits.end(), [](const store::HistoryHit& a, const store::HistoryHit& b) {
    return a.score != b.score ? a.score > b.score : a.path < b.path;
  });
  return hits;
}

std::string StoreSource::file_key(const store::ChunkRecord& record) const {
  const auto* entry = m_state->entry(record.id);
  if (entry == nullptr || entry->holders.empty()) return record.path;
  return file_key_of(entry->holders.front(), entry->path);
}

Origin StoreSource::origin(std::int64_t chunk_id) const {
  const State& s = *m_state;
  Origin origin;
  const auto* entry = s.entry(chunk_id);
  if (entry == nullptr) return origin;
  for (std::size_t i = 0; i < entry->holders.size(); ++i) {
    const auto& ref = s.refs[s.ref_order.at(entry->holders[i])];
    if (i == 0) {
      origin.repository = ref.repository;
      origin.ref = ref.ref;
    } else {
      origin.also_in.push_back(ref.repository + "@" + ref.ref);
    }
  }
  return origin;
}

} // namespace kasava::search
