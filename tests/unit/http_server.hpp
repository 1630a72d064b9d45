// A real HTTP/1.1 server on 127.0.0.1 for the tests of core/net and core/remote (STYLE.md
// rule 13: no mock objects for HTTP). Thread per connection, keep-alive, scripted replies —
// status, headers, body, delay, a reset without reply, a hang past the client's timeout, a
// chunked (SSE) stream, a truncated stream — and a record of every request received.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <deque>
#include <functional>
#include <mutex>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace kasava::test {

struct RecordedRequest {
  std::string method;
  std::string path;
  std::vector<std::pair<std::string, std::string>> headers;  ///< names lower-cased
  std::string body;

  /// The value of header `name` (lower-case), or "" when absent.
  std::string header(const std::string& name) const {
    for (const auto& [key, value] : headers)
      if (key == name) return value;
    return "";
  }
};

struct Reply {
  enum class Action {
    respond,   ///< status, headers, body (after `delay`)
    reset,     ///< close the connection at once with a TCP reset, no reply
    hang,      ///< never answer (until the server stops)
    stream,    ///< 200, chunked transfer of `chunks`, `chunk_delay` between them
    truncate,  ///< like stream, then close without the final chunk
  };
  Action action = Action::respond;
  int status = 200;
  std::vector<std::pair<std::string, std::string>> headers;
  std::string body;
  std::chrono::milliseconds delay{0};
  std::vector<std::string> chunks;
  std::chrono::milliseconds chunk_delay{0};

  static Reply json(int status, std::string body) {
    Reply r;
    r.status = status;
    r.headers = {{"Content-Type", "application/json"}};
    r.body = std::move(body);
    return r;
  }
  static Reply with_action(Action action) {
    Reply r;
    r.action = action;
    return r;
  }
  static Reply sse(std::vector<std::string> chunks, bool truncated = false) {
    Reply r;
    r.action = truncated ? Action::truncate : Action::stream;
    r.headers = {{"Content-Type", "text/event-stream"}};
    r.chunks = std::move(chunks);
    return r;
  }
};

class HttpServer {
public:
  using Handler = std::function<Reply(const RecordedRequest&)>;

