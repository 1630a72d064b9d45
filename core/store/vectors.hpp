// Chunk vectors as the index keeps them: sign bits (binary codes) for a Hamming pre-filter and
// 4-bit values with one scale per vector for rescoring. Pure functions; see vectors.cpp.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace kasava::store {

/// The largest magnitude of a quantized value: values are 4-bit, in [-7, 7].
inline constexpr int k_value_limit = 7;

/// One vector, quantized twice: the code ranks by Hamming distance (a popcount per 64 bits),
/// the values rescore the survivors by cosine.
struct QuantizedVector {
  std::vector<std::uint8_t> code;   ///< code_bytes(D) bytes: bit i (LSB first) set when v[i] > 0
  std::vector<std::int8_t> values;  ///< D values: round(v[i] / scale), in [-7, 7]
  float scale = 0.0f;               ///< max |v[i]| / 7 (0 for the zero vector)
};

/// Bytes of the binary code of a vector of `dims` dimensions.
inline std::size_t code_bytes(int dims) { return (static_cast<std::size_t>(dims) + 7) / 8; }

/// Quantizes `vector` (any length; kasava's embedders give unit vectors). Each value is
/// reconstructed by scale * values[i] within scale / 2.
QuantizedVector quantize(std::span<const float> vector);

/// The sign bits of `vector` (as QuantizedVector::code).
std::vector<std::uint8_t> binary_code(std::span<const float> vector);

/// Cosine similarity between a float query and a vector's quantized values, held one per int8
/// (the scale cancels out). 0 when either is the zero vector or the lengths differ.
double int8_cosine(std::span<const float> query, std::span<const std::int8_t> values);

/// int8_cosine of one query against many vectors (a search rescores hundreds): the query's
/// norm is computed once. The query must outlive it.
class QueryCosine {
public:
  explicit QueryCosine(std::span<const float> query);
  double operator()(std::span<const std::int8_t> values) const;

private:
  std::span<const float> m_query;
  double m_query_norm = 0.0;  ///< the sum of the squares
};

/// The stored form of a vector: its values two per byte (4-bit two's complement, the first of
/// each pair in the low nibble) followed by the scale (float, bytes of the host: the index is
/// a local cache): (dims + 1) / 2 + 4 bytes. A vector of one dimension, where halving saves
/// nothing, keeps the older form: one value per byte, dims + 4 bytes. Values beyond [-7, 7]
/// (an older kasava's int8 values, read back by unpack_values) are quantized again to 4 bits.
std::vector<std::uint8_t> pack_values(const QuantizedVector& vector);
/// The inverse of pack_values; false when `blob` does not hold `dims` values and a scale.
/// Also reads the older form, one int8 value per byte (dims + 4 bytes): every vector had it
/// before values were 4-bit (values in [-127, 127] then), and indexes made then still hold it.
bool unpack_values(std::span<const std::uint8_t> blob, int dims, std::vector<std::int8_t>& values,
                   float& scale);

} // namespace kasava::store
