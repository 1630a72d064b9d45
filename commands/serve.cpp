// `kasava serve`: the index as a small read-only HTTP service — a JSON API (/api/search returns
// the `ask --json` document, /api/file lines of a file under read_file_range's confinement,
// /api/status the `status --json` document, /healthz). The routes and who gets in are
// core/serve's, HTTP is core/httpd's; this file reads the options, answers from the index
// (read-only Store connections kept in a pool, one per request at a time: SQLite connections
// are not shared between threads; they see an index rebuilt by Store::swap_in, which writes
// into the same file, at their next read), logs one line per request, and stops on
// SIGINT/SIGTERM after the requests in flight (up to 5 s).
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <mutex>
#include <optional>
#include <thread>

#include "commands/commands.hpp"
#include "commands/interrupt.hpp"
#include "commands/serve_mcp.hpp"
#include "commands/store_search.hpp"
#include "core/httpd/server.hpp"
#include "core/index/indexable.hpp"
#include "core/mcp/files.hpp"
#include "core/repo/source.hpp"
#include "core/serve/api.hpp"
#include "core/util/files.hpp"
#include "core/util/json.hpp"
#include "core/util/lending_pool.hpp"
#include "core/util/strings.hpp"
#include "web/page_assets.hpp"

namespace kasava::commands {

namespace {

constexpr std::int64_t k_default_range_lines = 400;  ///< as read_file_range
constexpr std::int64_t k_max_range_lines = 2000;
constexpr auto k_drain = std::chrono::seconds(5);
// Idle shared-store connections kept for the next requests (more may be open while in use);
// a search takes a second one for its Hamming scan when one is idle, and never opens one.
constexpr std::size_t k_kept_store_connections = 16;

/// host and port of --listen: "127.0.0.1:7700", "[::1]:7700", "localhost:7700".
std::pair<std::string, std::uint16_t> parse_listen(const std::string& listen) {
  const std::string what = "invalid --listen '" + listen + "': ";
  const std::size_t colon = listen.rfind(':');
  if (colon == std::string::npos) throw util::Failure(what + "expected HOST:PORT, e.g. 127.0.0.1:7700");
  std::string host = listen.substr(0, colon);
  const std::string port_text = listen.substr(colon + 1);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
  if (host == "localhost") host = "127.0.0.1";
  unsigned long port = 0;
  char* end = nullptr;
  port = std::strtoul(port_text.c_str(), &end, 10);
  if (port_text.empty() || *end != '\0' || port > 65535) {
    throw util::Failure(what + "the port must be a number from 0 to 65535");
  }
  if (host.empty()) throw util::Failure(what + "the host is missing (0.0.0.0 listens on every address)");
  return {host, static_cast<std::uint16_t>(port)};
}

/// Read-only connections to the index, lent one per request (in arrival order when all are
/// busy). Searches are CPU-bound: four connections keep two cores busy (two gave 15% fewer
/// requests a second at 8 and 32 clients), and more would only share the cores and each cost
/// its page cache. Each keeps the pages it reads (the lexical side's), and all share one
/// in-memory copy of the index's codes, vectors and chunk heads (Store::read_snapshot),
/// which every search reads almost whole or in hundreds of places, and which a page cache
/// per connection held only in part. A fifth connection, never lent, tells when the file
/// changed (PRAGMA data_version): the copy is then read again, once, before the next search.
class StorePool {
public:
  using Lease = util::LendingPool<store::Store>::Lease;

  explicit StorePool(std::string path)
      : m_path(path), m_connections(k_max_open, [path = std::move(path)] {
          auto store = open_store(path, store::OpenMode::read_only);
          store->set_page_cache(k_page_cache_kib);
          return store;
        }) {}

  /// A connection whose searches use the current in-memory copy.
  Lease lend() {
    Lease lease = m_connections.lend();
    lease->use_snapshot(current_snapshot());
    return lease;
  }

private:
  static constexpr std::size_t k_max_open = 4;
  static constexpr std::int64_t k_page_cache_kib = 8192;
  // Larger indexes keep their codes in partitions, and a search reads a share of them.
  static constexpr std::int64_t k_max_snapshot_chunks = 200000;

