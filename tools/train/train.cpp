// kasava-train: trains the built-in code-search model from a corpus of (doc, code) pairs
// (corpus.hpp, made by kasava-mine) and writes a `.kmodel` file (core/embed/model.hpp).
//
// Pairs are split by package (a hash of its name) into training and held-out sets; a source
// package (`src:NAME`, often a whole language's ecosystem in one package, like Mono) is split by
// folder instead (heldout_unit). The code
// side of a pair is what the indexer embeds (embed::embedding_input, without the doc); the
// query side is made to look like what people type into a search box: the doc's first
// sentence, a random subset of its keywords, the symbol's split name, sometimes with the
// language's name added ("python read csv into dict"). After the first epoch, part of each
// batch is made of pairs whose code vectors are close (random-hyperplane buckets), so the
// in-batch negatives get harder. Each epoch prints the loss, held-out MRR (whole pool) and
// the CoSQA dev MRR computed as the binary computes it (chunked as `<idx>.py`, each file
// scored by its best chunk). The test split is never read. At the end, and alone with
// `--evaluate MODEL`, it prints held-out MRR per language, each language's held-out pairs
// ranked among themselves, so that two models can be compared language by language.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <numeric>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/embed/features.hpp"
#include "core/util/hash.hpp"
#include "core/embed/model.hpp"
#include "core/parse/chunker.hpp"
#include "core/util/json_value.hpp"
#include "core/util/tokenize.hpp"
#include "tools/train/corpus.hpp"
#include "tools/train/train_model.hpp"

namespace kasava::train {
namespace {

struct Options {
  std::vector<std::string> corpora;
  std::string output = "kasava-code.kmodel";
  std::string name = "kasava-code-v1";
  std::string cosqa_dir;
  int epochs = 3;
  std::size_t batch = 1000;
  std::size_t vocabulary = 50000;
  int min_df = 3;
  int heldout_permille = 50;
  std::size_t heldout_pairs = 2000;
  std::size_t max_pairs = 0;
  float hard_fraction = 0.5F;
  float language_probability = 0.5F;
  float doc_in_code = 0.0F;
  float name_boost = 2.0F;
  std::size_t show_queries = 0;
  // Query kinds, cumulative: summary, keywords of the summary, split symbol name, longer doc.
  float mix[3] = {0.4F, 0.85F, 0.95F};
  std::size_t max_code_words = 200;
  bool save_best = true;
  std::string evaluate_model;  // --evaluate: only print this model's held-out figures
  TrainOptions train;
};

[[noreturn]] void usage(const char* why) {
  std::fprintf(stderr,
               "kasava-train: %s\n"
               "usage: kasava-train --corpus FILE [--corpus FILE...] --out FILE [--cosqa DIR]\n"
               "  [--epochs N] [--batch N] [--dims N] [--buckets N] [--vocabulary N] [--min-df N]\n"
               "  [--lr X] [--weight-lr X] [--scale X] [--threads N] [--seed N] [--name NAME]\n"
               "  [--heldout-permille N] [--heldout-pairs N] [--max-pairs N] [--hard X]\n"
               "  [--language-probability X] [--max-code-words N] [--min-n N] [--max-n N]\n"
               "  [--doc-in-code X] (probability that the code side also shows the doc)\n"
               "  [--name-boost X] (code side: weight of the names line)\n"
               "  [--show-queries N] (print N query summaries made from docs, then exit)\n"
               "  [--mix S,K,N] (query kinds: summary, keywords, symbol name; rest: longer doc)\n"
               "  [--last] (write the last epoch, not the best on CoSQA dev)\n"
               "  [--evaluate MODEL] (print MODEL's held-out figures per language; no training)\n",
               why);
  std::exit(2);
}

Options parse_options(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) usage(("missing value for " + arg).c_str());
      return argv[++i];
    };
    if (arg == "--corpus") o.corpora.push_back(next());
    else if (arg == "--out") o.output = next();
    else if (arg == "--name") o.name = next();
    else if (arg == "--cosqa") o.cosqa_dir = next();
    else if (arg == "--epochs") o.epochs = std::stoi(next());
    else if (arg == "--batch") o.batch = std::stoul(next());
    else if (arg == "--vocabulary") o.vocabulary = std::stoul(next());
    else if (arg == "--min-df") o.min_df = std::stoi(next());
    else if (arg == "--heldout-permille") o.heldout_permille = std::stoi(next());
    else if (arg == "--heldout-pairs") o.heldout_pairs = std::stoul(next());
    else if (arg == "--max-pairs") o.max_pairs = std::stoul(next());
    else if (arg == "--hard") o.hard_fraction = std::stof(next());
    else if (arg == "--language-probability") o.language_probability = std::stof(next());
    else if (arg == "--doc-in-code") o.doc_in_code = std::stof(next());
    else if (arg == "--name-boost") o.name_boost = std::stof(next());
    else if (arg == "--show-queries") o.show_queries = std::stoul(next());
    else if (arg == "--mix") {
      // "summary,keywords,name" probabilities; the rest is the longer doc.
      float sum = 0;
      std::stringstream parts(next());
      std::string part;
      for (float& bound : o.mix) {
        if (!std::getline(parts, part, ',')) usage("--mix needs three probabilities");
        sum += std::stof(part);
        bound = sum;
      }
    }
    else if (arg == "--max-code-words") o.max_code_words = std::stoul(next());
    else if (arg == "--last") o.save_best = false;
    else if (arg == "--evaluate") o.evaluate_model = next();
    else if (arg == "--dims") o.train.dims = std::stoi(next());
    else if (arg == "--buckets") o.train.buckets = static_cast<std::uint32_t>(std::stoul(next()));
    else if (arg == "--min-n") o.train.min_n = std::stoi(next());
    else if (arg == "--max-n") o.train.max_n = std::stoi(next());
    else if (arg == "--lr") o.train.learning_rate = std::stof(next());
    else if (arg == "--weight-lr") o.train.weight_learning_rate = std::stof(next());
    else if (arg == "--scale") o.train.scale = std::stof(next());
    else if (arg == "--threads") o.train.threads = std::stoi(next());
    else if (arg == "--seed") o.train.seed = std::stoull(next());
    else if (arg == "--help" || arg == "-h") usage("trains kasava's built-in model");
    else usage(("unknown option " + arg).c_str());
  }
  if (o.corpora.empty()) usage("no --corpus given");
  if (o.train.dims % 8 != 0) usage("--dims must be a multiple of 8");
  return o;
}

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// --- Query side: what a doc comment says, shaped like a search query. ---

