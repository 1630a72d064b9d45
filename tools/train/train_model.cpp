// Training the built-in model: the objective and the optimiser.
//
// The model (core/embed/model.cpp) turns a text into v = u / |u| with
//   u = Σ_words s_w · wv(w),   s_w = exp(a_w,side) · (1 + ln count_w),
//   wv(w) = mean of the table rows of w's features (its vocabulary row, if any, and its
//           hashed character n-gram rows).
// A batch holds B (query, code) pairs. With S_ij = scale · v_query_i · v_code_j, the loss is
// the symmetric in-batch softmax (InfoNCE, as in CodeSearchNet and CLIP): each query must
// pick its own code among the B codes of the batch, and each code its own query,
//   L = ½ · mean_i CE(softmax_j S_ij, i) + ½ · mean_j CE(softmax_i S_ij, j).
// The other B - 1 pairs are the negatives; batches made of similar pairs (see train.cpp,
// "hard batches") make them harder.
//
// Gradients flow back through the normalisation (∂v/∂u = (I - v vᵀ) / |u|), to each word
// vector (∂u/∂wv = s_w) and pooling weight (∂u/∂a_w = s_w · wv(w)), then to table rows
// (each feature row gets 1/|features| of its word's gradient). A batch touches a few
// thousand of the table's rows, so Adam is lazy: only touched rows are updated, with the
// moment decay of the steps they missed skipped (as TensorFlow's LazyAdam does).
//
// Work is split over threads by disjoint outputs (texts, then words, then rows), and every
// sum runs in a fixed order, so a seed gives the same model whatever the thread count.
#include "tools/train/train_model.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <unordered_map>

