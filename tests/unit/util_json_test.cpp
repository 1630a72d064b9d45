// Unit tests for core/util/json.cpp: the JSON writer.
#include <catch2/catch.hpp>

#include "core/util/json.hpp"
#include "core/util/json_value.hpp"

using kasava::util::JsonWriter;

TEST_CASE("util::JsonWriter nests and separates values") {
  JsonWriter json;
  json.begin_object();
  json.key("a").value(1);
  json.key("b").begin_array().value("x").value(true).null().end_array();
  json.key("c").begin_object().end_object();
  json.key("d").value(0.5);
  json.end_object();
  CHECK(json.str() == R"({"a":1,"b":["x",true,null],"c":{},"d":0.5})");
}

TEST_CASE("util::json_quote escapes and repairs invalid UTF-8") {
  CHECK(kasava::util::json_quote("a\"b\\c\n\t\x01") == R"("a\"b\\c\n\t\u0001")");
  CHECK(kasava::util::json_quote("caf\xC3\xA9") == "\"caf\xC3\xA9\"");
  CHECK(kasava::util::json_quote("bad\xFF") == "\"bad\xEF\xBF\xBD\"");
}

TEST_CASE("util::json_quote writes every byte so that JSON reads it back") {
  // Text without quotes, backslashes or control characters is quoted as it is; everything
  // else is escaped: either way a JSON reader gets the text back, byte for byte.
  CHECK(kasava::util::json_quote("a/b\x7f \xF0\x9F\x98\x80") == "\"a/b\x7f \xF0\x9F\x98\x80\"");
  CHECK(kasava::util::json_quote("") == "\"\"");
  for (int byte = 0; byte < 0x80; ++byte) {
    const std::string text = "x" + std::string(1, static_cast<char>(byte)) + "y";
    const std::string quoted = kasava::util::json_quote(text);
    auto parsed = kasava::util::parse_json(quoted);
    REQUIRE(parsed);
    CHECK(parsed->as_string() == text);
    CHECK((quoted.size() == text.size() + 2) == (byte >= 0x20 && byte != '"' && byte != '\\'));
  }
}
