// Tests of the decoding of streamed answers (core/answer/stream.cpp): both providers' event
// shapes, however the bytes are split, and the errors a broken stream gives.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "core/answer/stream.hpp"

using namespace kasava;

namespace {

const std::string k_anthropic_stream =
    "event: message_start\n"
    "data: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_1\",\"type\":\"message\","
    "\"role\":\"assistant\",\"content\":[],\"model\":\"claude-x\",\"stop_reason\":null,"
    "\"usage\":{\"input_tokens\":25,\"output_tokens\":1}}}\n\n"
    "event: content_block_start\n"
    "data: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\","
    "\"text\":\"\"}}\n\n"
    "event: ping\n"
    "data: {\"type\": \"ping\"}\n\n"
    "event: content_block_delta\n"
    "data: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\","
    "\"text\":\"Login is in \"}}\n\n"
    "event: content_block_delta\n"
    "data: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\","
    "\"text\":\"src/auth.py:10.\"}}\n\n"
    "event: content_block_stop\n"
    "data: {\"type\":\"content_block_stop\",\"index\":0}\n\n"
    "event: message_delta\n"
    "data: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\","
    "\"stop_sequence\":null},\"usage\":{\"output_tokens\":15}}\n\n"
    "event: message_stop\n"
    "data: {\"type\":\"message_stop\"}\n\n";

const std::string k_openai_stream =
    "data: {\"id\":\"c1\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,"
    "\"delta\":{\"role\":\"assistant\",\"content\":\"\"},\"finish_reason\":null}]}\n\n"
    "data: {\"id\":\"c1\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Login is in \"},"
    "\"finish_reason\":null}]}\n\n"
    "data: {\"id\":\"c1\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"src/auth.py:10.\"},"
    "\"finish_reason\":null}]}\n\n"
    "data: {\"id\":\"c1\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n"
    "data: {\"id\":\"c1\",\"choices\":[],\"usage\":{\"total_tokens\":40}}\n\n"
    "data: [DONE]\n\n";

struct Decoded {
  std::vector<std::string> pieces;
  std::string error;
};

Decoded decode(answer::StreamDecoder& decoder, const std::vector<std::string>& reads) {
  Decoded decoded;
  for (const std::string& bytes : reads) {
    auto status = decoder.feed(bytes, [&](std::string_view text) {
      decoded.pieces.emplace_back(text);
      return true;
    });
    if (!status) {
      decoded.error = status.error().message;
      break;
    }
  }
  return decoded;
}

}  // namespace

TEST_CASE("answer::StreamDecoder reads Anthropic's events") {
  answer::StreamDecoder decoder(answer::Provider::anthropic);
  const Decoded decoded = decode(decoder, {k_anthropic_stream});
  CHECK(decoded.error.empty());
  CHECK(decoded.pieces == std::vector<std::string>{"Login is in ", "src/auth.py:10."});
  CHECK(decoder.finished());
  CHECK(decoder.stop_reason() == "end_turn");
  CHECK(!decoder.hit_token_limit());
  CHECK(decoder.text_bytes() == std::string("Login is in src/auth.py:10.").size());
}

TEST_CASE("answer::StreamDecoder reads OpenAI's chunks") {
  answer::StreamDecoder decoder(answer::Provider::openai);
  const Decoded decoded = decode(decoder, {k_openai_stream});
  CHECK(decoded.error.empty());
  CHECK(decoded.pieces == std::vector<std::string>{"Login is in ", "src/auth.py:10."});
  CHECK(decoder.finished());
  CHECK(decoder.stop_reason() == "stop");
}

TEST_CASE("answer::StreamDecoder gives the same pieces however the bytes are split") {
  for (const auto provider : {answer::Provider::anthropic, answer::Provider::openai}) {
    const std::string& stream =
        provider == answer::Provider::anthropic ? k_anthropic_stream : k_openai_stream;
    for (std::size_t cut = 0; cut <= stream.size(); cut += 7) {
      answer::StreamDecoder decoder(provider);
      const Decoded decoded = decode(decoder, {stream.substr(0, cut), stream.substr(cut)});
      std::string joined;
      for (const auto& piece : decoded.pieces) joined += piece;
      CHECK(joined == "Login is in src/auth.py:10.");
      CHECK(decoder.finished());
    }
  }
}

TEST_CASE("answer::StreamDecoder stops at the end marker and ignores what follows") {
  answer::StreamDecoder decoder(answer::Provider::openai);
  const Decoded decoded = decode(
      decoder, {k_openai_stream + "data: {\"choices\":[{\"delta\":{\"content\":\"late\"}}]}\n\n"});
  CHECK(decoded.error.empty());
  CHECK(decoded.pieces.size() == 2);
}

