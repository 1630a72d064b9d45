// `kasava serve`'s /mcp route: MCP's Streamable HTTP transport (core/mcp/http_transport) with
// the tools of `kasava mcp` (mcp_tools.hpp) over the index (or shared store) the server serves — read as it is,
// never refreshed or written — and limited to what the caller's token may see: a token that
// may not see the served repository gets an error from every tool, and a session answers only
// the token that opened it.
#pragma once

#include <string>

#include "commands/context.hpp"
#include "commands/store_search.hpp"
#include "commands/target.hpp"
#include "core/serve/api.hpp"

namespace kasava::commands {

/// The route for POST, GET (405: no stream) and DELETE on /mcp. `context` must outlive it.
serve::Route mcp_route(Context& context, const QueryTarget& target, const std::string& repository);
/// The same over a shared store's repositories (StoreTools), each caller seeing those its
/// token may see; through `store` (its connections), which must outlive the route.
serve::Route store_mcp_route(Context& context, StoreAccess& store);

}  // namespace kasava::commands