  std::shared_ptr<const store::IndexSnapshot> current_snapshot() {
    const std::lock_guard lock(m_snapshot_mutex);
    if (!m_watcher) m_watcher = open_store(m_path, store::OpenMode::read_only);
    const std::int64_t version = m_watcher->data_version();
    if (!m_snapshot_version || *m_snapshot_version != version) {
      m_snapshot.reset();  // the old copy goes as the connections using it are lent again
      m_snapshot = m_watcher->read_snapshot(k_max_snapshot_chunks);
      m_snapshot_version = version;
    }
    return m_snapshot;
  }

  std::string m_path;
  util::LendingPool<store::Store> m_connections;
  std::mutex m_snapshot_mutex;
  std::unique_ptr<store::Store> m_watcher;
  std::shared_ptr<const store::IndexSnapshot> m_snapshot;  ///< nullptr: none to keep
  std::optional<std::int64_t> m_snapshot_version;           ///< m_watcher's, when read
};

serve::Reply error_reply(int status, const std::string& message) {
  const auto response = serve::json_error(status, message);
  return {status, response.body};
}

// The search a /api/search request asks for, checked as `ask` checks its options.
search::SearchOptions options_of(const serve::SearchRequest& request) {
  AskCommandOptions ask;
  ask.query = request.query;
  ask.limit = request.limit;
  ask.mode = request.mode;
  ask.language = request.language;
  ask.path_glob = request.path_glob;
  return search_options_for(ask);
}

// /api/file's document: the lines asked of a file's text (of a shared store's repository and
// ref when `holder` is given).
serve::Reply file_reply(const serve::FileRequest& request, std::string_view text,
                        const pgstore::RefInfo* holder = nullptr) {
  const std::int64_t end = request.end > 0 ? request.end : request.start + k_default_range_lines - 1;
  auto range = mcp::line_range(text, request.start, end, k_max_range_lines);
  if (!range) return error_reply(400, "'" + request.path + "': " + range.error().message);
  util::JsonWriter json;
  json.begin_object();
  if (holder) {
    json.key("repository").value(holder->repository);
    json.key("ref").value(holder->ref);
  }
  json.key("path").value(request.path);
  json.key("start_line").value(range->first);
  json.key("end_line").value(range->last);
  json.key("total_lines").value(range->total);
  json.key("truncated").value(range->truncated);
  json.key("text").value(range->text);
  json.end_object();
  return {200, json.str() + "\n"};
}

class IndexBackend final : public serve::Backend {
public:
  IndexBackend(Context& context, QueryTarget target, std::string repository)
      : m_context(context), m_target(std::move(target)), m_repository(std::move(repository)),
        m_pool(m_target.index_path) {}

  std::vector<std::string> repositories() override { return {m_repository}; }

  serve::Reply search(const serve::SearchRequest& request) override {
    try {
      const search::SearchOptions options = options_of(request);
      auto connection = m_pool.lend();
      auto hits = run_search(m_context, *connection, options);
      if (!hits) return error_reply(400, hits.error().message);
      return {200, results_json(request.query, *hits)};
    } catch (const util::Failure& e) {
      return error_reply(503, std::string("the index cannot be searched: ") + e.what());
    }
  }

  serve::Reply file(const serve::FileRequest& request) override {
    // As read_file_range: only a file the index would index, read as the index reads it, and
    // only from the repository the index was found in.
    if (!m_target.root) return error_reply(404, "files cannot be read: " + m_target.no_root_reason);
    try {
      auto source = repo::open_source(*m_target.root, {});
      if (!source) return error_reply(503, source.error().message);
      auto confined = mcp::confined_path((*source)->root(), request.path);
      if (!confined) return error_reply(404, confined.error().message);
      std::uint64_t max_file_size = 0;
      {
        auto connection = m_pool.lend();
        max_file_size = max_file_size_for(*connection);
      }
      auto text = index::read_indexable_file(**source, request.path, max_file_size);
      if (!text) return error_reply(404, "refusing " + text.error().message);
      return file_reply(request, *text);
    } catch (const util::Failure& e) {
      return error_reply(503, e.what());
    }
  }

  serve::Reply status(const std::vector<std::string>& /*visible: the one repository*/) override {
    try {
      auto connection = m_pool.lend();
      return {200, status_json(m_context, m_target, *connection)};
    } catch (const util::Failure& e) {
      return error_reply(503, std::string("the index cannot be read: ") + e.what());
    }
  }

private:
  Context& m_context;
  QueryTarget m_target;
  std::string m_repository;
  StorePool m_pool;
};

/// A shared store's repositories (`serve --store`): each request borrows a connection from the
/// pool (PostgreSQL serves them concurrently; one is checked before reuse, so a restarted
/// database is no error for the next request); each search covers the latest ref (or ref=)
/// of the repositories the caller may see.
class StoreBackend final : public serve::Backend {
public:
  StoreBackend(Context& context, StoreAccess& store) : m_context(context), m_store(store) {}

