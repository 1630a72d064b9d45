// The /mcp route of serve_mcp.hpp: the served index as the tools' place, the caller's token
// as the session's principal, httpd's request and response mapped to the transport's.
#include "commands/serve_mcp.hpp"

#include <cstdint>
#include <memory>

#include "commands/mcp_tools.hpp"
#include "core/mcp/http_transport.hpp"

namespace kasava::commands {

namespace {

/// The index serve serves, for one caller.
class ServedPlace : public ToolPlace {
public:
  ServedPlace(const QueryTarget& target, const std::string& repository, const serve::Caller& caller)
      : m_target(target), m_repository(repository), m_caller(caller) {}

  QueryTarget search_target() override { return visible(); }
  QueryTarget located_target() override { return visible(); }
  bool refreshes() const override { return false; }

private:
  const QueryTarget& visible() const {
    if (!m_caller.may_see(m_repository))
      throw util::Failure("this token may not see the repository served here");
    return m_target;
  }

  const QueryTarget& m_target;
  const std::string& m_repository;
  const serve::Caller& m_caller;
};

// Sessions belong to the token that opened them (its address: the tokens live as long as the
// server, and no secret is kept beside the sessions); without tokens, to everyone.
std::string principal_of(const serve::Caller& caller) {
  return caller.token == nullptr
             ? ""
             : "token@" + std::to_string(reinterpret_cast<std::uintptr_t>(caller.token));
}

}  // namespace

serve::Route mcp_route(Context& context, const QueryTarget& target, const std::string& repository) {
  auto transport = std::make_shared<mcp::HttpTransport>(
      mcp::ServerInfo{"kasava", KASAVA_VERSION, k_mcp_instructions});
  serve::Route route;
  route.path = "/mcp";
  route.methods = {"POST", "GET", "DELETE"};
  route.access = serve::Access::token;
  route.rate_limited = true;
  route.handle = [&context, target, repository, transport](const httpd::Request& request,
                                                           const serve::Caller& caller) {
    ServedPlace place(target, repository, caller);
    KasavaTools tools(context, place);
    mcp::HttpRequest mcp_request;
    mcp_request.method = request.method;
    mcp_request.headers = request.headers;
    mcp_request.body = request.body;
    mcp_request.principal = principal_of(caller);
    mcp::HttpResponse reply =
        transport->handle(mcp_request, tools, mcp::HttpTransport::Clock::now());
    httpd::Response response;
    response.status = reply.status;
    response.headers = std::move(reply.headers);
    response.body = std::move(reply.body);
    return response;
  };
  return route;
}

}  // namespace kasava::commands