bool starts_with_ci(std::string_view text, std::string_view prefix) {
  if (text.size() < prefix.size()) return false;
  for (std::size_t i = 0; i < prefix.size(); ++i)
    if (std::tolower(static_cast<unsigned char>(text[i])) != prefix[i]) return false;
  return true;
}

/// The doc's summary: its first paragraph up to the first sentence end, without parameter
/// sections and without a leading repetition of the symbol (Go's "ReadFile reads ...").
std::string first_sentence(std::string_view doc, std::string_view symbol) {
  std::string out;
  for (std::size_t i = 0; i < doc.size(); ++i) {
    const char c = doc[i];
    if (c == '\n') {
      const std::size_t next = doc.find_first_not_of(" \t", i + 1);
      if (next == std::string_view::npos || doc[next] == '\n') break;  // blank line
      const std::string_view rest = doc.substr(next);
      if (rest[0] == ':' || rest[0] == '@' || starts_with_ci(rest, "args") ||
          starts_with_ci(rest, "parameters") || starts_with_ci(rest, "returns:") ||
          starts_with_ci(rest, "example") || starts_with_ci(rest, ">>>"))
        break;
      out += ' ';
      continue;
    }
    out += c;
    if ((c == '.' || c == '?' || c == '!') &&
        (i + 1 == doc.size() || doc[i + 1] == ' ' || doc[i + 1] == '\n'))
      break;
    if (out.size() > 300) break;
  }
  const std::size_t start = out.find_first_not_of(' ');
  out = start == std::string::npos ? "" : out.substr(start);
  if (!symbol.empty() && out.size() > symbol.size() && out.compare(0, symbol.size(), symbol) == 0 &&
      out[symbol.size()] == ' ')
    out = out.substr(symbol.size() + 1);
  return out;
}

// --- Corpus as word ids. ---

class Interner {
public:
  std::uint32_t id(const std::string& word) {
    auto [it, added] = m_ids.emplace(word, static_cast<std::uint32_t>(m_words.size()));
    if (added) m_words.push_back(word);
    return it->second;
  }
  const std::vector<std::string>& words() const { return m_words; }

private:
  std::unordered_map<std::string, std::uint32_t> m_ids;
  std::vector<std::string> m_words;
};

