// HttpServer on libmicrohttpd (see server.hpp). One thread per connection
// (MHD_USE_THREAD_PER_CONNECTION): a client that sends its headers one byte a second holds one
// thread and nothing else, a handler may take its time (a search) without delaying other
// connections, and a streamed body's producer may block until it has the next chunk. The
// library bounds connections (overall and per address), a connection's memory for its request
// head, and idle time; the body limit is ours (413 before the body is read, from
// Content-Length, or as soon as it passes the limit).
//
// libmicrohttpd is loaded (dlopen) when a server starts, not when kasava starts, as libcurl
// is (core/net/curl_client.cpp): it brings GnuTLS and its dependencies, whose loading every
// `ask` would pay for, while only `kasava serve` speaks HTTP as a server.
#include "core/httpd/server.hpp"

#include <arpa/inet.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <condition_variable>
#include <cstring>
#include <mutex>

#include "core/util/shared_library.hpp"

namespace kasava::httpd {

namespace {

// The libmicrohttpd functions kasava calls, resolved from the shared library on first use.
struct MhdApi {
  decltype(&::MHD_start_daemon) start_daemon = nullptr;
  decltype(&::MHD_get_daemon_info) get_daemon_info = nullptr;
  decltype(&::MHD_quiesce_daemon) quiesce_daemon = nullptr;
  decltype(&::MHD_stop_daemon) stop_daemon = nullptr;
  decltype(&::MHD_lookup_connection_value) lookup_connection_value = nullptr;
  decltype(&::MHD_get_connection_values) get_connection_values = nullptr;
  decltype(&::MHD_get_connection_info) get_connection_info = nullptr;
  decltype(&::MHD_create_response_from_callback) create_response_from_callback = nullptr;
  decltype(&::MHD_create_response_from_buffer) create_response_from_buffer = nullptr;
  decltype(&::MHD_add_response_header) add_response_header = nullptr;
  decltype(&::MHD_queue_response) queue_response = nullptr;
  decltype(&::MHD_destroy_response) destroy_response = nullptr;
  std::string error;  ///< why the library is not usable; "" when it is
};

// The soname of the libmicrohttpd kasava is built against (Debian: libmicrohttpd12).
constexpr const char* k_libmicrohttpd = "libmicrohttpd.so.12";

const MhdApi& mhd() {
  static const MhdApi api = [] {
    MhdApi loaded;
    util::SharedLibrary library(k_libmicrohttpd, "libmicrohttpd",
                                "`kasava serve` needs libmicrohttpd (Debian: apt-get install libmicrohttpd12)");
    library.resolve(loaded.start_daemon, "MHD_start_daemon");
    library.resolve(loaded.get_daemon_info, "MHD_get_daemon_info");
    library.resolve(loaded.quiesce_daemon, "MHD_quiesce_daemon");
    library.resolve(loaded.stop_daemon, "MHD_stop_daemon");
    library.resolve(loaded.lookup_connection_value, "MHD_lookup_connection_value");
    library.resolve(loaded.get_connection_values, "MHD_get_connection_values");
    library.resolve(loaded.get_connection_info, "MHD_get_connection_info");
    library.resolve(loaded.create_response_from_callback, "MHD_create_response_from_callback");
    library.resolve(loaded.create_response_from_buffer, "MHD_create_response_from_buffer");
    library.resolve(loaded.add_response_header, "MHD_add_response_header");
    library.resolve(loaded.queue_response, "MHD_queue_response");
    library.resolve(loaded.destroy_response, "MHD_destroy_response");
    loaded.error = library.error();
    return loaded;
  }();
  return api;
}

bool iequals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    const char x = a[i] >= 'A' && a[i] <= 'Z' ? static_cast<char>(a[i] + 32) : a[i];
    const char y = b[i] >= 'A' && b[i] <= 'Z' ? static_cast<char>(b[i] + 32) : b[i];
    if (x != y) return false;
  }
  return true;
}

std::string address_text(const sockaddr* address) {
  char text[INET6_ADDRSTRLEN] = {};
  if (address == nullptr) return "";
  if (address->sa_family == AF_INET) {
    ::inet_ntop(AF_INET, &reinterpret_cast<const sockaddr_in*>(address)->sin_addr, text, sizeof text);
  } else if (address->sa_family == AF_INET6) {
    ::inet_ntop(AF_INET6, &reinterpret_cast<const sockaddr_in6*>(address)->sin6_addr, text, sizeof text);
  }
  return text;
}