namespace kasava::train {
namespace {

constexpr float k_beta1 = 0.9F;
constexpr float k_beta2 = 0.999F;
constexpr float k_epsilon = 1e-8F;

float dot(const float* a, const float* b, int n) {
  float acc[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  int i = 0;
  for (; i + 8 <= n; i += 8)
    for (int k = 0; k < 8; ++k) acc[k] += a[i + k] * b[i + k];
  float sum = 0;
  for (; i < n; ++i) sum += a[i] * b[i];
  for (float x : acc) sum += x;
  return sum;
}

void axpy(float alpha, const float* x, float* y, int n) {
  for (int i = 0; i < n; ++i) y[i] += alpha * x[i];
}

} // namespace

TrainableModel::TrainableModel(const TrainOptions& options, const Words& words,
                               const std::vector<std::uint32_t>& vocabulary,
                               const std::vector<float>& initial_weight, float unknown_weight)
    : m_options(options), m_words(words), m_vocabulary(vocabulary) {
  m_rows = vocabulary.size() + options.buckets;
  const std::size_t size = m_rows * static_cast<std::size_t>(options.dims);
  m_table.resize(size);
  std::mt19937_64 rng(options.seed);
  std::normal_distribution<float> normal(0.0F, 1.0F / std::sqrt(static_cast<float>(options.dims)));
  for (float& x : m_table) x = normal(rng);
  m_table_m.assign(size, 0.0F);
  m_table_v.assign(size, 0.0F);
  m_row_step.assign(m_rows, 0);
  for (int side = 0; side < 2; ++side) {
    m_log_weight[side].resize(vocabulary.size());
    for (std::size_t i = 0; i < vocabulary.size(); ++i)
      m_log_weight[side][i] = std::log(std::max(initial_weight[i], 0.05F));
    m_log_weight_m[side].assign(vocabulary.size(), 0.0F);
    m_log_weight_v[side].assign(vocabulary.size(), 0.0F);
    m_unknown[side] = std::log(std::max(unknown_weight, 0.05F));
  }
}

float TrainableModel::weight(std::uint32_t word, bool query) const {
  const std::int32_t row = m_words.vocabulary_index[word];
  const int side = query ? 0 : 1;
  return std::exp(row >= 0 ? m_log_weight[side][static_cast<std::size_t>(row)] : m_unknown[side]);
}

void TrainableModel::encode(const Bag& bag, bool query, float* out) const {
  const int dims = m_options.dims;
  std::fill(out, out + dims, 0.0F);
  for (std::size_t k = 0; k < bag.words.size(); ++k) {
    const std::uint32_t word = bag.words[k];
    const std::uint32_t begin = m_words.feature_begin[word];
    const std::uint32_t end = m_words.feature_begin[word + 1];
    if (begin == end) continue;
    const float s = weight(word, query) * bag.repeat[k] / static_cast<float>(end - begin);
    for (std::uint32_t f = begin; f < end; ++f)
      axpy(s, &m_table[static_cast<std::size_t>(m_words.features[f]) * dims], out, dims);
  }
  const float norm = std::sqrt(dot(out, out, dims));
  if (norm > 0)
    for (int i = 0; i < dims; ++i) out[i] /= norm;
}

float TrainableModel::step(const std::vector<const Bag*>& queries,
                           const std::vector<const Bag*>& codes) {
  const int dims = m_options.dims;
  const auto d = static_cast<std::size_t>(dims);
  const int threads = m_options.threads;
  const std::size_t batch = queries.size();
  const std::size_t texts = 2 * batch;
  auto text_bag = [&](std::size_t t) -> const Bag& {
    return t < batch ? *queries[t] : *codes[t - batch];
  };
  ++m_step;

  // Slots: the distinct words of the batch, in first-seen order.
  std::vector<std::uint32_t> slot_word;
  std::vector<std::uint32_t> occurrence_slot;  // per (text, word) in text order
  std::vector<std::size_t> text_begin(texts + 1, 0);
  {
    std::unordered_map<std::uint32_t, std::uint32_t> slots;
    slots.reserve(texts * 64);
    for (std::size_t t = 0; t < texts; ++t) {
      text_begin[t] = occurrence_slot.size();
      for (const std::uint32_t word : text_bag(t).words) {
        auto [it, added] = slots.emplace(word, static_cast<std::uint32_t>(slot_word.size()));
        if (added) slot_word.push_back(word);
        occurrence_slot.push_back(it->second);
      }
    }
    text_begin[texts] = occurrence_slot.size();
  }
  const std::size_t slot_count = slot_word.size();

  // Word vectors.
  std::vector<float> word_vector(slot_count * d, 0.0F);
  parallel_for(slot_count, threads, [&](std::size_t begin, std::size_t end) {
    for (std::size_t s = begin; s < end; ++s) {
      const std::uint32_t word = slot_word[s];
      const std::uint32_t fb = m_words.feature_begin[word];
      const std::uint32_t fe = m_words.feature_begin[word + 1];
      if (fb == fe) continue;
      float* out = &word_vector[s * d];
      const float inverse = 1.0F / static_cast<float>(fe - fb);
      for (std::uint32_t f = fb; f < fe; ++f)
        axpy(inverse, &m_table[static_cast<std::size_t>(m_words.features[f]) * d], out, dims);
    }
  });

  // Occurrence scales s_w and text vectors.
  std::vector<float> occurrence_scale(occurrence_slot.size());
  std::vector<float> unit(texts * d, 0.0F);
  std::vector<float> norm(texts, 0.0F);
  parallel_for(texts, threads, [&](std::size_t begin, std::size_t end) {
    for (std::size_t t = begin; t < end; ++t) {
      const Bag& bag = text_bag(t);
      float* u = &unit[t * d];
      for (std::size_t k = 0; k < bag.words.size(); ++k) {
        const std::size_t o = text_begin[t] + k;
        const float s = weight(bag.words[k], t < batch) * bag.repeat[k];
        occurrence_scale[o] = s;
        axpy(s, &word_vector[occurrence_slot[o] * d], u, dims);
      }
      norm[t] = std::sqrt(dot(u, u, dims));
      if (norm[t] > 0)
        for (int i = 0; i < dims; ++i) u[i] /= norm[t];
    }
  });

  // Similarities and the symmetric softmax loss; gradient with respect to the logits.
  const float scale = m_options.scale;
  std::vector<float> logits(batch * batch);
  parallel_for(batch, threads, [&](std::size_t begin, std::size_t end) {
    for (std::size_t i = begin; i < end; ++i)
      for (std::size_t j = 0; j < batch; ++j)
        logits[i * batch + j] = scale * dot(&unit[i * d], &unit[(batch + j) * d], dims);
  });
  std::vector<float> row_softmax(batch * batch), column_softmax(batch * batch);
  std::vector<double> row_loss(batch), column_loss(batch);
  parallel_for(batch, threads, [&](std::size_t begin, std::size_t end) {
    for (std::size_t i = begin; i < end; ++i) {
      float top = -1e30F;
      for (std::size_t j = 0; j < batch; ++j) top = std::max(top, logits[i * batch + j]);
      double sum = 0;
      for (std::size_t j = 0; j < batch; ++j) sum += std::exp(logits[i * batch + j] - top);
      for (std::size_t j = 0; j < batch; ++j)
        row_softmax[i * batch + j] = static_cast<float>(std::exp(logits[i * batch + j] - top) / sum);
      row_loss[i] = -(logits[i * batch + i] - top - std::log(sum));
      // Column i (code i against every query).
      top = -1e30F;
      for (std::size_t j = 0; j < batch; ++j) top = std::max(top, logits[j * batch + i]);
      sum = 0;
      for (std::size_t j = 0; j < batch; ++j) sum += std::exp(logits[j * batch + i] - top);
      for (std::size_t j = 0; j < batch; ++j)
        column_softmax[j * batch + i] =
            static_cast<float>(std::exp(logits[j * batch + i] - top) / sum);
      column_loss[i] = -(logits[i * batch + i] - top - std::log(sum));
    }
  });
  double loss = 0;
  for (std::size_t i = 0; i < batch; ++i) loss += 0.5 * (row_loss[i] + column_loss[i]);
  loss /= static_cast<double>(batch);
  // dL/dS_ij, times the scale (dS/d(cos) = scale).
  const float factor = 0.5F * scale / static_cast<float>(batch);
  std::vector<float>& grad_logits = logits;  // reused
  for (std::size_t i = 0; i < batch; ++i)
    for (std::size_t j = 0; j < batch; ++j)
      grad_logits[i * batch + j] = factor * (row_softmax[i * batch + j] +
                                             column_softmax[i * batch + j] -
                                             (i == j ? 2.0F : 0.0F));

  // Gradients of the unit vectors, then of the unnormalised sums.
  std::vector<float> grad_u(texts * d, 0.0F);
  parallel_for(texts, threads, [&](std::size_t begin, std::size_t end) {
    std::vector<float> g(d);
    for (std::size_t t = begin; t < end; ++t) {
      std::fill(g.begin(), g.end(), 0.0F);
      if (t < batch) {
        for (std::size_t j = 0; j < batch; ++j)
          axpy(grad_logits[t * batch + j], &unit[(batch + j) * d], g.data(), dims);
      } else {
        const std::size_t j = t - batch;
        for (std::size_t i = 0; i < batch; ++i)
          axpy(grad_logits[i * batch + j], &unit[i * d], g.data(), dims);
      }
      if (norm[t] <= 0) continue;
      const float* v = &unit[t * d];
      const float along = dot(v, g.data(), dims);
      float* out = &grad_u[t * d];
      for (int k = 0; k < dims; ++k) out[k] = (g[static_cast<std::size_t>(k)] - along * v[k]) / norm[t];
    }
  });

  // Per slot: gradient of its word vector and of its pooling weights. Occurrences grouped by
  // slot in text order (counting sort), so each slot sums in a fixed order.
  std::vector<std::size_t> slot_begin(slot_count + 1, 0);
  for (const std::uint32_t s : occurrence_slot) ++slot_begin[s + 1];
  std::partial_sum(slot_begin.begin(), slot_begin.end(), slot_begin.begin());
  std::vector<std::uint32_t> by_slot(occurrence_slot.size());
  std::vector<std::uint32_t> occurrence_text(occurrence_slot.size());
  {
    std::vector<std::size_t> fill(slot_begin.begin(), slot_begin.end() - 1);
    for (std::size_t t = 0; t < texts; ++t)
      for (std::size_t o = text_begin[t]; o < text_begin[t + 1]; ++o) {
        by_slot[fill[occurrence_slot[o]]++] = static_cast<std::uint32_t>(o);
        occurrence_text[o] = static_cast<std::uint32_t>(t);
      }
  }
  std::vector<float> grad_word(slot_count * d, 0.0F);
  std::vector<float> grad_log_weight(slot_count * 2, 0.0F);  // [slot][side]
  parallel_for(slot_count, threads, [&](std::size_t begin, std::size_t end) {
    for (std::size_t s = begin; s < end; ++s) {
      float* g = &grad_word[s * d];
      const float* wv = &word_vector[s * d];
      for (std::size_t k = slot_begin[s]; k < slot_begin[s + 1]; ++k) {
        const std::uint32_t o = by_slot[k];
        const std::uint32_t t = occurrence_text[o];
        const float* gu = &grad_u[t * d];
        axpy(occurrence_scale[o], gu, g, dims);
        grad_log_weight[s * 2 + (t < batch ? 0 : 1)] += occurrence_scale[o] * dot(gu, wv, dims);
      }
    }
  });

  // Pooling weights (Adam, per touched vocabulary word; unknown words share one per side).
  const float step_f = static_cast<float>(m_step);
  const float correction1 = 1.0F - std::pow(k_beta1, step_f);
  const float correction2 = 1.0F - std::pow(k_beta2, step_f);
  auto adam = [&](float& x, float& m, float& v, float g, float rate) {
    m = k_beta1 * m + (1 - k_beta1) * g;
    v = k_beta2 * v + (1 - k_beta2) * g * g;
    x -= rate * (m / correction1) / (std::sqrt(v / correction2) + k_epsilon);
  };
  float unknown_grad[2] = {0, 0};
  for (std::size_t s = 0; s < slot_count; ++s) {
    const std::int32_t row = m_words.vocabulary_index[slot_word[s]];
    for (int side = 0; side < 2; ++side) {
      const float g = grad_log_weight[s * 2 + static_cast<std::size_t>(side)];
      if (g == 0) continue;
      if (row < 0) {
        unknown_grad[side] += g;
        continue;
      }
      const auto r = static_cast<std::size_t>(row);
      adam(m_log_weight[side][r], m_log_weight_m[side][r], m_log_weight_v[side][r], g,
           m_options.weight_learning_rate);
    }
  }
  for (int side = 0; side < 2; ++side)
    adam(m_unknown[side], m_unknown_m[side], m_unknown_v[side], unknown_grad[side],
         m_options.weight_learning_rate);

  // Table rows: each feature row of a slot's word gets 1/|features| of its gradient.
  std::vector<std::pair<std::uint32_t, std::uint32_t>> row_slot;  // (row, slot)
  row_slot.reserve(slot_count * 16);
  for (std::size_t s = 0; s < slot_count; ++s) {
    const std::uint32_t word = slot_word[s];
    for (std::uint32_t f = m_words.feature_begin[word]; f < m_words.feature_begin[word + 1]; ++f)
      row_slot.emplace_back(m_words.features[f], static_cast<std::uint32_t>(s));
  }
  std::sort(row_slot.begin(), row_slot.end());
  // Boundaries between distinct rows, split across threads at row changes.
  std::vector<std::size_t> row_starts;
  for (std::size_t k = 0; k < row_slot.size(); ++k)
    if (k == 0 || row_slot[k].first != row_slot[k - 1].first) row_starts.push_back(k);
  row_starts.push_back(row_slot.size());
  const float rate = m_options.learning_rate;
  parallel_for(row_starts.size() - 1, threads, [&](std::size_t begin, std::size_t end) {
    std::vector<float> g(d);
    for (std::size_t r = begin; r < end; ++r) {
      std::fill(g.begin(), g.end(), 0.0F);
      const std::uint32_t row = row_slot[row_starts[r]].first;
      for (std::size_t k = row_starts[r]; k < row_starts[r + 1]; ++k) {
        const std::uint32_t s = row_slot[k].second;
        const std::uint32_t word = slot_word[s];
        const float share = 1.0F / static_cast<float>(m_words.feature_begin[word + 1] -
                                                      m_words.feature_begin[word]);
        axpy(share, &grad_word[s * d], g.data(), dims);
      }
      // Lazy Adam: decay the moments for the steps this row missed, then one update.
      const std::int64_t missed = m_step - m_row_step[row] - 1;
      m_row_step[row] = m_step;
      const float decay1 = missed > 0 ? std::pow(k_beta1, static_cast<float>(missed)) : 1.0F;
      const float decay2 = missed > 0 ? std::pow(k_beta2, static_cast<float>(missed)) : 1.0F;
      float* x = &m_table[row * d];
      float* m = &m_table_m[row * d];
      float* v = &m_table_v[row * d];
      for (std::size_t k = 0; k < d; ++k) {
        m[k] = k_beta1 * decay1 * m[k] + (1 - k_beta1) * g[k];
        v[k] = k_beta2 * decay2 * v[k] + (1 - k_beta2) * g[k] * g[k];
        x[k] -= rate * (m[k] / correction1) / (std::sqrt(v[k] / correction2) + k_epsilon);
      }
    }
  });
  return static_cast<float>(loss);
}

embed::ModelData TrainableModel::export_model(const std::string& name) const {
  embed::ModelData data;
  data.name = name;
  data.dims = m_options.dims;
  data.buckets = m_options.buckets;
  data.min_n = m_options.min_n;
  data.max_n = m_options.max_n;
  const auto d = static_cast<std::size_t>(m_options.dims);
  data.table.assign(m_rows * d, 0.0F);
  for (std::size_t r = 0; r < m_vocabulary.size(); ++r) {
    const std::uint32_t word = m_vocabulary[r];
    data.vocabulary.push_back(m_words.text[word]);
    data.query_weight.push_back(std::exp(m_log_weight[0][r]));
    data.code_weight.push_back(std::exp(m_log_weight[1][r]));
    const std::uint32_t fb = m_words.feature_begin[word];
    const std::uint32_t fe = m_words.feature_begin[word + 1];
    float* out = &data.table[r * d];
    for (std::uint32_t f = fb; f < fe; ++f)
      axpy(1.0F / static_cast<float>(fe - fb),
           &m_table[static_cast<std::size_t>(m_words.features[f]) * d], out, m_options.dims);
  }
  std::copy(m_table.begin() + static_cast<std::ptrdiff_t>(m_vocabulary.size() * d), m_table.end(),
            data.table.begin() + static_cast<std::ptrdiff_t>(m_vocabulary.size() * d));
  data.unknown_query_weight = std::exp(m_unknown[0]);
  data.unknown_code_weight = std::exp(m_unknown[1]);
  return data;
}

} // namespace kasava::train