/// The bag of a text; `name_boost` multiplies words of the first line (code side, as
/// embed::Model::encode does for documents).
Bag make_bag(Interner& interner, std::string_view text, std::size_t max_words,
             float name_boost = 1.0F) {
  Bag bag;
  for (const auto& [word, count, in_first_line] : embed::text_words(text, max_words)) {
    bag.words.push_back(interner.id(word));
    bag.repeat.push_back((1.0F + std::log(static_cast<float>(count))) *
                         (in_first_line ? name_boost : 1.0F));
  }
  return bag;
}

struct Example {
  Bag code;
  Bag code_with_doc;  // the code side as the index sees it: with its doc comment
  Bag summary;   // first sentence of the doc
  Bag longer;    // the doc's first 300 bytes
  Bag name;      // the symbol split into words
  std::uint32_t language = 0;  // word id of the language's name
  bool heldout = false;
  std::string summary_text;  // held-out only: the query text
  std::string language_name; // held-out only
  std::string code_text;     // held-out only
};

std::string code_input(const Pair& pair, bool with_doc) {
  types::Chunk chunk;
  chunk.kind = "function";
  chunk.symbol = pair.symbol;
  chunk.text = pair.code;
  if (with_doc) chunk.doc = pair.doc;
  return embed::embedding_input(pair.path, chunk);
}

std::string symbol_words(std::string_view symbol) {
  std::string out;
  for (const auto& part : util::split_identifier(symbol)) {
    if (!out.empty()) out += ' ';
    out += part;
  }
  return out;
}

// --- Evaluation. ---

double mrr_of_ranks(const std::vector<std::size_t>& ranks) {
  double sum = 0;
  for (const std::size_t rank : ranks) sum += 1.0 / static_cast<double>(rank);
  return ranks.empty() ? 0 : sum / static_cast<double>(ranks.size());
}

struct CosqaSet {
  std::vector<std::string> chunk_texts;     // embedding_input of each chunk
  std::vector<std::uint32_t> chunk_file;    // file index of each chunk
  std::size_t files = 0;
  std::vector<std::string> queries;
  std::vector<std::uint32_t> gold;          // file index per query
};

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot open " + path);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

CosqaSet load_cosqa_dev(const std::string& dir) {
  CosqaSet set;
  const auto map = util::parse_json(read_file(dir + "/code_idx_map.txt")).value_or_throw();
  parse::Chunker chunker;
  std::map<std::int64_t, std::uint32_t> file_of_idx;
  for (const auto& member : map.as_object()) {
    const std::int64_t idx = member.value.as_integer();
    const auto file = static_cast<std::uint32_t>(set.files++);
    file_of_idx[idx] = file;
    const std::string path = std::to_string(idx) + ".py";
    for (const auto& chunk : chunker.chunk(path, "python", member.key)) {
      set.chunk_texts.push_back(embed::embedding_input(path, chunk));
      set.chunk_file.push_back(file);
    }
  }
  const auto dev = util::parse_json(read_file(dir + "/cosqa-retrieval-dev-500.json")).value_or_throw();
  for (const auto& item : dev.as_array()) {
    const auto found = file_of_idx.find(item["retrieval_idx"].as_integer());
    if (found == file_of_idx.end()) continue;
    set.queries.push_back(item["doc"].as_string());
    set.gold.push_back(found->second);
  }
  return set;
}

/// Rank of the gold document for each query, by cosine (documents: one vector each, or best
/// chunk per file when `doc_of_vector` maps vectors to documents).
std::vector<std::size_t> ranks(const std::vector<float>& query_vectors,
                               const std::vector<float>& doc_vectors,
                               const std::vector<std::uint32_t>& doc_of_vector, std::size_t docs,
                               const std::vector<std::uint32_t>& gold, int dims, int threads) {
  const auto d = static_cast<std::size_t>(dims);
  const std::size_t queries = gold.size();
  const std::size_t vectors = doc_vectors.size() / d;
  std::vector<std::size_t> out(queries);
  parallel_for(queries, threads, [&](std::size_t begin, std::size_t end) {
    std::vector<float> best(docs);
    for (std::size_t q = begin; q < end; ++q) {
      std::fill(best.begin(), best.end(), -2.0F);
      const float* qv = &query_vectors[q * d];
      for (std::size_t v = 0; v < vectors; ++v) {
        float s = 0;
        const float* dv = &doc_vectors[v * d];
        for (std::size_t k = 0; k < d; ++k) s += qv[k] * dv[k];
        const std::uint32_t doc = doc_of_vector.empty() ? static_cast<std::uint32_t>(v) : doc_of_vector[v];
        best[doc] = std::max(best[doc], s);
      }
      const float target = best[gold[q]];
      std::size_t rank = 1;
      for (std::size_t doc = 0; doc < docs; ++doc)
        if (best[doc] > target) ++rank;
      out[q] = rank;
    }
  });
  return out;
}