/// What one request carries between the library's calls of the access handler.
struct RequestState {
  Request request;
  bool answered = false;        ///< a response was queued (counted in flight when `counted`)
  bool counted = false;         ///< counted in in_flight
  bool body_too_large = false;  ///< answered 413 once the upload ends
  int status = 0;
  std::chrono::steady_clock::time_point started = std::chrono::steady_clock::now();
};

/// A streamed body between the library's reader calls.
struct StreamState {
  ChunkProducer producer;
  StreamControl control;
  std::string pending;
  std::size_t offset = 0;
};

ssize_t read_stream(void* cls, std::uint64_t /*position*/, char* buffer, std::size_t max) {
  auto* state = static_cast<StreamState*>(cls);
  while (state->offset >= state->pending.size()) {
    std::optional<std::string> next;
    try {
      next = state->producer(state->control);
    } catch (...) {
      return MHD_CONTENT_READER_END_WITH_ERROR;
    }
    if (!next) return MHD_CONTENT_READER_END_OF_STREAM;
    state->pending = std::move(*next);
    state->offset = 0;
  }
  const std::size_t count = std::min(max, state->pending.size() - state->offset);
  std::memcpy(buffer, state->pending.data() + state->offset, count);
  state->offset += count;
  return static_cast<ssize_t>(count);
}

void free_stream(void* cls) { delete static_cast<StreamState*>(cls); }

/// Connections the library accepts beyond Limits::max_connections, to answer them 503.
constexpr unsigned k_connection_headroom = 16;

class MhdServer final : public HttpServer {
public:
  MhdServer(Handler handler, Limits limits, CompletionHook on_complete)
      : m_handler(std::move(handler)), m_limits(limits), m_on_complete(std::move(on_complete)) {}

  ~MhdServer() override { stop(std::chrono::milliseconds(0)); }

  util::Status listen(const std::string& host, std::uint16_t port) {
    sockaddr_storage address{};
    unsigned flags = MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_POLL |
                     MHD_USE_ITC;
    auto* v4 = reinterpret_cast<sockaddr_in*>(&address);
    auto* v6 = reinterpret_cast<sockaddr_in6*>(&address);
    if (::inet_pton(AF_INET, host.c_str(), &v4->sin_addr) == 1) {
      v4->sin_family = AF_INET;
      v4->sin_port = htons(port);
    } else if (::inet_pton(AF_INET6, host.c_str(), &v6->sin6_addr) == 1) {
      v6->sin6_family = AF_INET6;
      v6->sin6_port = htons(port);
      flags |= MHD_USE_IPv6;
    } else {
      return util::Error{"listening on '" + host + "': not an IPv4 or IPv6 address"};
    }
    m_daemon = mhd().start_daemon(
        flags, port, nullptr, nullptr, &MhdServer::access, this,
        MHD_OPTION_SOCK_ADDR, reinterpret_cast<sockaddr*>(&address),
        // The library's limit is a little above ours, so that a connection over ours gets a
        // clear 503 instead of being closed unanswered.
        MHD_OPTION_CONNECTION_LIMIT, m_limits.max_connections + k_connection_headroom,
        MHD_OPTION_NOTIFY_CONNECTION, &MhdServer::connection_changed, this,
        MHD_OPTION_PER_IP_CONNECTION_LIMIT, m_limits.max_connections_per_peer,
        MHD_OPTION_CONNECTION_MEMORY_LIMIT, m_limits.max_head_bytes,
        MHD_OPTION_CONNECTION_TIMEOUT, m_limits.idle_timeout_seconds,
        MHD_OPTION_NOTIFY_COMPLETED, &MhdServer::completed, this,
        MHD_OPTION_LISTEN_BACKLOG_SIZE, 511u,
        MHD_OPTION_END);
    if (m_daemon == nullptr) {
      const int error = errno;
      const std::string shown = host.find(':') != std::string::npos ? "[" + host + "]" : host;
      return util::Error{"listening on '" + shown + ":" + std::to_string(port) + "': " +
                         (error != 0 ? std::strerror(error) : "the server could not start")};
    }
    const MHD_DaemonInfo* info = mhd().get_daemon_info(m_daemon, MHD_DAEMON_INFO_BIND_PORT);
    m_port = info != nullptr ? info->port : port;
    return util::Unit{};
  }