  std::vector<std::string> repositories() override {
    std::vector<std::string> names;
    for (const auto& ref : lease()->refs()) {
      if (names.empty() || names.back() != ref.repository) names.push_back(ref.repository);
    }
    return names;
  }

  serve::Reply search(const serve::SearchRequest& request) override {
    const search::SearchOptions options = options_of(request);
    auto store = m_store.readers.acquire();
    if (!store) return error_reply(503, "the store cannot be searched: " + store.error().message);
    std::vector<pgstore::RefInfo> refs;
    try {
      refs = choose_refs(**store, {}, request.ref, "repo=", "ref=", one_of(request.repositories));
    } catch (const util::Failure& e) {
      return error_reply(404, e.what());  // e.g. no repository has the ref= asked
    }
    try {
      return {200, results_json(request.query,
                                search_store(m_context, **store, std::move(refs), options,
                                             pooled_reader(m_store.readers, false)))};
    } catch (const util::Failure& e) {
      return error_reply(503, std::string("the store cannot be searched: ") + e.what());
    }
  }

  serve::Reply file(const serve::FileRequest& request) override {
    auto store = m_store.readers.acquire();
    if (!store) return error_reply(503, store.error().message);
    try {
      const pgstore::RefInfo ref = choose_file_ref(**store, request.repository, request.ref);
      const auto text = (*store)->file_text(ref.id, request.path);
      if (!text) {
        return error_reply(404, "'" + request.path + "' is not a file of " + ref.repository + "@" + ref.ref +
                                    " in the store");
      }
      return file_reply(request, *text, &ref);
    } catch (const util::Failure& e) {
      return error_reply(404, e.what());
    }
  }

  serve::Reply status(const std::vector<std::string>& visible) override {
    try {
      return {200, store_status_document(*lease(), one_of(visible)).dump() + "\n"};
    } catch (const util::Failure& e) {
      return error_reply(503, std::string("the store cannot be read: ") + e.what());
    }
  }

private:
  pgstore::ReaderPool::Lease lease() {
    auto lease = m_store.readers.acquire();
    if (!lease) throw util::Failure(lease.error());
    return std::move(lease).value();
  }
  static Visible one_of(const std::vector<std::string>& names) {
    return [&names](const std::string& name) { return std::find(names.begin(), names.end(), name) != names.end(); };
  }

