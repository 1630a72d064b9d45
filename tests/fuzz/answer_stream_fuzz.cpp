// Fuzzes the decoding of streamed answers (core/answer/stream) for both providers: any bytes
// must decode without crashing; the first byte picks the provider (bit 0: 0 Anthropic,
// 1 OpenAI) and where the stream is split into two reads, and a split stream must give
// exactly the pieces, end state and error of one read. Pieces are valid UTF-8 and add up to
// text_bytes().
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "core/answer/stream.hpp"
#include "core/util/strings.hpp"

namespace {

struct Run {
  std::vector<std::string> pieces;
  std::string error;
  bool finished = false;
  std::string stop_reason;
  std::size_t text_bytes = 0;
};

Run decode(kasava::answer::Provider provider, const std::vector<std::string_view>& reads) {
  kasava::answer::StreamDecoder decoder(provider, 1 << 16);
  Run run;
  for (std::string_view bytes : reads) {
    const auto status = decoder.feed(bytes, [&](std::string_view text) {
      run.pieces.emplace_back(text);
      return true;
    });
    if (!status) {
      run.error = status.error().message;
      break;
    }
  }
  run.finished = decoder.finished();
  run.stop_reason = decoder.stop_reason();
  run.text_bytes = decoder.text_bytes();
  return run;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const auto provider =
      (data[0] & 1) != 0 ? kasava::answer::Provider::openai : kasava::answer::Provider::anthropic;
  const std::string_view stream(reinterpret_cast<const char*>(data) + 1, size - 1);
  const std::size_t cut = stream.empty() ? 0 : (data[0] >> 1) % (stream.size() + 1);
  const Run whole = decode(provider, {stream});
  const Run split = decode(provider, {stream.substr(0, cut), stream.substr(cut)});
  if (whole.pieces != split.pieces || whole.error != split.error ||
      whole.finished != split.finished || whole.stop_reason != split.stop_reason)
    std::abort();
  std::size_t total = 0;
  for (const std::string& piece : whole.pieces) {
    if (piece.empty() || !kasava::util::is_valid_utf8(piece)) std::abort();
    total += piece.size();
  }
  if (total != whole.text_bytes) std::abort();
  if (whole.finished && !whole.error.empty()) std::abort();
  return 0;
}
