// The Model Context Protocol (MCP) server as a pure function of messages: one JSON-RPC 2.0
// message in (a line of stdio), at most one message out. Lifecycle (initialize with version
// negotiation, notifications/initialized, ping), tools/list and tools/call; the tools
// themselves are behind ToolHandler. Never prints and never reads stdin: commands/mcp.cpp
// owns the loop.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/util/json_value.hpp"

namespace kasava::mcp {

/// JSON-RPC 2.0 error codes used by the server.
enum class ErrorCode : int {
  parse_error = -32700,       ///< the line is not JSON
  invalid_request = -32600,   ///< JSON, but not a JSON-RPC request
  method_not_found = -32601,  ///< a request for a method the server does not have
  invalid_params = -32602,    ///< params of the wrong shape, or an unknown tool
  internal_error = -32603,    ///< the tool handler failed unexpectedly
};

/// Protocol versions the server speaks, newest first. A client asking for one of these gets
/// it; any other request gets the newest (the client then decides whether to go on).
const std::vector<std::string>& supported_protocol_versions();

/// One tool as tools/list describes it.
struct Tool {
  std::string name;
  std::string title;
  std::string description;
  util::JsonValue input_schema;  ///< a JSON Schema object
  bool read_only = true;         ///< annotations.readOnlyHint
};

/// The result of one tools/call: text for every client, structured content for clients that
/// read it, and whether the tool failed (a tool error the model sees, not a protocol error).
struct ToolOutcome {
  std::string text;
  std::optional<util::JsonValue> structured;  ///< an object, or nothing
  bool is_error = false;

  /// A failed call with this message (isError true).
  static ToolOutcome error(std::string message);
};

/// What the server serves. Implemented by the command; faked in unit tests.
class ToolHandler {
public:
  virtual ~ToolHandler() = default;
  /// The tools, in the order tools/list shows them.
  virtual std::vector<Tool> tools() const = 0;
  /// Runs tool `name` (one of tools()) with its arguments (an object, maybe empty). Bad
  /// arguments and failures are outcomes with is_error; exceptions become internal errors.
  virtual ToolOutcome call(const std::string& name, const util::JsonValue& arguments) = 0;
};

/// Name and version reported in serverInfo.
struct ServerInfo {
  std::string name = "kasava";
  std::string version;
  std::string instructions;  ///< a hint for the model on how to use the tools ("" = none)
};

/// One MCP session: feeds messages in order, returns the replies.
class Server {
public:
  Server(ToolHandler& handler, ServerInfo info);

  /// Handles one message (a line without its newline). Returns the reply to send as one line,
  /// or nothing for notifications, replies from the client and blank lines. Malformed input
  /// gets a JSON-RPC error reply; the session goes on.
  std::optional<std::string> handle(std::string_view message);

  /// Continues a session whose initialize was answered earlier, in the version agreed then
  /// (the HTTP transport makes a Server per request and keeps the sessions itself).
  void resume(std::string protocol_version);

  /// True once an initialize request has been answered.
  bool initialized() const { return m_initialized; }
  /// The protocol version agreed in initialize ("" before).
  const std::string& protocol_version() const { return m_protocol_version; }

private:
  util::JsonValue dispatch(const std::string& method, const util::JsonValue& params);
  util::JsonValue initialize(const util::JsonValue& params);
  util::JsonValue list_tools() const;
  util::JsonValue call_tool(const util::JsonValue& params);

  ToolHandler& m_handler;
  ServerInfo m_info;
  bool m_initialized = false;
  std::string m_protocol_version;
};

/// A JSON-RPC error response (id may be null when the request's id is unknown).
std::string error_response(const util::JsonValue& id, ErrorCode code, std::string_view message);

} // namespace kasava::mcp
