// Tests of the Server-Sent Events parser (core/net/sse.cpp), including every split of a
// stream into two reads.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "core/net/sse.hpp"

using namespace kasava;

namespace {

struct Parsed {
  std::vector<net::SseEvent> events;
  bool at_boundary = false;
};

Parsed parse(const std::vector<std::string>& pieces) {
  net::SseParser parser;
  Parsed out;
  for (const std::string& piece : pieces)
    REQUIRE(parser.feed(piece, [&](const net::SseEvent& e) {
      out.events.push_back(e);
      return true;
    }));
  out.at_boundary = parser.at_boundary();
  return out;
}

std::vector<std::string> datas(const Parsed& parsed) {
  std::vector<std::string> out;
  for (const auto& e : parsed.events) out.push_back(e.data);
  return out;
}

}  // namespace

TEST_CASE("net::SseParser reads data lines and dispatches on a blank line") {
  const Parsed p = parse({"data: hello\n\ndata: world\n\n"});
  CHECK(datas(p) == std::vector<std::string>{"hello", "world"});
  CHECK(p.events[0].type == "message");
  CHECK(p.at_boundary);
}

TEST_CASE("net::SseParser joins multi-line data with newlines") {
  const Parsed p = parse({"data: line 1\ndata: line 2\ndata\ndata:x\n\n"});
  CHECK(datas(p) == std::vector<std::string>{"line 1\nline 2\n\nx"});
}

TEST_CASE("net::SseParser reads event types, ids, comments and retry") {
  net::SseParser parser;
  std::vector<net::SseEvent> events;
  REQUIRE(
      parser.feed(": ping\n\nevent: message_start\nid: 7\ndata: {\"a\":1}\n\n"
                  "retry: 1500\nevent: content_block_delta\ndata: {}\n\n"
                  "unknown: field\ndata: plain\n\n",
                  [&](const net::SseEvent& e) {
                    events.push_back(e);
                    return true;
                  }));
  REQUIRE(events.size() == 3);
  CHECK(events[0].type == "message_start");
  CHECK(events[0].id == "7");
  CHECK(events[0].data == "{\"a\":1}");
  CHECK(events[1].type == "content_block_delta");
  CHECK(events[1].id == "7");  // the last id persists
  CHECK(events[2].type == "message");
  CHECK(parser.retry_ms() == 1500);
}

TEST_CASE("net::SseParser accepts CRLF and CR line ends and a byte-order mark") {
  CHECK(datas(parse({"\xEF\xBB\xBF"
                     "data: a\r\n\r\ndata: b\r\rdata: c\n\n"})) ==
        std::vector<std::string>{"a", "b", "c"});
}

TEST_CASE("net::SseParser recognises OpenAI's [DONE]") {
  const Parsed p = parse({"data: {\"x\":1}\n\ndata: [DONE]\n\n"});
  REQUIRE(p.events.size() == 2);
  CHECK(!p.events[0].is_done());
  CHECK(p.events[1].is_done());
}

TEST_CASE("net::SseParser does not dispatch events without data") {
  CHECK(parse({"event: ping\n\n: comment\n\nid: 3\n\n"}).events.empty());
}

TEST_CASE("net::SseParser reports a truncated stream and never dispatches its last event") {
  SECTION("mid-line") {
    const Parsed p = parse({"data: one\n\ndata: tw"});
    CHECK(datas(p) == std::vector<std::string>{"one"});
    CHECK(!p.at_boundary);
  }
  SECTION("complete lines, no blank line") {
    const Parsed p = parse({"data: one\n\ndata: two\n"});
    CHECK(datas(p) == std::vector<std::string>{"one"});
    CHECK(!p.at_boundary);
  }
  SECTION("clean end") {
    CHECK(parse({"data: one\n\n"}).at_boundary);
  }
  SECTION("empty stream") {
    CHECK(parse({}).at_boundary);
  }
}

TEST_CASE("net::SseParser gives the same events however the stream is split") {
  const std::string stream =
      "\xEF\xBB\xBF: hi\r\nevent: a\r\ndata: 1\r\ndata: 2\r\n\r\ndata: three\rid: 9\r\r"
      "data: [DONE]\n\n";
  const Parsed whole = parse({stream});
  REQUIRE(whole.events.size() == 3);
  for (std::size_t cut = 0; cut <= stream.size(); ++cut) {
    for (std::size_t cut2 = cut; cut2 <= stream.size(); cut2 += 7) {
      const Parsed split =
          parse({stream.substr(0, cut), stream.substr(cut, cut2 - cut), stream.substr(cut2)});
      INFO("cuts at " << cut << " and " << cut2);
      REQUIRE(datas(split) == datas(whole));
      CHECK(split.events[0].type == "a");
      CHECK(split.events[1].id == "9");
    }
  }
}

TEST_CASE("net::SseParser stops when the callback says so") {
  net::SseParser parser;
  int seen = 0;
  REQUIRE(parser.feed("data: 1\n\ndata: 2\n\ndata: 3\n\n",
                      [&](const net::SseEvent&) { return ++seen < 2; }));
  CHECK(seen == 2);
  CHECK(parser.stopped());
}

TEST_CASE("net::SseParser fails on an event larger than its limit") {
  net::SseParser parser(100);
  const auto status =
      parser.feed("data: " + std::string(200, 'x'), [](const net::SseEvent&) { return true; });
  REQUIRE(!status);
  CHECK(status.error().message == "event stream: an event exceeds 100 bytes");
  CHECK(!parser.feed("data: x\n\n", [](const net::SseEvent&) { return true; }));
}
