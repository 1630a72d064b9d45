// Fuzzes the Server-Sent Events parser (core/net/sse) that reads streamed answers: any bytes
// must parse without crashing, and splitting the stream into two reads anywhere (the first
// byte picks where) must give exactly the events of one read.
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "core/net/sse.hpp"

namespace {

struct Run {
  std::vector<std::string> events;  // type, id and data joined
  bool ok = true;
  bool at_boundary = false;
};

Run parse(const std::vector<std::string_view>& pieces) {
  kasava::net::SseParser parser(1 << 16);
  Run run;
  for (std::string_view piece : pieces) {
    const auto status = parser.feed(piece, [&](const kasava::net::SseEvent& e) {
      run.events.push_back(e.type + '\x01' + e.id + '\x01' + e.data);
      return true;
    });
    if (!status) {
      run.ok = false;
      break;
    }
  }
  run.at_boundary = parser.at_boundary();
  return run;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::string_view stream(reinterpret_cast<const char*>(data) + 1, size - 1);
  const std::size_t cut = stream.empty() ? 0 : data[0] % (stream.size() + 1);
  const Run whole = parse({stream});
  const Run split = parse({stream.substr(0, cut), stream.substr(cut)});
  if (whole.ok != split.ok) std::abort();
  if (!whole.ok) return 0;
  if (whole.events != split.events || whole.at_boundary != split.at_boundary) std::abort();
  return 0;
}
