// Unit tests for core/mcp/arguments.cpp: typed tool arguments with defaults, ranges, choices,
// quoted numbers, and the message of the first problem.
#include <catch2/catch.hpp>

#include "core/mcp/arguments.hpp"

using kasava::mcp::Arguments;
using kasava::util::JsonValue;
using kasava::util::parse_json;

TEST_CASE("mcp::Arguments: values, defaults and quoted integers") {
  const JsonValue json = *parse_json(R"({"query":"auth","limit":"5","mode":"lexical","min":0.5,"path":null})");
  Arguments args(json);
  CHECK(args.required_string("query") == "auth");
  CHECK(args.integer("limit", 10, 1, 100) == 5);
  CHECK(args.choice("mode", {"hybrid", "lexical"}, "hybrid") == "lexical");
  CHECK(args.number("min", 0.0, 0.0, 1.0) == 0.5);
  CHECK(args.string("path", "*") == "*");  // null counts as absent
  CHECK(args.string("language") == "");
  CHECK(args.integer("start", 1, 1, 9) == 1);
  CHECK(args.ok());
}

TEST_CASE("mcp::Arguments: the first problem is reported, naming the argument") {
  const JsonValue json = *parse_json(R"({"query":"  ","limit":0,"mode":"fuzzy"})");
  Arguments args(json);
  args.required_string("query");
  args.integer("limit", 10, 1, 100);
  args.choice("mode", {"hybrid", "lexical"}, "hybrid");
  CHECK_FALSE(args.ok());
  CHECK(args.error() == "invalid argument 'query': must not be empty");

  const JsonValue limit_json = *parse_json(R"({"limit":1000,"x":"y"})");
  Arguments limit(limit_json);
  CHECK(limit.integer("limit", 10, 1, 100) == 10);
  CHECK(limit.error() == "invalid argument 'limit': expected an integer from 1 to 100, got 1000");

  const JsonValue empty = *parse_json("{}");
  Arguments missing(empty);
  missing.required_string("query");
  CHECK(missing.error() == "missing argument 'query'");

  const JsonValue wrong_json = *parse_json(R"({"path":3,"mode":"fuzzy"})");
  Arguments wrong(wrong_json);
  wrong.string("path");
  CHECK(wrong.error() == "invalid argument 'path': expected a string, got number");
  Arguments choice(wrong_json);
  choice.choice("mode", {"hybrid", "lexical"}, "hybrid");
  CHECK(choice.error() == "invalid argument 'mode': expected one of hybrid, lexical, got 'fuzzy'");
}

TEST_CASE("mcp::Arguments: a string with a NUL character is refused, not cut short") {
  const JsonValue json = *parse_json(R"({"path":"src/a.py\u0000.png","query":"x"})");
  Arguments args(json);
  CHECK(args.required_string("query") == "x");
  CHECK(args.required_string("path").empty());
  CHECK_FALSE(args.ok());
  CHECK(args.error() == "invalid argument 'path': must not contain a NUL character (\\u0000)");
}
