// Fuzzes MCP's Streamable HTTP transport (core/mcp/http_transport) with requests as a remote
// client may send them: the first line is the method, the lines up to a blank one are
// "name: value" headers, the rest is the body; a session ("fuzz-session") is open, so the
// fuzzer reaches the paths after initialize by naming it. Every response must have a status
// the transport documents, and a body that is empty, one JSON value, or one SSE event of it.
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "core/mcp/http_transport.hpp"
#include "core/util/json_value.hpp"

namespace {

class EchoTools : public kasava::mcp::ToolHandler {
public:
  std::vector<kasava::mcp::Tool> tools() const override {
    auto schema = kasava::util::parse_json(R"({"type":"object","properties":{}})").value_or_throw();
    return {kasava::mcp::Tool{"echo", "Echo", "Returns its arguments", schema, true}};
  }
  kasava::mcp::ToolOutcome call(const std::string&,
                                const kasava::util::JsonValue& arguments) override {
    return kasava::mcp::ToolOutcome{arguments.dump(), std::nullopt, false};
  }
};

std::string_view next_line(std::string_view& input) {
  const std::size_t end = std::min(input.find('\n'), input.size());
  const std::string_view line = input.substr(0, end);
  input.remove_prefix(std::min(end + 1, input.size()));
  return line;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using kasava::mcp::HttpRequest;
  using kasava::mcp::HttpResponse;
  EchoTools tools;
  kasava::mcp::HttpTransportOptions options;
  options.max_sessions = 4;
  options.max_sessions_per_principal = 2;
  options.new_session_id = [] { return std::string("fuzz-session"); };
  kasava::mcp::HttpTransport transport(kasava::mcp::ServerInfo{"kasava", "0.0.0-fuzz", ""},
                                       options);
  const auto now = kasava::mcp::HttpTransport::Clock::time_point{};
  HttpRequest initialize;
  initialize.method = "POST";
  initialize.headers = {{"Content-Type", "application/json"}};
  initialize.body =
      R"({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25"}})";
  if (transport.handle(initialize, tools, now).status != 200) std::abort();

  std::string_view input(reinterpret_cast<const char*>(data), size);
  HttpRequest request;
  request.method = std::string(next_line(input));
  while (!input.empty()) {
    const std::string_view line = next_line(input);
    if (line.empty()) break;
    const std::size_t colon = line.find(':');
    if (colon == std::string_view::npos) continue;
    std::string_view value = line.substr(colon + 1);
    while (!value.empty() && value.front() == ' ') value.remove_prefix(1);
    request.headers.emplace_back(std::string(line.substr(0, colon)), std::string(value));
  }
  request.body = std::string(input);

  const HttpResponse response = transport.handle(request, tools, now);
  switch (response.status) {
    case 200:
    case 202:
    case 204:
    case 400:
    case 404:
    case 405:
    case 406:
    case 415:
      break;
    default:
      std::abort();
  }
  if (response.body.empty()) {
    if (response.status == 200) std::abort();
    return 0;
  }
  const std::string* type = response.header("Content-Type");
  if (type == nullptr) std::abort();
  std::string_view json = response.body;
  if (*type == "text/event-stream") {
    constexpr std::string_view prefix = "event: message\ndata: ";
    if (json.substr(0, prefix.size()) != prefix || json.size() < prefix.size() + 2 ||
        json.substr(json.size() - 2) != "\n\n") {
      std::abort();
    }
    json = json.substr(prefix.size(), json.size() - prefix.size() - 2);
    if (json.find('\n') != std::string_view::npos) std::abort();  // one data line
  } else if (*type != "application/json") {
    std::abort();
  }
  if (!kasava::util::parse_json(json)) std::abort();
  return 0;
}
