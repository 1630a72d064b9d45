// The wire format of `/v1/embeddings` (Voyage and OpenAI share it): request bodies out,
// response bodies in — parsed strictly, since a server's bytes are untrusted input (fuzzed in
// tests/fuzz/embeddings_response_fuzz.cpp).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/util/result.hpp"

namespace kasava::remote {

/// What goes into one request body.
struct EmbeddingsRequest {
  std::string model;
  std::vector<std::string_view> inputs;
  /// Voyage only: "document" or "query"; empty → the field is left out (OpenAI).
  std::string input_type;
  std::optional<int> output_dimension;  ///< Voyage's output_dimension / OpenAI's dimensions
  bool voyage = false;                  ///< Voyage field names (output_dtype, output_dimension)
  /// Voyage's output_dtype: "float" (default) or "int8" (integers -128..127, a quarter of the
  /// response size; the vectors are normalised all the same).
  std::string output_dtype = "float";
};

/// The JSON body. Inputs are made valid UTF-8 (invalid bytes become U+FFFD).
std::string embeddings_request_body(const EmbeddingsRequest& request);

struct EmbeddingsResponse {
  std::vector<std::vector<float>> vectors;  ///< in input order (placed by `index`)
  std::optional<long long> total_tokens;    ///< usage.total_tokens when present
};

/// Parses `{data:[{embedding:[…], index}], usage:{total_tokens}}`. Checks: valid JSON, a
/// `data` array of exactly `expected_count` items, each index in range and used once (items
/// without `index` take their position), every vector of numbers, finite, non-empty, all of
/// one length and of `expected_dimensions` when that is not 0. Errors describe the first
/// problem: "expected 4 embeddings, got 3", "embedding 2 has 768 dimensions, expected 1024".
util::Result<EmbeddingsResponse> parse_embeddings_response(std::string_view body,
                                                           std::size_t expected_count,
                                                           int expected_dimensions);

/// The human part of an error body: OpenAI's `error.message`, Voyage's `detail`, a plain
/// `message`/`error` string, else the compact JSON or the body's first line — one line, at
/// most 300 bytes, valid UTF-8. Empty for an empty body and an empty JSON object or array.
std::string error_detail(std::string_view body);

/// Scales `vector` to unit length (a zero vector stays zero).
void l2_normalize(std::vector<float>& vector);

}  // namespace kasava::remote
