// Tests for core/util/config_file.cpp: every rule of the config format and the exact text of
// every error.
#include <catch2/catch.hpp>

#include "core/util/config_file.hpp"

using namespace kasava::util;
using namespace std::string_literals;

namespace {

constexpr std::string_view k_origin = "/home/u/.config/kasava/config";

std::vector<ConfigEntry> parse_ok(std::string_view text) {
  auto parsed = parse_config(text, k_origin);
  if (!parsed) FAIL(parsed.error().message);
  return std::move(parsed).value();
}

std::string parse_error(std::string_view text) {
  auto parsed = parse_config(text, k_origin);
  if (parsed) FAIL("parsed without error: " << std::string(text));
  return parsed.error().message;
}

// The value of the only entry of `text`.
std::string value_of(std::string_view text) {
  const auto entries = parse_ok(text);
  REQUIRE(entries.size() == 1);
  return entries[0].value;
}

}  // namespace

TEST_CASE("util::parse_config reads the example file") {
  const auto entries = parse_ok(
      "# comment (also ; comments)\n"
      "model = voyage:voyage-code-3\n"
      "openai_base_url = http://localhost:11434/v1\n"
      "answer_model = \"anthropic:claude-sonnet-4-5\"   # quotes optional\n");
  REQUIRE(entries.size() == 3);
  CHECK(entries[0].key == "model");
  CHECK(entries[0].value == "voyage:voyage-code-3");
  CHECK(entries[0].line == 2);
  CHECK(entries[1].key == "openai_base_url");
  CHECK(entries[1].value == "http://localhost:11434/v1");
  CHECK(entries[1].line == 3);
  CHECK(entries[2].key == "answer_model");
  CHECK(entries[2].value == "anthropic:claude-sonnet-4-5");
  CHECK(entries[2].line == 4);
}

TEST_CASE("util::parse_config skips blank lines and comments") {
  CHECK(parse_ok("").empty());
  CHECK(parse_ok("\n\n   \n\t\n").empty());
  CHECK(parse_ok("# a = b\n; c = d\n   # indented\n\t; tabbed").empty());
  const auto entries = parse_ok("\n# x\n\nkey = v\n");
  REQUIRE(entries.size() == 1);
  CHECK(entries[0].line == 4);
}

TEST_CASE("util::parse_config trims keys and values") {
  const auto entries = parse_ok("  key\t=\t value with  inner  spaces \t\nk2=v2\nk3 =\n");
  REQUIRE(entries.size() == 3);
  CHECK(entries[0].key == "key");
  CHECK(entries[0].value == "value with  inner  spaces");
  CHECK(entries[1].key == "k2");
  CHECK(entries[1].value == "v2");
  CHECK(entries[2].key == "k3");
  CHECK(entries[2].value == "");  // an empty value is allowed
}

TEST_CASE("util::parse_config keys are case-insensitive and returned lower-cased") {
  const auto entries = parse_ok("Model = a\nOPENAI_BASE_URL = b\nsearch.limit-2 = c\n");
  REQUIRE(entries.size() == 3);
  CHECK(entries[0].key == "model");
  CHECK(entries[1].key == "openai_base_url");
  CHECK(entries[2].key == "search.limit-2");
  CHECK(entries[0].value == "a");  // values keep their case
}

TEST_CASE("util::parse_config trailing comments in unquoted values") {
  CHECK(value_of("k = v # comment") == "v");
  CHECK(value_of("k = v ; comment") == "v");
  CHECK(value_of("k = v\t# comment") == "v");
  CHECK(value_of("k = # only a comment") == "");
  CHECK(value_of("k =# only a comment") == "");
  // '#' and ';' inside a word are part of the value.
  CHECK(value_of("k = http://host/page#anchor") == "http://host/page#anchor");
  CHECK(value_of("k = a;b") == "a;b");
  // Quotes and backslashes in an unquoted value are kept as they are.
  CHECK(value_of("k = say \"hi\"") == "say \"hi\"");
  CHECK(value_of("k = C:\\path\\n") == "C:\\path\\n");
  CHECK(value_of("k = a = b") == "a = b");  // the first '=' separates
}

TEST_CASE("util::parse_config quoted values") {
  CHECK(value_of("k = \"  spaced  \"") == "  spaced  ");
  CHECK(value_of("k = \"a # not a comment ; either\"") == "a # not a comment ; either");
  CHECK(value_of("k = \"\"") == "");
  CHECK(value_of("k = \"x\"   # comment") == "x");
  CHECK(value_of("k = \"x\"; comment") == "x");
  CHECK(value_of("k=\"x\"") == "x");
  CHECK(value_of(R"(k = "say \"hi\"")") == "say \"hi\"");
  CHECK(value_of(R"(k = "back\\slash")") == "back\\slash");
  CHECK(value_of(R"(k = "two\nlines")") == "two\nlines");
  CHECK(value_of(R"(k = "\\")") == "\\");
}

