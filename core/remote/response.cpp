// Request bodies and response parsing of the embeddings endpoints (see response.hpp).
#include "core/remote/response.hpp"

#include <cmath>

#include "core/util/json.hpp"
#include "core/util/json_value.hpp"
#include "core/util/strings.hpp"

namespace kasava::remote {

std::string embeddings_request_body(const EmbeddingsRequest& request) {
  util::JsonWriter w;
  w.begin_object();
  w.key("input").begin_array();
  for (std::string_view input : request.inputs) w.value(input);  // JsonWriter fixes UTF-8
  w.end_array();
  w.key("model").value(request.model);
  if (!request.input_type.empty()) w.key("input_type").value(request.input_type);
  if (request.voyage) {
    if (request.output_dimension) w.key("output_dimension").value(*request.output_dimension);
    w.key("output_dtype").value(request.output_dtype);
  } else {
    // No encoding_format: float is the default, and some compatible servers reject fields
    // they do not know.
    if (request.output_dimension) w.key("dimensions").value(*request.output_dimension);
  }
  w.end_object();
  return w.str();
}

util::Result<EmbeddingsResponse> parse_embeddings_response(std::string_view body,
                                                           std::size_t expected_count,
                                                           int expected_dimensions) {
  auto parsed = util::parse_json(body, util::JsonParseOptions{16});
  if (!parsed) return util::Error{"malformed response: " + parsed.error().message};
  const util::JsonValue& root = *parsed;
  if (!root.is_object())
    return util::Error{std::string("malformed response: expected an object, got ") +
                       util::json_type_name(root.type())};
  const util::JsonValue::Array* data = root["data"].get_array();
  if (data == nullptr) return util::Error{"malformed response: no 'data' array"};
  if (data->size() != expected_count)
    return util::Error{"expected " + std::to_string(expected_count) + " embeddings, got " +
                       std::to_string(data->size())};

  EmbeddingsResponse response;
  response.vectors.resize(expected_count);
  std::vector<bool> seen(expected_count, false);
  std::size_t dimensions =
      expected_dimensions > 0 ? static_cast<std::size_t>(expected_dimensions) : 0;
  for (std::size_t position = 0; position < data->size(); ++position) {
    const util::JsonValue& item = (*data)[position];
    std::size_t index = position;
    if (const util::JsonValue* given = item.find("index")) {
      const auto integer = given->get_integer();
      if (!integer || *integer < 0 || static_cast<std::size_t>(*integer) >= expected_count)
        return util::Error{"malformed response: item " + std::to_string(position) +
                           " has an invalid index"};
      index = static_cast<std::size_t>(*integer);
    }
    if (seen[index])
      return util::Error{"malformed response: index " + std::to_string(index) + " appears twice"};
    seen[index] = true;
    const util::JsonValue::Array* numbers = item["embedding"].get_array();
    if (numbers == nullptr)
      return util::Error{"malformed response: item " + std::to_string(position) +
                         " has no 'embedding' array"};
    if (numbers->empty()) return util::Error{"embedding " + std::to_string(index) + " is empty"};
    if (dimensions == 0) dimensions = numbers->size();
    if (numbers->size() != dimensions)
      return util::Error{"embedding " + std::to_string(index) + " has " +
                         std::to_string(numbers->size()) + " dimensions, expected " +
                         std::to_string(dimensions)};
    std::vector<float>& vector = response.vectors[index];
    vector.reserve(numbers->size());
    for (const util::JsonValue& number : *numbers) {
      const auto value = number.get_number();
      if (!value || !std::isfinite(static_cast<float>(*value)))
        return util::Error{"malformed response: embedding " + std::to_string(index) +
                           " holds a value that is not a finite number"};
      vector.push_back(static_cast<float>(*value));
    }
  }
  if (const auto tokens = root["usage"]["total_tokens"].get_integer())
    response.total_tokens = *tokens;
  return response;
}

std::string error_detail(std::string_view body) {
  std::string detail;
  if (auto parsed = util::parse_json(body, util::JsonParseOptions{16}); parsed) {
    const util::JsonValue& root = *parsed;
    for (const util::JsonValue* candidate :
         {&root["error"]["message"], &root["detail"], &root["message"], &root["error"]}) {
      if (const std::string* text = candidate->get_string()) {
        detail = *text;
        break;
      }
    }
    if (detail.empty()) {
      // Voyage validation errors: {"detail": [{"msg": …}]}.
      if (const std::string* text = root["detail"][std::size_t{0}]["msg"].get_string())
        detail = *text;
    }
    // JSON without a message: say nothing rather than "{}".
    if (detail.empty() && root.size() > 0) detail = root.dump();
  } else {
    detail = std::string(body);
  }
  detail = util::to_valid_utf8(detail);  // before cutting: replacements grow the text
  const std::size_t newline = detail.find_first_of("\r\n");
  if (newline != std::string::npos) detail.resize(newline);
  for (char& c : detail)
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = ' ';
  detail = std::string(util::trim(detail));
  if (detail.size() > 300) {
    std::size_t cut = 300;
    while (cut > 0 && (static_cast<unsigned char>(detail[cut]) & 0xC0) == 0x80) --cut;
    detail.resize(cut);
    detail += "…";
  }
  return detail;
}

void l2_normalize(std::vector<float>& vector) {
  double sum = 0;
  for (float x : vector) sum += static_cast<double>(x) * x;
  if (sum <= 0) return;
  const double scale = 1.0 / std::sqrt(sum);
  for (float& x : vector) x = static_cast<float>(x * scale);
}

}  // namespace kasava::remote