  /// Starts listening on an ephemeral port of 127.0.0.1. Requests get the scripted replies
  /// first (script()), then whatever `handler` returns (default: 404).
  explicit HttpServer(Handler handler = {}) : m_handler(std::move(handler)) {
    m_listen = ::socket(AF_INET, SOCK_STREAM, 0);
    if (m_listen < 0) throw std::runtime_error("test server: socket failed");
    const int one = 1;
    ::setsockopt(m_listen, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    address.sin_port = 0;
    if (::bind(m_listen, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0 ||
        ::listen(m_listen, 64) != 0)
      throw std::runtime_error("test server: bind/listen failed");
    socklen_t length = sizeof address;
    ::getsockname(m_listen, reinterpret_cast<sockaddr*>(&address), &length);
    m_port = ntohs(address.sin_port);
    m_acceptor = std::thread([this] { accept_loop(); });
  }

  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  ~HttpServer() {
    {
      std::lock_guard lock(m_mutex);
      m_stopping = true;
      for (int fd : m_open) ::shutdown(fd, SHUT_RDWR);
    }
    m_wake.notify_all();
    ::shutdown(m_listen, SHUT_RDWR);
    m_acceptor.join();
    ::close(m_listen);
    std::vector<std::thread> workers;
    {
      std::lock_guard lock(m_mutex);
      workers.swap(m_workers);
    }
    for (std::thread& t : workers) t.join();
  }

  /// "http://127.0.0.1:<port>"
  std::string url() const { return "http://127.0.0.1:" + std::to_string(m_port); }

  /// Replies for the next requests, in order, before the handler is used.
  void script(std::vector<Reply> replies) {
    std::lock_guard lock(m_mutex);
    for (Reply& r : replies) m_script.push_back(std::move(r));
  }
  void set_handler(Handler handler) {
    std::lock_guard lock(m_mutex);
    m_handler = std::move(handler);
  }

  std::vector<RecordedRequest> requests() const {
    std::lock_guard lock(m_mutex);
    return m_requests;
  }
  std::size_t request_count() const {
    std::lock_guard lock(m_mutex);
    return m_requests.size();
  }
  int connections() const { return m_connections.load(); }
  /// Most requests being handled at the same time.
  int max_concurrent() const { return m_max_concurrent.load(); }

private:
  void accept_loop() {
    for (;;) {
      const int fd = ::accept(m_listen, nullptr, nullptr);
      if (fd < 0) {
        std::lock_guard lock(m_mutex);
        if (m_stopping) return;
        continue;
      }
      std::lock_guard lock(m_mutex);
      if (m_stopping) {
        ::close(fd);
        return;
      }
      ++m_connections;
      m_open.insert(fd);
      m_workers.emplace_back([this, fd] { serve(fd); });
    }
  }

  /// Waits up to `duration`; false when the server is stopping.
  bool pause(std::chrono::milliseconds duration) {
    std::unique_lock lock(m_mutex);
    return !m_wake.wait_for(lock, duration, [this] { return m_stopping; });
  }

  static bool send_all(int fd, const std::string& data) {
    std::size_t sent = 0;
    while (sent < data.size()) {
      const ssize_t n = ::send(fd, data.data() + sent, data.size() - sent, MSG_NOSIGNAL);
      if (n <= 0) return false;
      sent += static_cast<std::size_t>(n);
    }
    return true;
  }

  static std::string lower(std::string s) {
    for (char& c : s)
      if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    return s;
  }

  static std::string trim(const std::string& s) {
    std::size_t b = 0, e = s.size();
    while (b < e && (s[b] == ' ' || s[b] == '\t')) ++b;
    while (e > b && (s[e - 1] == ' ' || s[e - 1] == '\t' || s[e - 1] == '\r')) --e;
    return s.substr(b, e - b);
  }

  /// Reads one request from the connection; false on end of stream or error.
  static bool read_request(int fd, std::string& buffer, RecordedRequest& request) {
    std::size_t header_end;
    while ((header_end = buffer.find("\r\n\r\n")) == std::string::npos) {
      char chunk[65536];
      const ssize_t n = ::recv(fd, chunk, sizeof chunk, 0);
      if (n <= 0) return false;
      buffer.append(chunk, static_cast<std::size_t>(n));
    }
    const std::string head = buffer.substr(0, header_end);
    buffer.erase(0, header_end + 4);
    std::size_t line_end = head.find("\r\n");
    const std::string first = head.substr(0, line_end);
    const std::size_t s1 = first.find(' '), s2 = first.rfind(' ');
    request.method = first.substr(0, s1);
    request.path = first.substr(s1 + 1, s2 - s1 - 1);
    std::size_t length = 0;
    while (line_end != std::string::npos) {
      const std::size_t start = line_end + 2;
      line_end = head.find("\r\n", start);
      const std::string line =
          head.substr(start, line_end == std::string::npos ? std::string::npos : line_end - start);
      const std::size_t colon = line.find(':');
      if (colon == std::string::npos) continue;
      std::string name = lower(line.substr(0, colon));
      std::string value = trim(line.substr(colon + 1));
      if (name == "content-length") length = std::stoul(value);
      request.headers.emplace_back(std::move(name), std::move(value));
    }
    while (buffer.size() < length) {
      char chunk[65536];
      const ssize_t n = ::recv(fd, chunk, sizeof chunk, 0);
      if (n <= 0) return false;
      buffer.append(chunk, static_cast<std::size_t>(n));
    }
    request.body = buffer.substr(0, length);
    buffer.erase(0, length);
    return true;
  }

  Reply next_reply(const RecordedRequest& request) {
    Handler handler;
    {
      std::lock_guard lock(m_mutex);
      m_requests.push_back(request);
      if (!m_script.empty()) {
        Reply r = std::move(m_script.front());
        m_script.pop_front();
        return r;
      }
      handler = m_handler;
    }
    if (handler) return handler(request);
    return Reply::json(404, R"({"error":{"message":"no handler"}})");
  }

  static std::string head(int status, const Reply& reply, const std::string& framing) {
    std::string out =
        "HTTP/1.1 " + std::to_string(status) + (status < 400 ? " OK" : " Error") + "\r\n";
    for (const auto& [name, value] : reply.headers) out += name + ": " + value + "\r\n";
    return out + framing + "\r\n";
  }

  static std::string hex(std::size_t n) {
    char text[32];
    std::snprintf(text, sizeof text, "%zx", n);
    return text;
  }

  void serve(int fd) {
    std::string buffer;
    bool keep_open = true;
    while (keep_open) {
      RecordedRequest request;
      if (!read_request(fd, buffer, request)) break;
      const int now = ++m_in_flight;
      for (int seen = m_max_concurrent.load(); now > seen;)
        if (m_max_concurrent.compare_exchange_weak(seen, now)) break;
      const Reply reply = next_reply(request);
      if (reply.delay.count() > 0 && !pause(reply.delay)) keep_open = false;
      switch (keep_open ? reply.action : Reply::Action::reset) {
        case Reply::Action::respond:
          keep_open =
              send_all(fd, head(reply.status, reply,
                                "Content-Length: " + std::to_string(reply.body.size()) + "\r\n") +
                               reply.body);
          break;
        case Reply::Action::reset: {
          linger hard{1, 0};  // close() sends RST instead of FIN
          ::setsockopt(fd, SOL_SOCKET, SO_LINGER, &hard, sizeof hard);
          keep_open = false;
          break;
        }
        case Reply::Action::hang:
          pause(std::chrono::hours(1));
          keep_open = false;
          break;
        case Reply::Action::stream:
        case Reply::Action::truncate: {
          bool ok = send_all(fd, head(200, reply, "Transfer-Encoding: chunked\r\n"));
          for (const std::string& chunk : reply.chunks) {
            if (!ok) break;
            if (reply.chunk_delay.count() > 0 && !pause(reply.chunk_delay)) ok = false;
            if (ok && !chunk.empty())
              ok = send_all(fd, hex(chunk.size()) + "\r\n" + chunk + "\r\n");
          }
          if (ok && reply.action == Reply::Action::stream) ok = send_all(fd, "0\r\n\r\n");
          keep_open = ok && reply.action == Reply::Action::stream;
          break;
        }
      }
      --m_in_flight;
    }
    {
      std::lock_guard lock(m_mutex);
      m_open.erase(fd);
    }
    ::close(fd);
  }

  Handler m_handler;
  int m_listen = -1;
  int m_port = 0;
  std::thread m_acceptor;
  mutable std::mutex m_mutex;
  std::condition_variable m_wake;
  bool m_stopping = false;
  std::set<int> m_open;
  std::vector<std::thread> m_workers;
  std::deque<Reply> m_script;
  std::vector<RecordedRequest> m_requests;
  std::atomic<int> m_connections{0};
  std::atomic<int> m_in_flight{0};
  std::atomic<int> m_max_concurrent{0};
};

}  // namespace kasava::test