TEST_CASE("util::parse_config a key given twice keeps both entries in order") {
  const auto entries = parse_ok("model = a\nother = x\nmodel = b\n");
  REQUIRE(entries.size() == 3);
  CHECK(entries[0].key == "model");
  CHECK(entries[0].value == "a");
  CHECK(entries[2].key == "model");
  CHECK(entries[2].value == "b");
  CHECK(entries[2].line == 3);
}

TEST_CASE("util::parse_config line endings and byte-order mark") {
  const auto crlf = parse_ok("a = 1\r\nb = \"2\"\r\n# c\r\n");
  REQUIRE(crlf.size() == 2);
  CHECK(crlf[0].value == "1");
  CHECK(crlf[1].value == "2");
  const auto no_final_newline = parse_ok("a = 1\nb = 2");
  REQUIRE(no_final_newline.size() == 2);
  CHECK(no_final_newline[1].value == "2");
  CHECK(no_final_newline[1].line == 2);
  const auto bom = parse_ok("\xEF\xBB\xBFmodel = x\n");
  REQUIRE(bom.size() == 1);
  CHECK(bom[0].key == "model");
  CHECK(bom[0].line == 1);
  // Non-ASCII text is fine in values.
  CHECK(value_of("k = caf\xC3\xA9") == "caf\xC3\xA9");
}

TEST_CASE("util::parse_config errors name the file and the line") {
  const std::string at = "'/home/u/.config/kasava/config', line ";
  CHECK(parse_error("a = 1\nmodel voyage\n") == at + "2: expected 'key = value'");
  CHECK(parse_error("= value") == at + "1: missing key before '='");
  CHECK(parse_error("  \t= value") == at + "1: missing key before '='");
  CHECK(parse_error("open ai = x") ==
        at + "1: invalid key 'open ai': use letters, digits, '_', '.' and '-'");
  CHECK(parse_error("caf\xC3\xA9 = x") ==
        at + "1: invalid key 'caf\xC3\xA9': use letters, digits, '_', '.' and '-'");
  CHECK(parse_error("[kasava]\nmodel = x") ==
        at + "1: sections ('[kasava]') are not supported: write 'key = value' lines");
  CHECK(parse_error("k = \"open") == at + "1: unterminated quoted value");
  CHECK(parse_error("k = \"open\\\"") == at + "1: unterminated quoted value");
  CHECK(parse_error("k = \"ends in backslash\\") == at + "1: unterminated quoted value");
  CHECK(parse_error("k = \"two\nlines\"") == at + "1: unterminated quoted value");
  CHECK(parse_error(R"(k = "tab\there")") ==
        at + R"(1: unknown escape '\t' in quoted value (use \", \\ or \n))");
  CHECK(parse_error("k = \"x\" y") == at + "1: unexpected text after the closing quote: 'y'");
  CHECK(parse_error("k = \"x\"\"y\"") ==
        at + "1: unexpected text after the closing quote: '\"y\"'");
  CHECK(parse_error("a = 1\nk = v\0w\n"s) == at + "2: contains a NUL byte");
  CHECK(parse_error("# \0 in a comment"s) == at + "1: contains a NUL byte");
}

TEST_CASE("util::parse_config size limits") {
  const std::string at = "'/home/u/.config/kasava/config', line ";
  const std::string longest = "k = " + std::string(k_config_max_line_bytes - 4, 'v');
  CHECK(value_of(longest).size() == k_config_max_line_bytes - 4);
  CHECK(value_of(longest + "\r\n").size() == k_config_max_line_bytes - 4);  // ending not counted
  CHECK(parse_error("a = 1\n" + longest + "v\n") == at + "2: line longer than 4096 bytes");
  CHECK(parse_error("# " + std::string(5000, 'c')) == at + "1: line longer than 4096 bytes");

  std::string largest;
  while (largest.size() + 10 <= k_config_max_bytes) largest += "k = 12345\n";
  largest += std::string(k_config_max_bytes - largest.size(), '\n');
  REQUIRE(largest.size() == k_config_max_bytes);
  CHECK(parse_ok(largest).size() == k_config_max_bytes / 10);
  CHECK(parse_error(largest + "\n") ==
        "'/home/u/.config/kasava/config': larger than 64 KiB (65537 bytes)");
}

TEST_CASE("util::is_config_key") {
  CHECK(is_config_key("model"));
  CHECK(is_config_key("a.b-c_d9"));
  CHECK_FALSE(is_config_key(""));
  CHECK_FALSE(is_config_key("Model"));  // parse_config lower-cases before checking
  CHECK_FALSE(is_config_key("a b"));
  CHECK_FALSE(is_config_key("a=b"));
}
