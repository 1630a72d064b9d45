// The trainable form of the built-in model (core/embed/model.cpp) and its training step:
// float tables, the in-batch contrastive objective, lazy Adam. See train_model.cpp.
#pragma once

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "core/embed/model.hpp"

namespace kasava::train {

/// Runs fn(begin, end) on `threads` threads over [0, count), in contiguous deterministic parts.
template <typename Fn>
void parallel_for(std::size_t count, int threads, const Fn& fn);

/// A text as the trainer sees it: distinct word ids (into Words) and 1 + ln(count) each.
struct Bag {
  std::vector<std::uint32_t> words;
  std::vector<float> repeat;
};

/// Every distinct word of the corpus and evaluation texts, with its model features: its own
/// row when it is in the vocabulary, then its character n-gram bucket rows (offset by the
/// vocabulary size), exactly as core/embed encodes it.
struct Words {
  std::vector<std::string> text;               ///< word id → word
  std::vector<std::int32_t> vocabulary_index;  ///< word id → vocabulary row, or -1
  std::vector<std::uint32_t> feature_begin;    ///< CSR into features (size words + 1)
  std::vector<std::uint32_t> features;
  std::size_t size() const { return text.size(); }
};

struct TrainOptions {
  int dims = 256;
  std::uint32_t buckets = 20000;
  int min_n = 3;
  int max_n = 5;
  float learning_rate = 0.002F;         ///< Adam, table rows
  float weight_learning_rate = 0.01F;   ///< Adam, pooling weights
  float scale = 15.0F;                  ///< logits = scale × cosine
  int threads = 2;
  std::uint64_t seed = 1;
};

/// The float model being trained.
class TrainableModel {
public:
  /// `vocabulary` lists word ids in row order; `initial_weight` is each vocabulary word's
  /// starting pooling weight (IDF), `unknown_weight` the one of words outside it.
  TrainableModel(const TrainOptions& options, const Words& words,
                 const std::vector<std::uint32_t>& vocabulary,
                 const std::vector<float>& initial_weight, float unknown_weight);

  /// One optimisation step on a batch of (query, code) pairs; returns the mean loss.
  float step(const std::vector<const Bag*>& queries, const std::vector<const Bag*>& codes);

  /// Encodes a bag with the float model (unnormalised sums are normalised), `query` side or not.
  void encode(const Bag& bag, bool query, float* out) const;

  /// The model in core/embed's form (vocabulary rows composed with their n-grams).
  embed::ModelData export_model(const std::string& name) const;

private:
  float weight(std::uint32_t word, bool query) const;

  TrainOptions m_options;
  const Words& m_words;
  std::vector<std::uint32_t> m_vocabulary;  // row → word id
  std::size_t m_rows = 0;
  std::vector<float> m_table, m_table_m, m_table_v;
  std::vector<std::int64_t> m_row_step;      // last step each row was updated (lazy Adam)
  // Log pooling weights: [0] query side, [1] code side, per vocabulary row; then unknown.
  std::vector<float> m_log_weight[2], m_log_weight_m[2], m_log_weight_v[2];
  float m_unknown[2] = {0, 0}, m_unknown_m[2] = {0, 0}, m_unknown_v[2] = {0, 0};
  std::int64_t m_step = 0;
};

} // namespace kasava::train

#include <thread>

namespace kasava::train {
template <typename Fn>
void parallel_for(std::size_t count, int threads, const Fn& fn) {
  const auto parts = static_cast<std::size_t>(threads < 1 ? 1 : threads);
  if (parts == 1 || count < 2 * parts) {
    fn(std::size_t{0}, count);
    return;
  }
  std::vector<std::thread> pool;
  const std::size_t per = (count + parts - 1) / parts;
  for (std::size_t p = 1; p < parts; ++p) {
    const std::size_t begin = std::min(count, p * per);
    const std::size_t end = std::min(count, begin + per);
    pool.emplace_back([&fn, begin, end] { fn(begin, end); });
  }
  fn(std::size_t{0}, std::min(count, per));
  for (auto& thread : pool) thread.join();
}
} // namespace kasava::train
