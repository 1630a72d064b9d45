// Times util::parse_json on the two kinds of JSON kasava reads most: an MCP tools/call message
// and an embeddings response of 128 vectors of 1024 floats (written as OpenAI writes them,
// ~1.9 MB). Prints one JSON line; the figure to watch before choosing a faster parser.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <random>
#include <string>

#include "core/util/json_value.hpp"

namespace {

// Microseconds per call of f, the best of 7 rounds of `calls` calls.
template <class F>
double best_microseconds(F f, int calls) {
  double best = 1e300;
  for (int round = 0; round < 7; ++round) {
    const auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < calls; ++i) f();
    const std::chrono::duration<double, std::micro> took = std::chrono::steady_clock::now() - start;
    best = std::min(best, took.count() / calls);
  }
  return best;
}

}  // namespace

int main() {
  using kasava::util::parse_json;
  const std::string call =
      R"({"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"search","arguments":)"
      R"({"query":"where is the retry backoff configured","limit":5,"mode":"hybrid",)"
      R"("path":"src/net/"},"_meta":{"progressToken":"tok-17"}}})";
  std::mt19937 random(42);
  std::normal_distribution<double> component(0.0, 0.03);
  std::string embeddings = R"({"object":"list","data":[)";
  for (int i = 0; i < 128; ++i) {
    embeddings += (i > 0 ? "," : "") + std::string(R"({"object":"embedding","index":)") +
                  std::to_string(i) + R"(,"embedding":[)";
    for (int k = 0; k < 1024; ++k) {
      char number[32];
      std::snprintf(number, sizeof number, "%s%.10g", k > 0 ? "," : "", component(random));
      embeddings += number;
    }
    embeddings += "]}";
  }
  embeddings += R"(],"model":"m","usage":{"prompt_tokens":9000,"total_tokens":9000}})";

  std::size_t sink = 0;
  const double call_us = best_microseconds([&] { sink += parse_json(call)->size(); }, 20000);
  const double dump_us = best_microseconds([&] { sink += parse_json(call)->dump().size(); }, 20000);
  const double embeddings_us =
      best_microseconds([&] { sink += parse_json(embeddings, {16})->size(); }, 10);
  std::printf(
      R"({"tools_call_bytes":%zu,"tools_call_parse_us":%.2f,"tools_call_parse_dump_us":%.2f,)"
      R"("embeddings_bytes":%zu,"embeddings_parse_ms":%.1f,"sink":%zu})"
      "\n",
      call.size(), call_us, dump_us, embeddings.size(), embeddings_us / 1000, sink);
}
