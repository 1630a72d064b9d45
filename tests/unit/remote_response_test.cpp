// Tests of the embeddings wire format (core/remote/response.cpp).
#include <catch2/catch.hpp>

#include <cmath>

#include "core/remote/response.hpp"
#include "core/util/json_value.hpp"
#include "core/util/strings.hpp"

using namespace kasava;

TEST_CASE("remote::embeddings_request_body for Voyage and OpenAI") {
  remote::EmbeddingsRequest voyage;
  voyage.model = "voyage-code-3";
  voyage.inputs = {"def f():", "quote \" and \xff"};
  voyage.input_type = "document";
  voyage.output_dimension = 512;
  voyage.voyage = true;
  auto body = util::parse_json(remote::embeddings_request_body(voyage));
  REQUIRE(body);
  CHECK((*body)["model"].as_string() == "voyage-code-3");
  CHECK((*body)["input"].size() == 2);
  CHECK((*body)["input"][std::size_t{1}].as_string() == "quote \" and \xEF\xBF\xBD");
  CHECK((*body)["input_type"].as_string() == "document");
  CHECK((*body)["output_dimension"].as_integer() == 512);
  CHECK((*body)["output_dtype"].as_string() == "float");

  remote::EmbeddingsRequest openai;
  openai.model = "nomic-embed-text";
  openai.inputs = {"x"};
  auto plain = util::parse_json(remote::embeddings_request_body(openai));
  REQUIRE(plain);
  CHECK(!plain->contains("input_type"));
  CHECK(!plain->contains("output_dtype"));
  CHECK(!plain->contains("dimensions"));
  CHECK(!plain->contains("encoding_format"));
  CHECK(plain->size() == 2);
}

TEST_CASE("remote::parse_embeddings_response places vectors by index") {
  auto parsed = remote::parse_embeddings_response(
      R"({"object":"list","data":[{"embedding":[3,4],"index":1},{"embedding":[1,0],"index":0}],
         "usage":{"total_tokens":12}})",
      2, 0);
  REQUIRE(parsed);
  CHECK(parsed->vectors[0] == std::vector<float>{1, 0});
  CHECK(parsed->vectors[1] == std::vector<float>{3, 4});
  CHECK(parsed->total_tokens == 12);
  // Without index fields, position decides.
  auto positional =
      remote::parse_embeddings_response(R"({"data":[{"embedding":[1]},{"embedding":[2]}]})", 2, 1);
  REQUIRE(positional);
  CHECK(positional->vectors[1] == std::vector<float>{2});
}

TEST_CASE("remote::parse_embeddings_response rejects what does not fit") {
  auto error = [](std::string_view body, std::size_t count, int dims) {
    auto parsed = remote::parse_embeddings_response(body, count, dims);
    REQUIRE(!parsed);
    return parsed.error().message;
  };
  CHECK(error("not json", 1, 0).find("malformed response: invalid JSON at byte 0") == 0);
  CHECK(error("[]", 1, 0) == "malformed response: expected an object, got array");
  CHECK(error(R"({"detail":"x"})", 1, 0) == "malformed response: no 'data' array");
  CHECK(error(R"({"data":[{"embedding":[1]}]})", 2, 0) == "expected 2 embeddings, got 1");
  CHECK(error(R"({"data":[{"embedding":[1,2]},{"embedding":[1]}]})", 2, 0) ==
        "embedding 1 has 1 dimensions, expected 2");
  CHECK(error(R"({"data":[{"embedding":[1,2]}]})", 1, 3) ==
        "embedding 0 has 2 dimensions, expected 3");
  CHECK(error(R"({"data":[{"embedding":[]}]})", 1, 0) == "embedding 0 is empty");
  CHECK(error(R"({"data":[{"embedding":[1,"2"]}]})", 1, 0).find("not a finite number") !=
        std::string::npos);
  CHECK(error(R"({"data":[{"embedding":[1e300]}]})", 1, 0).find("not a finite number") !=
        std::string::npos);
  CHECK(error(R"({"data":[{"embedding":[1],"index":0},{"embedding":[1],"index":0}]})", 2, 0) ==
        "malformed response: index 0 appears twice");
  CHECK(error(R"({"data":[{"embedding":[1],"index":5}]})", 1, 0) ==
        "malformed response: item 0 has an invalid index");
  CHECK(error(R"({"data":[{"embedding":"AAAA"}]})", 1, 0) ==
        "malformed response: item 0 has no 'embedding' array");
}

TEST_CASE("remote::error_detail finds the message of each provider's error shape") {
  CHECK(remote::error_detail(R"({"error":{"message":"Incorrect API key","type":"x"}})") ==
        "Incorrect API key");
  CHECK(remote::error_detail(R"({"detail":"Input 3 is too long"})") == "Input 3 is too long");
  CHECK(remote::error_detail(R"({"detail":[{"msg":"field required"}]})") == "field required");
  CHECK(remote::error_detail(R"({"error":"model not found"})") == "model not found");
  CHECK(remote::error_detail("<html>\nBad Gateway</html>") == "<html>");
  CHECK(remote::error_detail("") == "");
  CHECK(remote::error_detail("{}") == "");
  CHECK(remote::error_detail(R"({"code": 7})") == R"({"code":7})");
  CHECK(remote::error_detail(std::string(1000, 'z')).size() <= 303);
  // Found by fuzzing: invalid bytes become 3-byte U+FFFD, so cutting must come after.
  const std::string cut = remote::error_detail(std::string("a\0b", 3) + std::string(500, '\xff'));
  CHECK(cut.size() <= 303);
  CHECK(util::is_valid_utf8(cut));
  CHECK(cut.rfind("a b", 0) == 0);
}

TEST_CASE("remote::l2_normalize") {
  std::vector<float> v = {3, 4};
  remote::l2_normalize(v);
  CHECK(v[0] == Approx(0.6));
  CHECK(v[1] == Approx(0.8));
  std::vector<float> zero = {0, 0};
  remote::l2_normalize(zero);
  CHECK(zero == std::vector<float>{0, 0});
}
