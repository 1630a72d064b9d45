// Quantization of chunk vectors and the Hamming kernel of the semantic pre-filter.
//
// Why two quantizations. `ask` must rank 100,000 chunks in a few milliseconds, so it cannot
// read 100,000 float vectors (100 MB at 256 dimensions). Instead each vector is kept as
//   - a binary code: one sign bit per dimension (32 bytes at 256-d). For unit vectors the
//     Hamming distance between sign codes estimates the angle between them (random-hyperplane
//     LSH: P[bit differs] = angle / pi, here with the model's own axes as hyperplanes). A
//     scan of all codes is a few XORs and POPCNTs per chunk: ~3 MB touched for 100k chunks.
//   - 4-bit values with one scale per vector (max |v_i| / 7): half a byte per dimension, read
//     only for the few hundred chunks the Hamming scan keeps, to rescore them by cosine.
// The prototype measured this scheme: the true answer was in the Hamming top 100 for ~90%
// of queries and the MRR lost under half a point after int8 rescoring. 4-bit values lose
// nothing measurable against int8 (bench/quality.py, CoSQA dev, MRR semantic / hybrid: int8
// .448 / .483, 4-bit .453 / .485, 3-bit .446 / .480) and halve the largest table of the index
// (on the 110k-chunk synthetic repository, 28.7 MB of 78.6). The rounding error of each value
// is at most half a step and as good as random from one dimension to the next, so over 256
// dimensions it moves a cosine by 0.008 (standard deviation, random unit vectors). The
// cosine against the values needs no scale: cos(q, s·v) = cos(q, v) for any s > 0.

#include "core/store/vectors.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <type_traits>

