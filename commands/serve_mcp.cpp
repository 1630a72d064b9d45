// The /mcp route of serve_mcp.hpp: the served index as the tools' place (with read-only
// connections kept between calls), the caller's token as the session's principal, httpd's
// request and response mapped to the transport's.
#include "commands/serve_mcp.hpp"

#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "commands/mcp_tools.hpp"
#include "commands/open_index.hpp"
#include "core/mcp/http_transport.hpp"

namespace kasava::commands {

namespace {

/// Read-only connections to the served index kept between tool calls, so that a search finds
/// the pages it needs in the connection's cache (as serve's own pool does for the API).
class KeptStores : public std::enable_shared_from_this<KeptStores> {
public:
  explicit KeptStores(std::string path) : m_path(std::move(path)) {}

  /// A connection for one call; it joins the idle ones when released.
  std::shared_ptr<store::Store> lend() {
    std::unique_ptr<store::Store> store;
    {
      const std::lock_guard lock(m_mutex);
      if (!m_idle.empty()) {
        store = std::move(m_idle.back());
        m_idle.pop_back();
      }
    }
    if (!store) {
      store = open_store(m_path, store::OpenMode::read_only);
      store->set_page_cache(k_page_cache_kib);
    }
    return std::shared_ptr<store::Store>(store.release(),
                                         [self = shared_from_this()](store::Store* lent) {
                                           std::unique_ptr<store::Store> returned(lent);
                                           const std::lock_guard lock(self->m_mutex);
                                           if (self->m_idle.size() < k_max_idle) {
                                             self->m_idle.push_back(std::move(returned));
                                           }
                                         });
  }

private:
  static constexpr std::size_t k_max_idle = 2;  ///< an agent calls its tools one at a time
  static constexpr std::int64_t k_page_cache_kib = 8192;

  std::string m_path;
  std::mutex m_mutex;
  std::vector<std::unique_ptr<store::Store>> m_idle;
};

/// The index serve serves, for one caller.
class ServedPlace : public ToolPlace {
public:
  ServedPlace(const QueryTarget& target, const std::string& repository, const serve::Caller& caller,
              KeptStores& stores)
      : m_target(target), m_repository(repository), m_caller(caller), m_stores(stores) {}

  QueryTarget search_target() override { return visible(); }
  QueryTarget located_target() override { return visible(); }
  bool refreshes() const override { return false; }
  std::shared_ptr<store::Store> open_index(const QueryTarget& /*target*/) override {
    return m_stores.lend();
  }

private:
  const QueryTarget& visible() const {
    if (!m_caller.may_see(m_repository)) {
      throw util::Failure("this token may not see the repository served here");
    }
    return m_target;
  }

  const QueryTarget& m_target;
  const std::string& m_repository;
  const serve::Caller& m_caller;
  KeptStores& m_stores;
};

// Sessions belong to the token that opened them (its address: the tokens live as long as the
// server, and no secret is kept beside the sessions); without tokens, to everyone.
std::string principal_of(const serve::Caller& caller) {
  return caller.token == nullptr
             ? ""
             : "token@" + std::to_string(reinterpret_cast<std::uintptr_t>(caller.token));
}

}  // namespace

namespace {

// One request to /mcp answered by the transport with these tools.
httpd::Response answer(mcp::HttpTransport& transport, const httpd::Request& request, const serve::Caller& caller,
                       mcp::ToolHandler& tools) {
  mcp::HttpRequest mcp_request;
  mcp_request.method = request.method;
  mcp_request.headers = request.headers;
  mcp_request.body = request.body;
  mcp_request.principal = principal_of(caller);
  mcp::HttpResponse reply = transport.handle(mcp_request, tools, mcp::HttpTransport::Clock::now());
  httpd::Response response;
  response.status = reply.status;
  response.headers = std::move(reply.headers);
  response.body = std::move(reply.body);
  return response;
}

serve::Route route_to(serve::RouteHandler handle) {
  serve::Route route;
  route.path = "/mcp";
  route.methods = {"POST", "GET", "DELETE"};
  route.access = serve::Access::token;
  route.rate_limited = true;
  route.handle = std::move(handle);
  return route;
}

}  // namespace

serve::Route mcp_route(Context& context, const QueryTarget& target, const std::string& repository) {
  auto transport = std::make_shared<mcp::HttpTransport>(
      mcp::ServerInfo{"kasava", KASAVA_VERSION, k_mcp_instructions});
  auto stores = std::make_shared<KeptStores>(target.index_path);
  return route_to([&context, target, repository, transport, stores](const httpd::Request& request,
                                                                    const serve::Caller& caller) {
    ServedPlace place(target, repository, caller, *stores);
    KasavaTools tools(context, place);
    return answer(*transport, request, caller, tools);
  });
}

serve::Route store_mcp_route(Context& context, StoreAccess& store) {
  auto transport = std::make_shared<mcp::HttpTransport>(
      mcp::ServerInfo{"kasava", KASAVA_VERSION, k_mcp_store_instructions});
  return route_to([&context, &store, transport](const httpd::Request& request, const serve::Caller& caller) {
    StoreTools tools(context, store, [&caller](const std::string& name) { return caller.may_see(name); });
    return answer(*transport, request, caller, tools);
  });
}

}  // namespace kasava::commands
