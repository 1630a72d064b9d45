// Fuzzes the MCP server (core/mcp/server): any bytes, split into lines as the stdio loop does,
// must get either no reply or one reply that is valid JSON on one line; the session goes on.
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "core/mcp/server.hpp"
#include "core/util/json_value.hpp"

namespace {

// One read-only tool that echoes its arguments: the server's dispatch is what is fuzzed.
class EchoTools : public kasava::mcp::ToolHandler {
public:
  std::vector<kasava::mcp::Tool> tools() const override {
    auto schema = kasava::util::parse_json(R"({"type":"object","properties":{}})").value_or_throw();
    return {kasava::mcp::Tool{"echo", "Echo", "Returns its arguments", schema, true}};
  }
  kasava::mcp::ToolOutcome call(const std::string&, const kasava::util::JsonValue& arguments) override {
    return kasava::mcp::ToolOutcome{arguments.dump(), std::nullopt, false};
  }
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  EchoTools tools;
  kasava::mcp::Server server(tools, kasava::mcp::ServerInfo{"kasava", "0.0.0-fuzz", ""});
  std::string_view input(reinterpret_cast<const char*>(data), size);
  while (!input.empty()) {
    const auto end = std::min(input.find('\n'), input.size());
    const auto reply = server.handle(input.substr(0, end));
    if (reply) {
      if (reply->find('\n') != std::string::npos) std::abort();  // one line per reply
      if (!kasava::util::parse_json(*reply)) std::abort();
    }
    input.remove_prefix(std::min(end + 1, input.size()));
  }
  return 0;
}