std::vector<float> encode_all(const embed::Model& model, const std::vector<std::string>& texts,
                              embed::InputKind kind, int threads) {
  const auto d = static_cast<std::size_t>(model.dimensions());
  std::vector<float> out(texts.size() * d);
  parallel_for(texts.size(), threads, [&](std::size_t begin, std::size_t end) {
    for (std::size_t i = begin; i < end; ++i)
      model.encode(texts[i], kind, std::span<float>(&out[i * d], d));
  });
  return out;
}

// What the held-out split hashes: the package, or for a source package (`src:NAME`, whose
// paths start with the package: src:mono/mcs/class/System.Web/...) the file's folder, so that
// one big source package gives held-out folders rather than being all in or all out.
std::string heldout_unit(const Pair& pair) {
  if (!pair.package.starts_with("src:")) return pair.package;
  return pair.path.substr(0, pair.path.rfind('/') + 1);
}

// A language's held-out pairs, ranked among themselves.
struct LanguagePool {
  std::string language;
  std::vector<std::string> queries;
  std::vector<std::string> codes;
};

// MRR, R@1 and R@10 of gold ranks (1 = first).
struct RankFigures {
  double mrr = 0;
  double r1 = 0;
  double r10 = 0;
};

RankFigures figures_of(const std::vector<std::size_t>& ranks) {
  RankFigures figures;
  figures.mrr = mrr_of_ranks(ranks);
  for (const std::size_t rank : ranks) {
    figures.r1 += rank == 1 ? 1 : 0;
    figures.r10 += rank <= 10 ? 1 : 0;
  }
  figures.r1 /= static_cast<double>(ranks.size());
  figures.r10 /= static_cast<double>(ranks.size());
  return figures;
}

struct Scores {
  double heldout = 0;
  double cosqa = 0;
  double cosqa_r1 = 0;
  double cosqa_r10 = 0;
};

Scores evaluate(const embed::Model& model, const std::vector<std::string>& heldout_queries,
                const std::vector<std::string>& heldout_codes, const CosqaSet* cosqa,
                int threads) {
  Scores scores;
  const int dims = model.dimensions();
  if (!heldout_queries.empty()) {
    const auto q = encode_all(model, heldout_queries, embed::InputKind::query, threads);
    const auto c = encode_all(model, heldout_codes, embed::InputKind::document, threads);
    std::vector<std::uint32_t> gold(heldout_queries.size());
    std::iota(gold.begin(), gold.end(), 0U);
    scores.heldout = mrr_of_ranks(ranks(q, c, {}, heldout_codes.size(), gold, dims, threads));
  }
  if (cosqa != nullptr) {
    const auto q = encode_all(model, cosqa->queries, embed::InputKind::query, threads);
    const auto c = encode_all(model, cosqa->chunk_texts, embed::InputKind::document, threads);
    const RankFigures f = figures_of(ranks(q, c, cosqa->chunk_file, cosqa->files, cosqa->gold, dims, threads));
    scores.cosqa = f.mrr;
    scores.cosqa_r1 = f.r1;
    scores.cosqa_r10 = f.r10;
  }
  return scores;
}

// Prints, for each language, the MRR of its held-out pairs ranked among themselves.
void print_language_pools(const embed::Model& model, const std::vector<LanguagePool>& pools,
                          int threads) {
  std::printf("held-out pairs by language, each ranked among its own language's pairs:\n");
  std::printf("  %-12s %6s %7s %6s %6s\n", "language", "pairs", "MRR", "R@1", "R@10");
  const int dims = model.dimensions();
  for (const LanguagePool& pool : pools) {
    const auto q = encode_all(model, pool.queries, embed::InputKind::query, threads);
    const auto c = encode_all(model, pool.codes, embed::InputKind::document, threads);
    std::vector<std::uint32_t> gold(pool.queries.size());
    std::iota(gold.begin(), gold.end(), 0U);
    const RankFigures f = figures_of(ranks(q, c, {}, pool.codes.size(), gold, dims, threads));
    std::printf("  %-12s %6zu %7.4f %6.3f %6.3f\n", pool.language.c_str(), pool.codes.size(), f.mrr,
                f.r1, f.r10);
  }
  std::fflush(stdout);
}