  Context& m_context;
  StoreAccess& m_store;
};

// The search page and its files (web/), open to everyone: they hold no data, and the page
// asks for a token when the API needs one. Revalidated by ETag: 304 when unchanged.
void add_page_routes(serve::Api& api) {
  for (const auto path : web::page_asset_paths()) {
    api.add_route({std::string(path), false, {"GET", "HEAD"}, serve::Access::open, true,
                   [](const httpd::Request& request, const serve::Caller&) {
                     const auto asset = web::find_page_asset(request.path);
                     if (!asset) return serve::json_error(404, "no such page");
                     httpd::Response response;
                     for (const auto& header : web::page_headers()) {
                       response.headers.emplace_back(header.name, header.value);
                     }
                     response.headers.emplace_back("ETag", asset->etag);
                     response.headers.emplace_back("Cache-Control", asset->cache_control);
                     const auto if_none_match = request.header("If-None-Match");
                     if (if_none_match && web::etag_matches(*if_none_match, asset->etag)) {
                       response.status = 304;
                       return response;
                     }
                     response.headers.emplace_back("Content-Type", asset->content_type);
                     response.body = asset->body;
                     return response;
                   }});
  }
}

std::string query_text(const std::vector<std::pair<std::string, std::string>>& query) {
  std::string text;
  for (const auto& [name, value] : query) {
    text += (text.empty() ? "?" : "&") + name + "=" + value;
  }
  return text;
}

} // namespace

SetupHooks serve_setup(const ServeCommandOptions& options) {
  SetupHooks hooks;
  if (!chosen_store(options.store).empty()) hooks.needs = Needs::index_per_call;  // no local index
  return hooks;
}

ExitStatus run_serve(const ServeCommandOptions& options, Context& context, Prepared& prepared) {
  const auto [host, port] = parse_listen(options.listen);
  const bool loopback = httpd::is_loopback_address(host);

  serve::ApiOptions api_options;
  if (!options.token_file.empty()) {
    auto text = util::read_file(options.token_file);
    if (!text) throw util::Failure(text.error().message);
    auto tokens = serve::parse_token_file(*text);
    if (!tokens) throw util::Failure("token file '" + options.token_file + "': " + tokens.error().message);
    api_options.tokens = std::move(tokens).value();
  } else if (!loopback && !options.insecure_no_auth) {
    throw util::Failure("listening on '" + host + "' (not loopback) needs --token-file FILE, or "
                        "--insecure-no-auth to let anyone who reaches it search the index");
  }
  if (!loopback && api_options.tokens.empty()) {
    context.output.warning("--insecure-no-auth: anyone who can reach " + host +
                           " can search this index and read its files");
  }
  api_options.rate_limit = options.rate_limit;

  const std::string conninfo = chosen_store(options.store);
  const QueryTarget target = prepared.target;
  std::unique_ptr<serve::Backend> backend;
  std::string served;  // what the start line names
  // Store connections kept open between requests (a connection and the schema check cost
  // more than a search's statements on a nearby server).
  StoreAccess store_access(conninfo, k_kept_store_connections);
  if (!conninfo.empty()) {
    auto reader = store_access.readers.acquire();  // a store that cannot be read fails now
    if (!reader) throw util::Failure(reader.error());
    context.embedder();  // made now, once, not by the first searches racing on their threads
    served = "the store at " + (*reader)->where();
    backend = std::make_unique<StoreBackend>(context, store_access);
  } else {
    {
      // The model is made now, once, not by the first searches racing on their threads.
      auto store = open_store(target.index_path, store::OpenMode::read_only);
      embedder_for_query(context, *store, search::Mode::hybrid);
    }
    prepared.store.reset();
    // The repository's folder; for an index found without one, the folder it lies in (the
    // one holding `.kasava/` for `<dir>/.kasava/index.db`).
    std::filesystem::path index_folder = std::filesystem::absolute(target.index_path).parent_path();
    if (index_folder.filename() == ".kasava") index_folder = index_folder.parent_path();
    const std::string folder = target.repository.value_or(target.root.value_or(index_folder.string()));
    served = serve::repository_name(repo::remote_url(folder, "origin"), folder);
    backend = std::make_unique<IndexBackend>(context, target, served);
  }

  // The Host rule needs the port, known once listening: the handler reads it from here.
  std::atomic<serve::Api*> api_pointer{nullptr};
  std::mutex log_mutex;
  auto handler = [&api_pointer](const httpd::Request& request) {
    serve::Api* api = api_pointer.load();
    if (api == nullptr) return serve::json_error(503, "the server is starting");
    return api->handle(request);
  };
  auto log = [&](const httpd::Completion& done) {
    char line[64];
    std::snprintf(line, sizeof line, " %d %.1f ms\n", done.status, done.milliseconds);
    const std::string text = done.method + " " + util::escape_controls(done.path) +
                             (options.log_queries ? util::escape_controls(query_text(done.query)) : "") + line;
    const std::lock_guard lock(log_mutex);
    std::fputs(text.c_str(), stderr);
  };
  httpd::Limits limits;
  auto server = httpd::HttpServer::start(host, port, handler, limits, log).value_or_throw();
  api_options.hosts = serve::host_rule_for(host, loopback, server->port(), options.allowed_hosts);
  serve::Api api(std::move(api_options), *backend);
  // Other features' routes are added here, before serving (Api::add_route; see core/serve/api.hpp):
  // MCP over HTTP (/mcp, Access::token, a streamed httpd::Response for SSE):
  api.add_route(conninfo.empty() ? mcp_route(context, target, served) : store_mcp_route(context, store_access));
  add_page_routes(api);  // the search page: / and its files, Access::open
  api_pointer.store(&api);

  const std::string shown_host = host.find(':') != std::string::npos ? "[" + host + "]" : host;
  context.output.out("kasava: serving " + served + " on http://" + shown_host + ":" +
                     std::to_string(server->port()) + "/\n");
  context.output.flush();

  while (!interrupted()) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  server->stop(k_drain);
  return interrupted_status();
}

} // namespace kasava::commands
