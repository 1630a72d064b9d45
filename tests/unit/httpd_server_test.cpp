// Tests core/httpd/server against real sockets on 127.0.0.1: a request's parts reach the
// handler, streamed bodies arrive chunk by chunk, stop() tells a stream to end and waits for
// it, bodies over the limit get 413.
#include <catch2/catch.hpp>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <condition_variable>
#include <mutex>
#include <thread>

#include "core/httpd/server.hpp"

using namespace kasava;

namespace {

int connect_to(int port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<std::uint16_t>(port));
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  REQUIRE(::connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0);
  timeval timeout{20, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
  return fd;
}

void send_text(int fd, const std::string& text) {
  REQUIRE(::send(fd, text.data(), text.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(text.size()));
}

/// Reads until `marker` has arrived (or the connection ends); returns all that was read.
std::string read_until(int fd, const std::string& marker, std::string data = "") {
  char buffer[4096];
  while (data.find(marker) == std::string::npos) {
    const ssize_t count = ::recv(fd, buffer, sizeof buffer, 0);
    if (count <= 0) break;
    data.append(buffer, static_cast<std::size_t>(count));
  }
  return data;
}

}  // namespace

TEST_CASE("httpd::HttpServer hands the handler the request's method, path, query, headers, body and peer") {
  httpd::Request seen;
  auto server = httpd::HttpServer::start("127.0.0.1", 0, [&](const httpd::Request& request) {
    seen = request;
    auto response = httpd::Response::text(201, "made\n", "text/plain");
    response.headers.emplace_back("X-Kind", "test");
    return response;
  }, {});
  REQUIRE(server.ok());
  const int port = (*server)->port();
  CHECK(port > 0);
  const int fd = connect_to(port);
  send_text(fd, "POST /a/b%20c?x=1&y=two%20words&x=3 HTTP/1.1\r\nHost: here\r\nX-Custom: Value\r\n"
                "Content-Length: 5\r\nConnection: close\r\n\r\nhello");
  const std::string reply = read_until(fd, "\r\n\r\nmade\n");
  ::close(fd);
  CHECK(reply.rfind("HTTP/1.1 201", 0) == 0);
  CHECK(reply.find("X-Kind: test\r\n") != std::string::npos);
  CHECK(seen.method == "POST");
  CHECK(seen.path == "/a/b c");
  CHECK(seen.param("x") == std::optional<std::string>("1"));
  CHECK(seen.param("y") == std::optional<std::string>("two words"));
  CHECK(seen.query.size() == 3);
  CHECK(seen.header("x-custom") == std::optional<std::string>("Value"));
  CHECK(seen.body == "hello");
  CHECK(seen.peer == "127.0.0.1");
  CHECK(seen.peer_is_loopback);
  (*server)->stop(std::chrono::milliseconds(1000));
}

TEST_CASE("httpd::HttpServer streams a body chunk by chunk, and stop() ends an open stream") {
  std::mutex mutex;
  std::condition_variable changed;
  int released = 0;  // chunks the test lets the producer send
  auto server = httpd::HttpServer::start("127.0.0.1", 0, [&](const httpd::Request&) {
    httpd::Response response;
    response.headers.emplace_back("Content-Type", "text/event-stream");
    auto sent = std::make_shared<int>(0);
    response.stream = [&, sent](const httpd::StreamControl& control) -> std::optional<std::string> {
      std::unique_lock lock(mutex);
      // Waits for the test to release the next event, or for the server to stop.
      while (released <= *sent && !control.stopping) changed.wait_for(lock, std::chrono::milliseconds(20));
      if (released <= *sent) return std::nullopt;  // stopping: the stream ends
      return "data: event " + std::to_string(++*sent) + "\n\n";
    };
    return response;
  }, {});
  REQUIRE(server.ok());
  const int fd = connect_to((*server)->port());
  send_text(fd, "GET /events HTTP/1.1\r\nHost: here\r\n\r\n");
  {
    std::lock_guard lock(mutex);
    released = 1;
  }
  changed.notify_all();
  // The first event arrives while the producer still waits for the second: it was flushed.
  std::string data = read_until(fd, "data: event 1\n\n");
  CHECK(data.find("Transfer-Encoding: chunked") != std::string::npos);
  CHECK(data.find("data: event 2") == std::string::npos);
  {
    std::lock_guard lock(mutex);
    released = 2;
  }
  changed.notify_all();
  data = read_until(fd, "data: event 2\n\n", data);
  CHECK(data.find("data: event 2\n\n") != std::string::npos);
  CHECK((*server)->in_flight() == 1);
  // Stopping tells the producer, which ends the stream: the chunked body ends properly.
  std::thread stopper([&] { (*server)->stop(std::chrono::milliseconds(5000)); });
  data = read_until(fd, "\r\n0\r\n\r\n", data);
  stopper.join();
  ::close(fd);
  CHECK(data.find("\r\n0\r\n\r\n") != std::string::npos);
}

TEST_CASE("httpd::HttpServer answers 413 to a body over the limit, before reading it") {
  int calls = 0;
  httpd::Limits limits;
  limits.max_body_bytes = 1000;
  auto server = httpd::HttpServer::start("127.0.0.1", 0, [&](const httpd::Request&) {
    ++calls;
    return httpd::Response::text(200, "ok", "text/plain");
  }, limits);
  REQUIRE(server.ok());
  const int fd = connect_to((*server)->port());
  send_text(fd, "POST / HTTP/1.1\r\nHost: here\r\nContent-Length: 1001\r\nConnection: close\r\n\r\n");
  const std::string reply = read_until(fd, "}\n");
  ::close(fd);
  CHECK(reply.rfind("HTTP/1.1 413", 0) == 0);
  CHECK(reply.find("at most 1000 bytes") != std::string::npos);
  CHECK(calls == 0);
  CHECK(httpd::is_loopback_address("127.0.0.1"));
  CHECK(httpd::is_loopback_address("127.1.2.3"));
  CHECK(httpd::is_loopback_address("::1"));
  CHECK(httpd::is_loopback_address("::ffff:127.0.0.1"));
  CHECK_FALSE(httpd::is_loopback_address("10.0.0.1"));
  CHECK_FALSE(httpd::is_loopback_address("0.0.0.0"));
  CHECK_FALSE(httpd::HttpServer::start("not-an-address", 0, nullptr, {}).ok());
}

TEST_CASE("httpd::HttpServer answers 503 on a connection beyond its limit, in JSON") {
  httpd::Limits limits;
  limits.max_connections = 2;
  auto server = httpd::HttpServer::start("127.0.0.1", 0, [](const httpd::Request&) {
    return httpd::Response::text(200, "ok", "text/plain");
  }, limits);
  REQUIRE(server.ok());
  const int port = (*server)->port();
  // Two connections, the first answered (two are allowed) and kept open.
  const int first = connect_to(port);
  const int second = connect_to(port);
  send_text(first, "GET / HTTP/1.1\r\nHost: here\r\n\r\n");
  CHECK(read_until(first, "\r\n\r\nok").rfind("HTTP/1.1 200", 0) == 0);
  // The third is accepted after both (the listener accepts in order): over the limit.
  const int third = connect_to(port);
  send_text(third, "GET / HTTP/1.1\r\nHost: here\r\nConnection: close\r\n\r\n");
  const std::string refused = read_until(third, "}\n");
  ::close(third);
  CHECK(refused.rfind("HTTP/1.1 503", 0) == 0);
  CHECK(refused.find("too many connections: at most 2") != std::string::npos);
  ::close(first);
  ::close(second);
}