int run(const Options& options) {
  const auto start = std::chrono::steady_clock::now();
  std::mt19937_64 rng(options.train.seed);
  std::fprintf(stderr,
               "config: dims %d, vocabulary %zu (min df %d), buckets %u, n-grams %d-%d, batch %zu, "
               "epochs %d, lr %g, weight lr %g, scale %g, hard %g, language %g, name boost %g, "
               "mix %g/%g/%g, doc in code %g, seed %llu, threads %d\n",
               options.train.dims, options.vocabulary, options.min_df, options.train.buckets,
               options.train.min_n, options.train.max_n, options.batch, options.epochs,
               static_cast<double>(options.train.learning_rate),
               static_cast<double>(options.train.weight_learning_rate),
               static_cast<double>(options.train.scale), static_cast<double>(options.hard_fraction),
               static_cast<double>(options.language_probability),
               static_cast<double>(options.name_boost), static_cast<double>(options.mix[0]),
               static_cast<double>(options.mix[1] - options.mix[0]),
               static_cast<double>(options.mix[2] - options.mix[1]),
               static_cast<double>(options.doc_in_code),
               static_cast<unsigned long long>(options.train.seed), options.train.threads);

  // Corpus.
  std::vector<Pair> pairs;
  for (const auto& path : options.corpora) {
    std::size_t bad = 0;
    auto more = read_corpus(path, &bad);
    std::fprintf(stderr, "corpus %s: %zu pairs (%zu bad lines)\n", path.c_str(), more.size(), bad);
    for (auto& pair : more) pairs.push_back(std::move(pair));
  }
  if (options.max_pairs != 0 && pairs.size() > options.max_pairs) {
    std::shuffle(pairs.begin(), pairs.end(), rng);
    pairs.resize(options.max_pairs);
  }

  Interner interner;
  std::vector<Example> examples;
  examples.reserve(pairs.size());
  std::map<std::string, std::pair<std::size_t, std::size_t>> per_language;  // train, held out
  std::vector<std::size_t> heldout_examples;
  for (const auto& pair : pairs) {
    const std::string summary = first_sentence(pair.doc, pair.symbol);
    if (options.show_queries > 0) {
      if (examples.size() + 1 >= options.show_queries) return 0;
      std::printf("%s\t%s\t%s\n", pair.language.c_str(), pair.symbol.c_str(), summary.c_str());
      examples.emplace_back();
      continue;
    }
    if (embed::text_words(summary).size() < 2) continue;
    Example example;
    example.heldout = static_cast<int>(util::fnv1a64(heldout_unit(pair)) % 1000) <
                      options.heldout_permille;
    const std::string code = code_input(pair, false);
    example.code = make_bag(interner, code, options.max_code_words, options.name_boost);
    if (options.doc_in_code > 0 && !example.heldout)
      example.code_with_doc =
          make_bag(interner, code_input(pair, true), options.max_code_words, options.name_boost);
    if (example.code.words.empty()) continue;
    example.summary = make_bag(interner, summary, 0);
    example.longer = make_bag(interner, std::string_view(pair.doc).substr(0, 300), 0);
    example.name = make_bag(interner, symbol_words(pair.symbol), 0);
    example.language = interner.id(embed::stem_word(pair.language));
    auto& counts = per_language[pair.language];
    (example.heldout ? counts.second : counts.first)++;
    if (example.heldout) {
      example.summary_text = summary;
      example.code_text = code;
      example.language_name = pair.language;
      heldout_examples.push_back(examples.size());
    }
    examples.push_back(std::move(example));
  }
  pairs.clear();
  pairs.shrink_to_fit();
  std::size_t train_count = 0;
  for (const auto& [language, counts] : per_language) {
    std::fprintf(stderr, "  %-12s train %8zu  held out %7zu\n", language.c_str(), counts.first,
                 counts.second);
    train_count += counts.first;
  }
  std::fprintf(stderr, "examples: %zu train, %zu held out (%.1fs)\n", train_count,
               heldout_examples.size(), seconds_since(start));

  // Held-out evaluation pairs (a fixed sample).
  std::shuffle(heldout_examples.begin(), heldout_examples.end(), rng);
  if (heldout_examples.size() > options.heldout_pairs) heldout_examples.resize(options.heldout_pairs);
  std::vector<std::string> heldout_queries, heldout_codes;
  for (const std::size_t e : heldout_examples) {
    heldout_queries.push_back(examples[e].summary_text);
    heldout_codes.push_back(examples[e].code_text);
  }
  // Per-language pools: up to k_pool_pairs held-out pairs of each language with at least
  // k_min_pool_pairs, drawn with their own generator so that training draws the same numbers.
  constexpr std::size_t k_pool_pairs = 1000;
  constexpr std::size_t k_min_pool_pairs = 30;
  std::vector<LanguagePool> pools;
  {
    std::map<std::string, std::vector<std::size_t>> by_language;
    for (std::size_t e = 0; e < examples.size(); ++e)
      if (examples[e].heldout) by_language[examples[e].language_name].push_back(e);
    std::mt19937_64 pool_rng(options.train.seed + 1);
    for (auto& [language, ids] : by_language) {
      if (ids.size() < k_min_pool_pairs) continue;
      std::shuffle(ids.begin(), ids.end(), pool_rng);
      if (ids.size() > k_pool_pairs) ids.resize(k_pool_pairs);
      LanguagePool pool{language, {}, {}};
      for (const std::size_t e : ids) {
        pool.queries.push_back(examples[e].summary_text);
        pool.codes.push_back(examples[e].code_text);
      }
      pools.push_back(std::move(pool));
    }
  }
  std::unique_ptr<CosqaSet> cosqa;
  if (!options.cosqa_dir.empty()) {
    cosqa = std::make_unique<CosqaSet>(load_cosqa_dev(options.cosqa_dir));
    std::fprintf(stderr, "cosqa dev: %zu queries, %zu files, %zu chunks\n", cosqa->queries.size(),
                 cosqa->files, cosqa->chunk_texts.size());
  }
  if (!options.evaluate_model.empty()) {
    auto model = embed::load_model_file(options.evaluate_model).value_or_throw();
    const Scores s = evaluate(*model, heldout_queries, heldout_codes, cosqa.get(), options.train.threads);
    std::printf("%s: held-out MRR %.4f (whole pool of %zu), CoSQA dev MRR %.4f (R@1 %.3f, R@10 %.3f)\n",
                model->model_id().c_str(), s.heldout, heldout_queries.size(), s.cosqa, s.cosqa_r1,
                s.cosqa_r10);
    print_language_pools(*model, pools, options.train.threads);
    return 0;
  }

  // Vocabulary: the most frequent words of the training texts (document frequency).
  const std::size_t word_count = interner.words().size();
  std::vector<std::uint32_t> df(word_count, 0);
  std::size_t documents = 0;
  for (const auto& example : examples) {
    if (example.heldout) continue;
    for (const Bag* bag : {&example.code, &example.summary}) {
      ++documents;
      for (const std::uint32_t w : bag->words) ++df[w];
    }
  }
  std::vector<std::uint32_t> order;
  for (std::uint32_t w = 0; w < word_count; ++w)
    if (df[w] >= static_cast<std::uint32_t>(options.min_df)) order.push_back(w);
  std::sort(order.begin(), order.end(), [&](std::uint32_t a, std::uint32_t b) {
    return df[a] != df[b] ? df[a] > df[b] : interner.words()[a] < interner.words()[b];
  });
  if (order.size() > options.vocabulary) order.resize(options.vocabulary);
  Words words;
  words.text = interner.words();
  words.vocabulary_index.assign(word_count, -1);
  std::vector<float> idf;
  for (std::size_t r = 0; r < order.size(); ++r) {
    words.vocabulary_index[order[r]] = static_cast<std::int32_t>(r);
    idf.push_back(static_cast<float>(std::log(static_cast<double>(documents) / df[order[r]])));
  }
  const float unknown_idf = static_cast<float>(std::log(static_cast<double>(documents) / options.min_df));
  words.feature_begin.push_back(0);
  std::vector<std::uint32_t> grams;
  for (std::size_t w = 0; w < word_count; ++w) {
    if (words.vocabulary_index[w] >= 0)
      words.features.push_back(static_cast<std::uint32_t>(words.vocabulary_index[w]));
    grams.clear();
    embed::ngram_buckets(words.text[w], options.train.min_n, options.train.max_n,
                         options.train.buckets, grams);
    for (const std::uint32_t g : grams)
      words.features.push_back(static_cast<std::uint32_t>(order.size()) + g);
    words.feature_begin.push_back(static_cast<std::uint32_t>(words.features.size()));
  }
  std::fprintf(stderr, "words: %zu distinct, vocabulary %zu, %u n-gram buckets, %d dims (%.1fs)\n",
               word_count, order.size(), options.train.buckets, options.train.dims,
               seconds_since(start));

  TrainableModel model(options.train, words, order, idf, unknown_idf);
  std::vector<std::size_t> train_ids;
  for (std::size_t e = 0; e < examples.size(); ++e)
    if (!examples[e].heldout) train_ids.push_back(e);

  auto evaluate_model = [&](const std::string& name, std::string* bytes) {
    auto data = model.export_model(name);
    data.name_boost = options.name_boost;
    *bytes = embed::serialize_model(data);
    auto loaded = embed::Model::from_bytes(*bytes, "trained model", true).value_or_throw();
    return evaluate(*loaded, heldout_queries, heldout_codes, cosqa.get(), options.train.threads);
  };
  std::string best_bytes;
  double best_score = -1;
  int best_epoch = 0;
  {
    std::string bytes;
    const Scores s = evaluate_model(options.name, &bytes);
    std::fprintf(stderr, "epoch 0: held-out MRR %.4f, CoSQA dev MRR %.4f (R@1 %.3f, R@10 %.3f)\n",
                 s.heldout, s.cosqa, s.cosqa_r1, s.cosqa_r10);
  }
  const auto d = static_cast<std::size_t>(options.train.dims);
  std::uniform_real_distribution<float> uniform(0.0F, 1.0F);
  for (int epoch = 1; epoch <= options.epochs; ++epoch) {
    const auto epoch_start = std::chrono::steady_clock::now();
    // Batches: a random part, and (after the first epoch) a "hard" part of pairs whose code
    // vectors fall in the same random-hyperplane bucket, so in-batch negatives are similar.
    std::vector<std::size_t> ids = train_ids;
    std::shuffle(ids.begin(), ids.end(), rng);
    const float hard = epoch > 1 ? options.hard_fraction : 0.0F;
    const std::size_t hard_count = static_cast<std::size_t>(hard * static_cast<float>(ids.size()));
    std::vector<std::size_t> hard_ids(ids.begin(), ids.begin() + static_cast<std::ptrdiff_t>(hard_count));
    std::vector<std::size_t> easy_ids(ids.begin() + static_cast<std::ptrdiff_t>(hard_count), ids.end());
    if (!hard_ids.empty()) {
      int bits = 1;
      while ((hard_count >> bits) > options.batch) ++bits;
      std::normal_distribution<float> normal;
      std::vector<float> planes(static_cast<std::size_t>(bits) * d);
      for (float& x : planes) x = normal(rng);
      std::vector<std::uint32_t> key(hard_ids.size());
      parallel_for(hard_ids.size(), options.train.threads, [&](std::size_t begin, std::size_t end) {
        std::vector<float> v(d);
        for (std::size_t i = begin; i < end; ++i) {
          model.encode(examples[hard_ids[i]].code, false, v.data());
          std::uint32_t k = 0;
          for (int b = 0; b < bits; ++b) {
            float s = 0;
            for (std::size_t j = 0; j < d; ++j) s += v[j] * planes[static_cast<std::size_t>(b) * d + j];
            k = (k << 1) | (s > 0 ? 1U : 0U);
          }
          key[i] = k;
        }
      });
      std::vector<std::size_t> index(hard_ids.size());
      std::iota(index.begin(), index.end(), 0);
      std::stable_sort(index.begin(), index.end(),
                       [&](std::size_t a, std::size_t b) { return key[a] < key[b]; });
      std::vector<std::size_t> sorted;
      for (const std::size_t i : index) sorted.push_back(hard_ids[i]);
      hard_ids = std::move(sorted);
    }
    const std::size_t batches = std::max<std::size_t>(1, ids.size() / options.batch);
    const std::size_t hard_per = hard_ids.size() / batches;
    const std::size_t easy_per = easy_ids.size() / batches;
    std::vector<std::size_t> batch_order(batches);
    std::iota(batch_order.begin(), batch_order.end(), 0);
    std::shuffle(batch_order.begin(), batch_order.end(), rng);
    double loss_sum = 0;
    std::vector<Bag> query_storage;
    for (std::size_t b = 0; b < batches; ++b) {
      const std::size_t which = batch_order[b];
      std::vector<std::size_t> members;
      for (std::size_t k = 0; k < hard_per; ++k) members.push_back(hard_ids[which * hard_per + k]);
      for (std::size_t k = 0; k < easy_per; ++k) members.push_back(easy_ids[which * easy_per + k]);
      query_storage.assign(members.size(), Bag{});
      std::vector<const Bag*> queries, codes;
      for (std::size_t m = 0; m < members.size(); ++m) {
        const Example& example = examples[members[m]];
        Bag& query = query_storage[m];
        const float pick = uniform(rng);
        if (pick < options.mix[0]) {
          query = example.summary;
        } else if (pick < options.mix[1]) {
          // Keywords: each word of the summary kept with probability 0.6, at least one.
          for (std::size_t k = 0; k < example.summary.words.size(); ++k) {
            const auto& text = words.text[example.summary.words[k]];
            if (util::is_stop_word(text) || uniform(rng) > 0.6F) continue;
            query.words.push_back(example.summary.words[k]);
            query.repeat.push_back(1.0F);
          }
          if (query.words.empty()) query = example.summary;
        } else if (pick < options.mix[2] && !example.name.words.empty()) {
          query = example.name;
        } else {
          query = example.longer;
        }
        if (uniform(rng) < options.language_probability &&
            std::find(query.words.begin(), query.words.end(), example.language) == query.words.end()) {
          query.words.push_back(example.language);
          query.repeat.push_back(1.0F);
        }
        queries.push_back(&query);
        const bool show_doc = !example.code_with_doc.words.empty() && uniform(rng) < options.doc_in_code;
        codes.push_back(show_doc ? &example.code_with_doc : &example.code);
      }
      loss_sum += model.step(queries, codes);
      if ((b + 1) % 50 == 0)
        std::fprintf(stderr, "  epoch %d batch %zu/%zu loss %.4f (%.0fs)\n", epoch, b + 1, batches,
                     loss_sum / static_cast<double>(b + 1), seconds_since(epoch_start));
    }
    std::string bytes;
    const Scores s = evaluate_model(options.name, &bytes);
    std::fprintf(stderr,
                 "epoch %d: loss %.4f, held-out MRR %.4f, CoSQA dev MRR %.4f (R@1 %.3f, R@10 "
                 "%.3f), %.0fs (total %.0fs)\n",
                 epoch, loss_sum / static_cast<double>(batches), s.heldout, s.cosqa, s.cosqa_r1,
                 s.cosqa_r10, seconds_since(epoch_start), seconds_since(start));
    const double score = cosqa ? s.cosqa : s.heldout;
    if (!options.save_best || score > best_score) {
      best_score = score;
      best_epoch = epoch;
      best_bytes = std::move(bytes);
    }
  }
  if (best_bytes.empty()) {
    auto data = model.export_model(options.name);
    data.name_boost = options.name_boost;
    best_bytes = embed::serialize_model(data);
  }
  std::ofstream out(options.output, std::ios::binary);
  out.write(best_bytes.data(), static_cast<std::streamsize>(best_bytes.size()));
  out.close();
  if (!out) {
    std::fprintf(stderr, "kasava-train: writing %s failed\n", options.output.c_str());
    return 1;
  }
  auto written = embed::load_model_file(options.output).value_or_throw();
  std::fprintf(stderr, "wrote %s: %s, epoch %d, %.1f MB, total %.0fs\n", options.output.c_str(),
               written->model_id().c_str(), best_epoch,
               static_cast<double>(best_bytes.size()) / 1e6, seconds_since(start));
  if (cosqa) {
    // Encoding speed on one thread, as the indexer (chunks) and `ask` (a query) see it.
    auto timed = [&](const std::vector<std::string>& texts, embed::InputKind kind) {
      const auto begin = std::chrono::steady_clock::now();
      encode_all(*written, texts, kind, 1);
      return seconds_since(begin) * 1e6 / static_cast<double>(texts.size());
    };
    const double query_us = timed(cosqa->queries, embed::InputKind::query);
    const double chunk_us = timed(cosqa->chunk_texts, embed::InputKind::document);
    std::fprintf(stderr, "encoding on one thread: %.1f us per query, %.1f us per CoSQA chunk\n",
                 query_us, chunk_us);
  }
  print_language_pools(*written, pools, options.train.threads);
  return 0;
}

} // namespace
} // namespace kasava::train

int main(int argc, char** argv) {
  try {
    return kasava::train::run(kasava::train::parse_options(argc, argv));
  } catch (const std::exception& error) {
    std::fprintf(stderr, "kasava-train: error: %s\n", error.what());
    return 1;
  }
}