  std::uint16_t port() const override { return m_port; }

  int in_flight() const override {
    std::lock_guard lock(m_mutex);
    return m_in_flight;
  }

  void stop(std::chrono::milliseconds grace) override {
    std::unique_lock lock(m_mutex);
    if (m_daemon == nullptr) return;
    m_stopping = true;
    lock.unlock();
    const MHD_socket listener = mhd().quiesce_daemon(m_daemon);
    if (listener != MHD_INVALID_SOCKET) ::close(listener);
    lock.lock();
    m_idle.wait_for(lock, grace, [this] { return m_in_flight == 0; });
    MHD_Daemon* daemon = m_daemon;
    m_daemon = nullptr;
    lock.unlock();
    mhd().stop_daemon(daemon);
  }

private:
  static MHD_Result access(void* cls, MHD_Connection* connection, const char* url,
                           const char* method, const char* /*version*/, const char* upload_data,
                           std::size_t* upload_data_size, void** con_cls) {
    auto* self = static_cast<MhdServer*>(cls);
    auto* state = static_cast<RequestState*>(*con_cls);
    if (state == nullptr) {
      state = new RequestState;
      *con_cls = state;
      state->request.method = method;
      state->request.path = url;
      // In flight from here (its head is read) until the response is sent: stop() waits for
      // a request whose body is still coming.
      self->count_in(*state);
      const char* length = mhd().lookup_connection_value(connection, MHD_HEADER_KIND,
                                                       MHD_HTTP_HEADER_CONTENT_LENGTH);
      if (length != nullptr && std::strtoull(length, nullptr, 10) > self->m_limits.max_body_bytes) {
        return self->answer(connection, *state, self->too_large());
      }
      if (self->m_connections.load() > self->m_limits.max_connections) {
        auto busy = Response::text(503,
                                   "{\"error\":\"too many connections: at most " +
                                       std::to_string(self->m_limits.max_connections) + "; try again\"}\n",
                                   "application/json");
        busy.headers.emplace_back("Retry-After", "1");
        busy.headers.emplace_back("Connection", "close");
        return self->answer(connection, *state, std::move(busy));
      }
      return MHD_YES;
    }
    if (*upload_data_size > 0) {
      if (!state->body_too_large) {
        if (state->request.body.size() + *upload_data_size > self->m_limits.max_body_bytes) {
          state->body_too_large = true;
          state->request.body.clear();
          state->request.body.shrink_to_fit();
        } else {
          state->request.body.append(upload_data, *upload_data_size);
        }
      }
      *upload_data_size = 0;
      return MHD_YES;
    }
    if (state->answered) return MHD_YES;
    if (state->body_too_large) return self->answer(connection, *state, self->too_large());

    Request& request = state->request;
    mhd().get_connection_values(connection, MHD_GET_ARGUMENT_KIND, &MhdServer::collect, &request.query);
    mhd().get_connection_values(connection, MHD_HEADER_KIND, &MhdServer::collect, &request.headers);
    const MHD_ConnectionInfo* info =
        mhd().get_connection_info(connection, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
    request.peer = address_text(info != nullptr ? info->client_addr : nullptr);
    request.peer_is_loopback = is_loopback_address(request.peer);
    Response response;
    try {
      response = self->m_handler(request);
    } catch (const std::exception& e) {
      response = Response::text(500, std::string("{\"error\":\"internal error\"}\n"),
                                "application/json");
    }
    return self->answer(connection, *state, std::move(response));
  }

  Response too_large() const {
    return Response::text(413,
                          "{\"error\":\"request body too large: at most " +
                              std::to_string(m_limits.max_body_bytes) + " bytes\"}\n",
                          "application/json");
  }

  static MHD_Result collect(void* cls, MHD_ValueKind /*kind*/, const char* key, const char* value) {
    auto* pairs = static_cast<std::vector<std::pair<std::string, std::string>>*>(cls);
    pairs->emplace_back(key != nullptr ? key : "", value != nullptr ? value : "");
    return MHD_YES;
  }

  void count_in(RequestState& state) {
    std::lock_guard lock(m_mutex);
    ++m_in_flight;
    state.counted = true;
  }

  MHD_Result answer(MHD_Connection* connection, RequestState& state, Response response) {
    state.answered = true;
    state.status = response.status;
    MHD_Response* reply = nullptr;
    if (response.stream) {
      auto* stream = new StreamState{std::move(response.stream), StreamControl{m_stopping}, {}, 0};
      reply = mhd().create_response_from_callback(MHD_SIZE_UNKNOWN, 16 * 1024, &read_stream, stream,
                                                &free_stream);
      if (reply == nullptr) delete stream;
    } else {
      reply = mhd().create_response_from_buffer(response.body.size(), response.body.data(),
                                              MHD_RESPMEM_MUST_COPY);
    }
    if (reply == nullptr) return MHD_NO;
    for (const auto& [name, value] : response.headers) {
      mhd().add_response_header(reply, name.c_str(), value.c_str());
    }
    if (m_stopping.load()) mhd().add_response_header(reply, MHD_HTTP_HEADER_CONNECTION, "close");
    const MHD_Result queued = mhd().queue_response(connection, static_cast<unsigned>(response.status), reply);
    mhd().destroy_response(reply);
    return queued;
  }

  static void connection_changed(void* cls, MHD_Connection* /*connection*/, void** /*socket_context*/,
                                 MHD_ConnectionNotificationCode code) {
    auto* self = static_cast<MhdServer*>(cls);
    if (code == MHD_CONNECTION_NOTIFY_STARTED) {
      ++self->m_connections;
    } else {
      --self->m_connections;
    }
  }

  static void completed(void* cls, MHD_Connection* /*connection*/, void** con_cls,
                        MHD_RequestTerminationCode /*code*/) {
    auto* self = static_cast<MhdServer*>(cls);
    std::unique_ptr<RequestState> state(static_cast<RequestState*>(*con_cls));
    *con_cls = nullptr;
    if (!state || !state->counted) return;
    if (self->m_on_complete && state->answered) {
      Completion done;
      done.method = state->request.method;
      done.path = state->request.path;
      done.query = state->request.query;
      done.status = state->status;
      done.milliseconds =
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - state->started).count();
      try {
        self->m_on_complete(done);
      } catch (...) {  // a log line that failed is no reason to stop serving
      }
    }
    std::lock_guard lock(self->m_mutex);
    if (--self->m_in_flight == 0) self->m_idle.notify_all();
  }

