// The MCP session of server.hpp: JSON-RPC 2.0 framing and the MCP lifecycle and tool methods.
#include "core/mcp/server.hpp"

#include <exception>
#include <utility>

namespace kasava::mcp {

using util::JsonValue;

namespace {

/// A request that cannot be answered with a result; becomes a JSON-RPC error reply.
struct ProtocolError {
  ErrorCode code;
  std::string message;
};

JsonValue object(std::initializer_list<std::pair<const char*, JsonValue>> members) {
  JsonValue::Object result;
  for (const auto& [key, value] : members) result.push_back({key, value});
  return JsonValue(std::move(result));
}

std::string result_response(const JsonValue& id, JsonValue result) {
  return object({{"jsonrpc", "2.0"}, {"id", id}, {"result", std::move(result)}}).dump();
}

// JSON-RPC ids are strings or numbers (null only in replies to unreadable requests).
bool valid_id(const JsonValue& id) { return id.is_string() || id.is_number(); }

} // namespace

const std::vector<std::string>& supported_protocol_versions() {
  static const std::vector<std::string> versions = {"2025-11-25", "2025-06-18", "2025-03-26",
                                                    "2024-11-05"};
  return versions;
}

ToolOutcome ToolOutcome::error(std::string message) {
  ToolOutcome outcome;
  outcome.text = std::move(message);
  outcome.is_error = true;
  return outcome;
}

std::string error_response(const JsonValue& id, ErrorCode code, std::string_view message) {
  return object({{"jsonrpc", "2.0"},
                 {"id", id},
                 {"error", object({{"code", static_cast<int>(code)}, {"message", message}})}})
      .dump();
}

Server::Server(ToolHandler& handler, ServerInfo info) : m_handler(handler), m_info(std::move(info)) {}

void Server::resume(std::string protocol_version) {
  m_protocol_version = std::move(protocol_version);
  m_initialized = true;
}

std::optional<std::string> Server::handle(std::string_view message) {
  if (message.find_first_not_of(" \t\r\n") == std::string_view::npos) return std::nullopt;
  auto parsed = util::parse_json(message);
  if (!parsed) return error_response(nullptr, ErrorCode::parse_error, "parse error: " + parsed.error().message);
  const JsonValue& request = *parsed;
  if (request.is_array()) {  // batches were removed from MCP in 2025-06-18
    return error_response(nullptr, ErrorCode::invalid_request, "invalid request: batches are not supported");
  }
  if (!request.is_object()) {
    return error_response(nullptr, ErrorCode::invalid_request, "invalid request: expected an object");
  }
  const JsonValue* id = request.find("id");
  const JsonValue* method = request.find("method");
  if (method == nullptr) {
    // A reply from the client (the server sends no requests, so there is nothing to match).
    if (id != nullptr && (request.contains("result") || request.contains("error"))) return std::nullopt;
    return error_response(id != nullptr && valid_id(*id) ? *id : JsonValue(), ErrorCode::invalid_request,
                          "invalid request: no method");
  }
  if (id != nullptr && !valid_id(*id)) {
    return error_response(nullptr, ErrorCode::invalid_request,
                          "invalid request: id must be a string or a number");
  }
  if (request["jsonrpc"].get_string() == nullptr || *request["jsonrpc"].get_string() != "2.0") {
    if (id == nullptr) return std::nullopt;
    return error_response(*id, ErrorCode::invalid_request, "invalid request: jsonrpc must be \"2.0\"");
  }
  if (!method->is_string()) {
    if (id == nullptr) return std::nullopt;
    return error_response(*id, ErrorCode::invalid_request, "invalid request: method must be a string");
  }
  const JsonValue& params = request["params"];
  if (!params.is_null() && !params.is_object()) {
    if (id == nullptr) return std::nullopt;
    return error_response(*id, ErrorCode::invalid_params, "invalid params: expected an object");
  }
  if (id == nullptr) {
    // Notifications (initialized, cancelled, …) need no reply; none changes what we do.
    if (method->as_string() == "notifications/initialized") m_initialized = true;
    return std::nullopt;
  }
  try {
    return result_response(*id, dispatch(method->as_string(), params));
  } catch (const ProtocolError& e) {
    return error_response(*id, e.code, e.message);
  } catch (const std::exception& e) {
    return error_response(*id, ErrorCode::internal_error, std::string("internal error: ") + e.what());
  }
}

JsonValue Server::dispatch(const std::string& method, const JsonValue& params) {
  if (method == "initialize") return initialize(params);
  if (method == "ping") return JsonValue(JsonValue::Object{});
  if (method == "tools/list") return list_tools();
  if (method == "tools/call") return call_tool(params);
  throw ProtocolError{ErrorCode::method_not_found, "method not found: '" + method + "'"};
}

JsonValue Server::initialize(const JsonValue& params) {
  const std::string* requested = params["protocolVersion"].get_string();
  if (requested == nullptr) {
    throw ProtocolError{ErrorCode::invalid_params, "invalid params: initialize needs protocolVersion"};
  }
  m_protocol_version = supported_protocol_versions().front();
  for (const auto& version : supported_protocol_versions()) {
    if (version == *requested) m_protocol_version = version;
  }
  m_initialized = true;
  JsonValue::Object result;
  result.push_back({"protocolVersion", m_protocol_version});
  result.push_back({"capabilities", object({{"tools", object({{"listChanged", false}})}})});
  result.push_back({"serverInfo", object({{"name", m_info.name}, {"version", m_info.version}})});
  if (!m_info.instructions.empty()) result.push_back({"instructions", m_info.instructions});
  return JsonValue(std::move(result));
}

JsonValue Server::list_tools() const {
  JsonValue::Array tools;
  for (const Tool& tool : m_handler.tools()) {
    JsonValue::Object entry;
    entry.push_back({"name", tool.name});
    if (!tool.title.empty()) entry.push_back({"title", tool.title});
    entry.push_back({"description", tool.description});
    entry.push_back({"inputSchema", tool.input_schema});
    entry.push_back({"annotations", object({{"readOnlyHint", tool.read_only},
                                            {"openWorldHint", false}})});
    tools.emplace_back(std::move(entry));
  }
  return object({{"tools", JsonValue(std::move(tools))}});
}

JsonValue Server::call_tool(const JsonValue& params) {
  const std::string* name = params["name"].get_string();
  if (name == nullptr) {
    throw ProtocolError{ErrorCode::invalid_params, "invalid params: tools/call needs a tool name"};
  }
  bool known = false;
  for (const Tool& tool : m_handler.tools()) known = known || tool.name == *name;
  if (!known) throw ProtocolError{ErrorCode::invalid_params, "unknown tool: '" + *name + "'"};
  const JsonValue& arguments = params["arguments"];
  if (!arguments.is_null() && !arguments.is_object()) {
    throw ProtocolError{ErrorCode::invalid_params, "invalid params: arguments must be an object"};
  }
  const ToolOutcome outcome =
      m_handler.call(*name, arguments.is_null() ? JsonValue(JsonValue::Object{}) : arguments);
  JsonValue::Object result;
  result.push_back({"content", JsonValue(JsonValue::Array{object({{"type", "text"}, {"text", outcome.text}})})});
  if (outcome.structured) result.push_back({"structuredContent", *outcome.structured});
  result.push_back({"isError", outcome.is_error});
  return JsonValue(std::move(result));
}

} // namespace kasava::mcp
