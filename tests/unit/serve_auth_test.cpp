// Tests core/serve/auth: token files, bearer tokens, repository globs, Host and Origin rules,
// and repository names from origin URLs.
#include <catch2/catch.hpp>

#include "core/serve/auth.hpp"

using namespace kasava::serve;

TEST_CASE("serve::parse_token_file reads tokens and their repository globs") {
  auto tokens = parse_token_file("# comment\n\nfirst-token-0123456789\r\nsecond-token-abcdefghij  acme/*  other/web\n");
  REQUIRE(tokens.ok());
  REQUIRE(tokens->size() == 2);
  CHECK((*tokens)[0].secret == "first-token-0123456789");
  CHECK((*tokens)[0].repositories.empty());
  CHECK((*tokens)[1].repositories == std::vector<std::string>{"acme/*", "other/web"});
  CHECK((*tokens)[0].allows("anything/at-all"));
  CHECK((*tokens)[1].allows("acme/widgets"));
  CHECK((*tokens)[1].allows("other/web"));
  CHECK_FALSE((*tokens)[1].allows("other/api"));
  CHECK_FALSE((*tokens)[1].allows("widgets"));
}

TEST_CASE("serve::parse_token_file refuses short, repeated or missing tokens, naming the line only") {
  auto short_token = parse_token_file("\nshort\n");
  REQUIRE_FALSE(short_token.ok());
  CHECK(short_token.error().message.find("line 2") != std::string::npos);
  CHECK(short_token.error().message.find("'short'") == std::string::npos);
  CHECK_FALSE(parse_token_file("same-token-0123456789\nsame-token-0123456789 a/*\n").ok());
  CHECK_FALSE(parse_token_file("# only a comment\n").ok());
  CHECK_FALSE(parse_token_file("token-with-\x01-control-char\n").ok());
}

TEST_CASE("serve::find_token accepts only 'Bearer <token>' of a known token") {
  auto tokens = parse_token_file("first-token-0123456789\nsecond-token-abcdefghij acme/*\n").value();
  CHECK(find_token(tokens, "Bearer first-token-0123456789") == &tokens[0]);
  CHECK(find_token(tokens, "bearer second-token-abcdefghij") == &tokens[1]);
  CHECK(find_token(tokens, "Bearer first-token-012345678") == nullptr);
  CHECK(find_token(tokens, "Bearer first-token-01234567890") == nullptr);
  CHECK(find_token(tokens, "Basic first-token-0123456789") == nullptr);
  CHECK(find_token(tokens, "first-token-0123456789") == nullptr);
  CHECK(find_token(tokens, "Bearer ") == nullptr);
  CHECK(constant_time_equals("abc", "abc"));
  CHECK_FALSE(constant_time_equals("abc", "abd"));
  CHECK_FALSE(constant_time_equals("abc", "abcd"));
  CHECK_FALSE(constant_time_equals("", "a"));
}

TEST_CASE("serve::host_allowed: loopback names with the server's port, anything elsewhere") {
  const HostRule loopback = host_rule_for("127.0.0.1", true, 7700);
  CHECK(host_allowed(loopback, std::string("localhost:7700")));
  CHECK(host_allowed(loopback, std::string("LOCALHOST")));
  CHECK(host_allowed(loopback, std::string("127.0.0.1:7700")));
  CHECK(host_allowed(loopback, std::string("[::1]:7700")));
  CHECK_FALSE(host_allowed(loopback, std::string("localhost:7701")));
  CHECK_FALSE(host_allowed(loopback, std::string("evil.example:7700")));
  CHECK_FALSE(host_allowed(loopback, std::string("localhost.evil.example")));
  CHECK_FALSE(host_allowed(loopback, std::nullopt));
  const HostRule v6 = host_rule_for("::1", true, 80);
  CHECK(host_allowed(v6, std::string("[::1]")));
  const HostRule open = host_rule_for("0.0.0.0", false, 7700);
  CHECK(host_allowed(open, std::string("search.internal:7700")));
  CHECK(host_allowed(open, std::nullopt));
  const HostRule named = host_rule_for("0.0.0.0", false, 7700, {"Search.Internal"});
  CHECK(host_allowed(named, std::string("search.internal:7700")));
  CHECK(host_allowed(named, std::string("search.internal")));
  CHECK_FALSE(host_allowed(named, std::string("0.0.0.0:7700")));
  CHECK_FALSE(host_allowed(named, std::string("rebound.example:7700")));
  CHECK_FALSE(host_allowed(named, std::nullopt));
  const HostRule address = host_rule_for("10.1.2.3", false, 80, {"code"});
  CHECK(host_allowed(address, std::string("10.1.2.3")));
  CHECK(host_allowed(address, std::string("code:80")));
  const HostRule local_named = host_rule_for("127.0.0.1", true, 7700, {"dev.box"});
  CHECK(host_allowed(local_named, std::string("dev.box:7700")));
  CHECK(host_allowed(local_named, std::string("localhost:7700")));
}

TEST_CASE("serve::origin_allowed: absent or the same origin as Host") {
  CHECK(origin_allowed(std::nullopt, std::string("localhost:7700")));
  CHECK(origin_allowed(std::string("http://localhost:7700"), std::string("localhost:7700")));
  CHECK_FALSE(origin_allowed(std::string("http://evil.example"), std::string("localhost:7700")));
  CHECK_FALSE(origin_allowed(std::string("https://localhost:7700"), std::string("localhost:7700")));
  CHECK_FALSE(origin_allowed(std::string("null"), std::string("localhost:7700")));
  CHECK_FALSE(origin_allowed(std::string("http://localhost:7700"), std::nullopt));
}

TEST_CASE("serve::repository_name: owner/name of the origin URL, else the folder") {
  CHECK(repository_name(std::string("https://github.com/acme/widgets.git"), "/src/w") == "acme/widgets");
  CHECK(repository_name(std::string("https://github.com/acme/widgets/"), "/src/w") == "acme/widgets");
  CHECK(repository_name(std::string("git@github.com:acme/widgets.git"), "/src/w") == "acme/widgets");
  CHECK(repository_name(std::string("ssh://git@host:22/group/sub/project"), "/src/w") == "sub/project");
  CHECK(repository_name(std::nullopt, "/home/me/src/widgets") == "widgets");
  CHECK(repository_name(std::nullopt, "/home/me/src/widgets/") == "widgets");
}