  Handler m_handler;
  Limits m_limits;
  CompletionHook m_on_complete;
  MHD_Daemon* m_daemon = nullptr;
  std::uint16_t m_port = 0;
  std::atomic<bool> m_stopping{false};
  std::atomic<unsigned> m_connections{0};  ///< open now
  mutable std::mutex m_mutex;
  std::condition_variable m_idle;
  int m_in_flight = 0;
};

} // namespace

std::optional<std::string> Request::param(std::string_view name) const {
  for (const auto& [key, value] : query) {
    if (key == name) return value;
  }
  return std::nullopt;
}

std::optional<std::string> Request::header(std::string_view name) const {
  for (const auto& [key, value] : headers) {
    if (iequals(key, name)) return value;
  }
  return std::nullopt;
}

Response Response::text(int status, std::string body, std::string content_type) {
  Response response;
  response.status = status;
  response.body = std::move(body);
  response.headers.emplace_back("Content-Type", std::move(content_type));
  return response;
}

bool is_loopback_address(const std::string& address) {
  if (address == "::1") return true;
  std::string_view v4 = address;
  if (v4.rfind("::ffff:", 0) == 0) v4.remove_prefix(7);
  in_addr parsed{};
  if (::inet_pton(AF_INET, std::string(v4).c_str(), &parsed) != 1) return false;
  return (ntohl(parsed.s_addr) >> 24) == 127;
}

util::Result<std::unique_ptr<HttpServer>> HttpServer::start(const std::string& host, std::uint16_t port,
                                                            Handler handler, Limits limits,
                                                            CompletionHook on_complete) {
  if (!mhd().error.empty()) return util::Error{mhd().error};
  auto server = std::make_unique<MhdServer>(std::move(handler), limits, std::move(on_complete));
  auto listening = server->listen(host, port);
  if (!listening) return listening.error();
  return std::unique_ptr<HttpServer>(std::move(server));
}

} // namespace kasava::httpd