namespace kasava::store {

namespace {

// max |v[i]|, or 0 for an empty vector.
float largest_magnitude(std::span<const float> vector) {
  float largest = 0.0f;
  for (const float value : vector) largest = std::max(largest, std::fabs(value));
  return largest;
}

} // namespace

// Both loops below are written without branches on the values: a vector's signs are as good as
// random, so a branch per dimension was mispredicted half the time, and the rounding loop now
// vectorises. Quantizing 110,000 vectors of 256 dimensions took ~600 ms that way, ~50 ms now.
std::vector<std::uint8_t> binary_code(std::span<const float> vector) {
  std::vector<std::uint8_t> code(code_bytes(static_cast<int>(vector.size())), 0);
  for (std::size_t byte = 0; byte < code.size(); ++byte) {
    const std::size_t first = 8 * byte;
    const std::size_t bits = std::min<std::size_t>(8, vector.size() - first);
    unsigned value = 0;
    for (std::size_t bit = 0; bit < bits; ++bit) {
      value |= static_cast<unsigned>(vector[first + bit] > 0.0f) << bit;
    }
    code[byte] = static_cast<std::uint8_t>(value);
  }
  return code;
}

QuantizedVector quantize(std::span<const float> vector) {
  QuantizedVector quantized;
  quantized.code = binary_code(vector);
  quantized.values.resize(vector.size(), 0);
  // Computed after the calls above, so the running maximum stays in a register (live across
  // them, GCC kept it in memory: a store and a load per dimension).
  const float largest = largest_magnitude(vector);
  constexpr float limit = static_cast<float>(k_value_limit);
  quantized.scale = largest / limit;
  if (largest > 0.0f) {
    const float inverse = limit / largest;
    std::int8_t* values = quantized.values.data();
    for (std::size_t i = 0; i < vector.size(); ++i) {
      // Round half away from zero without std::round's library call: |v| * inverse <= 7.
      // (copysign gives -0.5 for -0.0, where a comparison gave +0.5: both truncate to 0.)
      const float step = vector[i] * inverse;
      values[i] = static_cast<std::int8_t>(step + std::copysign(0.5f, step));
    }
  }
  return quantized;
}

double int8_cosine(std::span<const float> query, std::span<const std::int8_t> values) {
  return QueryCosine(query)(values);
}

QueryCosine::QueryCosine(std::span<const float> query) : m_query(query) {
  for (const float v : query) m_query_norm += static_cast<double>(v) * v;
}

double QueryCosine::operator()(std::span<const std::int8_t> values) const {
  if (m_query.size() != values.size() || m_query.empty()) return 0.0;
  // Four running sums of the products, not one, which waited out each addition's latency at
  // every dimension. The values' norm is a sum of small integers, exact in any order.
  constexpr std::size_t k_lanes = 4;
  double dot[k_lanes] = {};
  std::int64_t values_norm = 0;
  const std::size_t dims = values.size();
  std::size_t i = 0;
  for (; i + k_lanes <= dims; i += k_lanes) {
    for (std::size_t lane = 0; lane < k_lanes; ++lane) {
      const int v = values[i + lane];
      dot[lane] += static_cast<double>(m_query[i + lane]) * v;
      values_norm += v * v;
    }
  }
  for (; i < dims; ++i) {
    const int v = values[i];
    dot[0] += static_cast<double>(m_query[i]) * v;
    values_norm += v * v;
  }
  if (m_query_norm <= 0.0 || values_norm <= 0) return 0.0;
  const double product = (dot[0] + dot[1]) + (dot[2] + dot[3]);
  return product / std::sqrt(m_query_norm * static_cast<double>(values_norm));
}

std::vector<std::uint8_t> pack_values(const QuantizedVector& vector) {
  const std::size_t dims = vector.values.size();
  // Values beyond the 4-bit range are an older kasava's int8 ones, which its vector cache of
  // remote models still holds: they are quantized again, to 4 bits of the same vector.
  int largest = 0;
  for (const std::int8_t value : vector.values) largest = std::max(largest, std::abs(int{value}));
  std::span<const std::int8_t> values = vector.values;
  float scale = vector.scale;
  std::vector<std::int8_t> requantized;
  if (largest > k_value_limit) {
    const double step = static_cast<double>(largest) / k_value_limit;
    requantized.resize(dims);
    for (std::size_t i = 0; i < dims; ++i) {
      requantized[i] = static_cast<std::int8_t>(std::lround(values[i] / step));
    }
    values = requantized;
    scale = static_cast<float>(scale * step);
  }
  const bool halved = dims >= 2;
  const std::size_t value_bytes = halved ? (dims + 1) / 2 : dims;
  std::vector<std::uint8_t> blob(value_bytes + sizeof(float), 0);
  if (halved) {
    for (std::size_t i = 0; i < dims; ++i) {
      const auto nibble = static_cast<std::uint8_t>(static_cast<std::uint8_t>(values[i]) & 0x0F);
      blob[i / 2] |= static_cast<std::uint8_t>(i % 2 == 0 ? nibble : nibble << 4);
    }
  } else {
    std::memcpy(blob.data(), values.data(), dims);
  }
  std::memcpy(blob.data() + value_bytes, &scale, sizeof(float));
  return blob;
}

bool unpack_values(std::span<const std::uint8_t> blob, int dims, std::vector<std::int8_t>& values,
                   float& scale) {
  if (dims <= 0) return false;
  const auto count = static_cast<std::size_t>(dims);
  const std::size_t halved_bytes = (count + 1) / 2;
  if (count >= 2 && blob.size() == halved_bytes + sizeof(float)) {
    values.resize(count);
    // Sign-extends the 4-bit two's complement: 8..15 are -8..-1. Low nibble first. The
    // pointers say the two do not overlap, so the loop is vectorised.
    const auto widen = [](unsigned nibble) { return static_cast<std::int8_t>(static_cast<int>(nibble ^ 0x08u) - 8); };
    const std::uint8_t* __restrict packed = blob.data();
    std::int8_t* __restrict out = values.data();
    for (std::size_t i = 0; i < count / 2; ++i) {
      out[2 * i] = widen(packed[i] & 0x0Fu);
      out[2 * i + 1] = widen(packed[i] >> 4);
    }
    if (count % 2 != 0) out[count - 1] = widen(packed[count / 2] & 0x0Fu);
    std::memcpy(&scale, blob.data() + halved_bytes, sizeof(float));
    return true;
  }
  if (blob.size() != count + sizeof(float)) return false;
  values.resize(count);
  std::memcpy(values.data(), blob.data(), count);
  std::memcpy(&scale, blob.data() + count, sizeof(float));
  return true;
}

} // namespace kasava::store