TEST_CASE("answer::StreamDecoder reports a stream cut before the end marker as unfinished") {
  answer::StreamDecoder decoder(answer::Provider::anthropic);
  const Decoded decoded = decode(
      decoder, {k_anthropic_stream.substr(0, k_anthropic_stream.find("event: message_delta"))});
  CHECK(decoded.error.empty());
  CHECK(decoded.pieces.size() == 2);
  CHECK(!decoder.finished());
}

TEST_CASE("answer::StreamDecoder turns error events into errors") {
  SECTION("anthropic") {
    answer::StreamDecoder decoder(answer::Provider::anthropic);
    const Decoded decoded = decode(
        decoder, {"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,"
                  "\"delta\":{\"type\":\"text_delta\",\"text\":\"Part\"}}\n\n"
                  "event: error\ndata: {\"type\": \"error\", \"error\": {\"type\": "
                  "\"overloaded_error\", \"message\": \"Overloaded\"}}\n\n"});
    CHECK(decoded.pieces == std::vector<std::string>{"Part"});
    CHECK(decoded.error == "the model reported an error: overloaded_error: Overloaded");
    // Failed for good: more bytes give the same error.
    auto again = decoder.feed("event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n", {});
    REQUIRE(!again);
    CHECK(again.error().message == decoded.error);
    CHECK(!decoder.finished());
  }
  SECTION("openai") {
    answer::StreamDecoder decoder(answer::Provider::openai);
    const Decoded decoded = decode(decoder, {"data: {\"error\":{\"message\":\"The server had an "
                                             "error\",\"type\":\"server_error\"}}\n\n"});
    CHECK(decoded.error == "the model reported an error: server_error: The server had an error");
  }
}

TEST_CASE("answer::StreamDecoder rejects malformed events") {
  SECTION("anthropic: invalid JSON") {
    answer::StreamDecoder decoder(answer::Provider::anthropic);
    const Decoded decoded = decode(
        decoder,
        {"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"delta\":\n\n"});
    CHECK(decoded.error.find(
              "malformed 'content_block_delta' event from the model: invalid JSON at byte") == 0);
  }
  SECTION("anthropic: text delta without text") {
    answer::StreamDecoder decoder(answer::Provider::anthropic);
    const Decoded decoded = decode(
        decoder, {"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"delta\":"
                  "{\"type\":\"text_delta\",\"text\":7}}\n\n"});
    CHECK(decoded.error.find("a text_delta without text") != std::string::npos);
  }
  SECTION("openai: not an object, and content of the wrong type") {
    answer::StreamDecoder decoder(answer::Provider::openai);
    CHECK(decode(decoder, {"data: [1,2]\n\n"}).error ==
          "malformed event from the model: not a JSON object");
    answer::StreamDecoder other(answer::Provider::openai);
    CHECK(decode(other, {"data: {\"choices\":[{\"delta\":{\"content\":5}}]}\n\n"}).error ==
          "malformed event from the model: delta.content is a number, expected a string");
  }
  SECTION("an event larger than the limit") {
    answer::StreamDecoder decoder(answer::Provider::openai, 1000);
    CHECK(decode(decoder, {"data: " + std::string(2000, 'x')}).error.find("exceeds 1000 bytes") !=
          std::string::npos);
  }
}

TEST_CASE("answer::StreamDecoder ignores events and deltas that are not answer text") {
  answer::StreamDecoder decoder(answer::Provider::anthropic);
  const Decoded decoded = decode(
      decoder,
      {": keep-alive comment\n\n"
       "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"delta\":{\"type\":"
       "\"thinking_delta\",\"thinking\":\"hmm\"}}\n\n"
       "event: some_future_event\ndata: {\"type\":\"some_future_event\"}\n\n"
       "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"delta\":{\"type\":"
       "\"text_delta\",\"text\":\"ok\"}}\n\n"
       "event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":"
       "\"max_tokens\"}}\n\n"
       "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n"});
  CHECK(decoded.error.empty());
  CHECK(decoded.pieces == std::vector<std::string>{"ok"});
  CHECK(decoder.hit_token_limit());
}

TEST_CASE("answer::error_detail") {
  CHECK(
      answer::error_detail(
          R"({"type":"error","error":{"type":"invalid_request_error","message":"max_tokens: too big"}})") ==
      "invalid_request_error: max_tokens: too big");
  CHECK(
      answer::error_detail(
          R"({"error":{"message":"The model `x` does not exist","type":"invalid_request_error","code":"model_not_found"}})") ==
      "invalid_request_error: The model `x` does not exist");
  CHECK(answer::error_detail(R"({"error":"model 'x' not found"})") == "model 'x' not found");
  CHECK(answer::error_detail("Bad\ngateway") == "Bad gateway");
  CHECK(answer::error_detail("") == "");
  const std::string capped = answer::error_detail(std::string(1000, 'e'));
  CHECK(capped.size() <= 300 + std::string("…").size());
}
