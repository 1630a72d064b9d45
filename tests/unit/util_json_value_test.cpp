// Unit tests for core/util/json_value.cpp: the JSON reader (grammar, escapes, numbers,
// errors with offsets, depth limit) and JsonValue's accessors and serializer.
#include <catch2/catch.hpp>

#include <cmath>
#include <string>

#include "core/util/json.hpp"
#include "core/util/json_value.hpp"

using kasava::util::JsonParseOptions;
using kasava::util::JsonType;
using kasava::util::JsonTypeError;
using kasava::util::JsonValue;
using kasava::util::parse_json;

namespace {

JsonValue parse_ok(std::string_view text) {
  auto result = parse_json(text);
  INFO("input: " << text);
  if (!result) FAIL("unexpected error: " << result.error().message);
  return std::move(result).value();
}

std::string parse_error(std::string_view text, const JsonParseOptions& options = {}) {
  auto result = parse_json(text, options);
  INFO("input: " << text);
  if (result) FAIL("expected an error, parsed " << result->dump());
  return result.error().message;
}

}  // namespace

TEST_CASE("util::parse_json reads scalars") {
  CHECK(parse_ok("null").is_null());
  CHECK(parse_ok("true").as_bool());
  CHECK_FALSE(parse_ok("false").as_bool());
  CHECK(parse_ok(" \t\r\n42 \n").as_integer() == 42);
  CHECK(parse_ok("\"hi\"").as_string() == "hi");
  CHECK(parse_ok("\xEF\xBB\xBF[]").is_array());  // byte-order mark ignored
}

TEST_CASE("util::parse_json reads nested arrays and objects in order") {
  const JsonValue value = parse_ok(R"({"a": [1, 2.5, "x", {"b": null}], "c": {}, "d": []})");
  REQUIRE(value.is_object());
  REQUIRE(value.size() == 3);
  CHECK(value.as_object()[0].key == "a");
  CHECK(value.as_object()[2].key == "d");
  CHECK(value["a"].size() == 4);
  CHECK(value["a"][0].as_integer() == 1);
  CHECK(value["a"][1].as_number() == 2.5);
  CHECK(value["a"][2].as_string() == "x");
  CHECK(value["a"][3].contains("b"));
  CHECK(value["a"][3]["b"].is_null());
  CHECK(value["c"].is_object());
  CHECK(value["c"].size() == 0);
  CHECK(value["d"].is_array());
}

TEST_CASE("util::JsonValue lookups of missing members and elements give null") {
  const JsonValue value = parse_ok(R"({"a": [1]})");
  CHECK(value["missing"].is_null());
  CHECK(value["missing"]["deeper"][3].is_null());
  CHECK(value["a"][1].is_null());
  CHECK(value["a"]["not an object"].is_null());
  CHECK(value.find("missing") == nullptr);
  CHECK_FALSE(value.contains("missing"));
  CHECK(value[0].is_null());  // an object is not an array
}

TEST_CASE("util::JsonValue repeated keys: lookups find the last, both are kept") {
  const JsonValue value = parse_ok(R"({"k": 1, "k": 2})");
  CHECK(value["k"].as_integer() == 2);
  CHECK(value.size() == 2);
}

TEST_CASE("util::JsonValue checked and unchecked accessors") {
  const JsonValue value = parse_ok(R"({"s": "x", "n": 1.5, "i": 7, "b": true})");
  CHECK(value["s"].get_number() == std::nullopt);
  CHECK(value["n"].get_string() == nullptr);
  CHECK(value["n"].get_integer() == std::nullopt);
  CHECK(value["i"].get_integer() == 7);
  CHECK(value["b"].get_bool() == true);
  CHECK(value.get_array() == nullptr);
  CHECK(value.get_object() != nullptr);
  CHECK_THROWS_AS(value["s"].as_number(), JsonTypeError);
  CHECK_THROWS_WITH(value["n"].as_string(), "expected a string, got a number");
  CHECK_THROWS_WITH(value["s"].as_array(), "expected an array, got a string");
  CHECK_THROWS_WITH(value["n"].as_integer(), "expected an integer, got 1.5");
  CHECK_THROWS_WITH(value["missing"].as_bool(), "expected a boolean, got null");
  CHECK(value["s"].type() == JsonType::string);
  CHECK(std::string(kasava::util::json_type_name(JsonType::object)) == "object");
}

TEST_CASE("util::parse_json decodes escapes") {
  CHECK(parse_ok(R"("a\"b\\c\/d\b\f\n\r\t")").as_string() == "a\"b\\c/d\b\f\n\r\t");
  CHECK(parse_ok(R"("\u0041\u00e9\u20AC")").as_string() == "A\xC3\xA9\xE2\x82\xAC");
  CHECK(parse_ok(R"("\u0000")").as_string() == std::string(1, '\0'));
}

TEST_CASE("util::parse_json joins surrogate pairs and replaces lone surrogates") {
  CHECK(parse_ok(R"("\uD83D\uDE00")").as_string() == "\xF0\x9F\x98\x80");  // U+1F600
  CHECK(parse_ok(R"("\ud834\udd1e")").as_string() == "\xF0\x9D\x84\x9E");  // U+1D11E
  const std::string replacement = "\xEF\xBF\xBD";
  CHECK(parse_ok(R"("\uD800")").as_string() == replacement);
  CHECK(parse_ok(R"("\uDC00x")").as_string() == replacement + "x");
  CHECK(parse_ok(R"("\uD800\u0041")").as_string() == replacement + "A");
  CHECK(parse_ok(R"("\uD800\uD83D\uDE00")").as_string() == replacement + "\xF0\x9F\x98\x80");
}

TEST_CASE("util::parse_json accepts valid UTF-8 and rejects invalid UTF-8 in strings") {
  CHECK(parse_ok("\"caf\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x98\x80\"").as_string() ==
        "caf\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x98\x80");
  CHECK(parse_error("\"a\xFF\"") == "invalid JSON at byte 2: invalid UTF-8 in a string");
  CHECK_THAT(parse_error("\"\xC0\xAF\""), Catch::Contains("invalid UTF-8"));          // overlong
  CHECK_THAT(parse_error("\"\xED\xA0\x80\""), Catch::Contains("invalid UTF-8"));      // surrogate
  CHECK_THAT(parse_error("\"\xF4\x90\x80\x80\""), Catch::Contains("invalid UTF-8"));  // > U+10FFFF
  CHECK_THAT(parse_error("\"\xE2\x82\""), Catch::Contains("invalid UTF-8"));          // truncated
  CHECK_THAT(parse_error("\"\xE2\x82"), Catch::Contains("invalid UTF-8"));
}

TEST_CASE("util::parse_json reads numbers") {
  CHECK(parse_ok("0").as_integer() == 0);
  CHECK(parse_ok("-0").as_number() == 0.0);
  CHECK(std::signbit(parse_ok("-0.0").as_number()));
  CHECK(parse_ok("-12").as_integer() == -12);
  CHECK(parse_ok("3.25").as_number() == 3.25);
  CHECK(parse_ok("1e3").as_number() == 1000.0);
  CHECK(parse_ok("1E+3").as_integer() == 1000);  // integral value, even with an exponent
  CHECK(parse_ok("2.5e-1").as_number() == 0.25);
  CHECK(parse_ok("9223372036854775807").as_integer() == INT64_MAX);
  CHECK(parse_ok("-9223372036854775808").as_integer() == INT64_MIN);
  // Beyond int64: still a number, no longer an exact integer.
  CHECK(parse_ok("18446744073709551616").get_integer() == std::nullopt);
  CHECK(parse_ok("18446744073709551616").as_number() == 18446744073709551616.0);
  CHECK(parse_ok("1e-400").as_number() == 0.0);  // underflow rounds to zero
  CHECK(parse_ok("0.0000e999999999999").as_number() == 0.0);
  CHECK(parse_ok("1.7976931348623157e308").as_number() == 1.7976931348623157e308);
}

TEST_CASE("util::parse_json rejects numbers outside the grammar or range") {
  CHECK(parse_error("01") == "invalid JSON at byte 1: leading zero in a number");
  CHECK_THAT(parse_error("-"), Catch::Contains("expected a digit"));
  CHECK_THAT(parse_error("1."), Catch::Contains("expected a digit after '.'"));
  CHECK_THAT(parse_error(".5"), Catch::Contains("expected a value"));
  CHECK_THAT(parse_error("+1"), Catch::Contains("expected a value"));
  CHECK_THAT(parse_error("1e"), Catch::Contains("exponent"));
  CHECK_THAT(parse_error("0x10"), Catch::Contains("after the document"));
  CHECK_THAT(parse_error("NaN"), Catch::Contains("expected a value"));
  CHECK_THAT(parse_error("-Infinity"), Catch::Contains("expected a digit"));
  CHECK(parse_error("[1e400]") == "invalid JSON at byte 1: number out of range");
  CHECK(parse_error("-1" + std::string(400, '0')) == "invalid JSON at byte 0: number out of range");
}

TEST_CASE("util::parse_json errors name the byte offset and the problem") {
  CHECK(parse_error("") == "invalid JSON at byte 0: unexpected end of input, expected a value");
  CHECK(parse_error("   ") == "invalid JSON at byte 3: unexpected end of input, expected a value");
  CHECK(parse_error(R"({"a" 1})") ==
        "invalid JSON at byte 5: unexpected '1', expected ':' after an object key");
  CHECK(parse_error(R"({"a":1,})") == "invalid JSON at byte 7: trailing comma in an object");
  CHECK(parse_error("[1,]") == "invalid JSON at byte 3: trailing comma in an array");
  CHECK(parse_error("[1 2]") ==
        "invalid JSON at byte 3: unexpected '2', expected ',' or ']' in an array");
  CHECK(parse_error("[1") ==
        "invalid JSON at byte 2: unexpected end of input, expected ',' or ']' in an array");
  CHECK(parse_error(R"({"a":1)") ==
        "invalid JSON at byte 6: unexpected end of input, expected ',' or '}' in an object");
  CHECK(parse_error("{a:1}") ==
        "invalid JSON at byte 1: unexpected 'a', expected a string key in an object");
  CHECK(parse_error("{'a':1}") ==
        "invalid JSON at byte 1: unexpected ''', expected a string key in an object");
  CHECK(parse_error("\"abc") == "invalid JSON at byte 0: unterminated string");
  CHECK(parse_error("\"a\nb\"") ==
        "invalid JSON at byte 2: control character byte 0x0A in a string (must be escaped)");
  CHECK(parse_error(R"("\x")") == "invalid JSON at byte 2: invalid escape '\\x' in a string");
  CHECK(parse_error(R"("\u12G4")") ==
        "invalid JSON at byte 5: invalid hex digit 'G' in a \\u escape");
  CHECK_THAT(parse_error(R"("\u12)"), Catch::Contains("end of input in a \\u escape"));
  CHECK(parse_error("tru") == "invalid JSON at byte 0: invalid literal, expected 'true'");
  CHECK(parse_error("nul1") == "invalid JSON at byte 0: invalid literal, expected 'null'");
  CHECK(parse_error("{} {}") == "invalid JSON at byte 3: unexpected '{' after the document");
  CHECK(parse_error("[] x") == "invalid JSON at byte 3: unexpected 'x' after the document");
  CHECK(parse_error("// c\n1") == "invalid JSON at byte 0: unexpected '/', expected a value");
  CHECK(parse_error("[\x01]") == "invalid JSON at byte 1: unexpected byte 0x01, expected a value");
  CHECK(parse_error(std::string_view("1\0", 2)) ==
        "invalid JSON at byte 1: unexpected byte 0x00 after the document");
}

TEST_CASE("util::parse_json names the first byte out of place") {
  // A token where a separator or the end belongs is the error, not what is wrong inside it.
  CHECK(parse_error("[1 \"a\xFF\"]") ==
        "invalid JSON at byte 3: unexpected '\"', expected ',' or ']' in an array");
  CHECK(parse_error("[1 -]") ==
        "invalid JSON at byte 3: unexpected '-', expected ',' or ']' in an array");
  CHECK(parse_error("{-1:2}") ==
        "invalid JSON at byte 1: unexpected '-', expected a string key in an object");
  CHECK(parse_error("truex") == "invalid JSON at byte 4: unexpected 'x' after the document");
  CHECK(parse_error("[1]]") == "invalid JSON at byte 3: unexpected ']' after the document");
  CHECK(parse_error("]") == "invalid JSON at byte 0: unexpected ']', expected a value");
  CHECK(parse_error("09e") == "invalid JSON at byte 1: leading zero in a number");
  // An invalid UTF-8 sequence is named at its first byte, a cut-off escape at the end.
  CHECK(parse_error("\"\xE2\x82\"") == "invalid JSON at byte 1: invalid UTF-8 in a string");
  CHECK(parse_error("\"\\uD\xDB") ==
        "invalid JSON at byte 5: unexpected end of input in a \\u escape");
  // A NUL byte ends nothing: what follows the document is still after it.
  CHECK(parse_error(std::string_view("{}\0{}", 5)) ==
        "invalid JSON at byte 2: unexpected byte 0x00 after the document");
}

TEST_CASE("util::parse_json replaces lone surrogates in keys, not escaped backslashes") {
  CHECK(parse_ok(R"({"\uD800":1})").as_object()[0].key == "\xEF\xBF\xBD");
  CHECK(parse_ok(R"("\\uD800")").as_string() == "\\uD800");  // a backslash, then text
  CHECK(parse_ok(R"(["\udbff\udfff", "\udc00\ud800"])").dump() ==
        "[\"\xF4\x8F\xBF\xBF\",\"\xEF\xBF\xBD\xEF\xBF\xBD\"]");
}

TEST_CASE("util::parse_json limits nesting depth instead of exhausting the stack") {
  JsonParseOptions options;
  options.max_depth = 3;
  CHECK(parse_json("[[[1]]]", options));
  CHECK(parse_json(R"({"a":{"b":[1]}})", options));
  CHECK(parse_error("[[[[1]]]]", options) ==
        "invalid JSON at byte 3: nesting deeper than 3 levels");
  CHECK_THAT(parse_error(R"({"a":{"b":{"c":{}}}})", options),
             Catch::Contains("nesting deeper than 3"));

  // The default limit holds against a hostile document far deeper than any stack allows.
  const std::string deep(1'000'000, '[');
  CHECK_THAT(parse_error(deep), Catch::Contains("nesting deeper than 256 levels"));
  const std::string ok_depth = std::string(256, '[') + std::string(256, ']');
  CHECK(parse_json(ok_depth));
}

TEST_CASE("util::JsonValue::dump round-trips what the writer writes") {
  kasava::util::JsonWriter writer;
  writer.begin_object();
  writer.key("q").value("caf\xC3\xA9 \"x\"\n\x01");
  writer.key("n").begin_array().value(1).value(-2.5).value(true).null().end_array();
  writer.key("o").begin_object().key("k").value(std::int64_t{1} << 40).end_object();
  writer.end_object();
  const JsonValue value = parse_ok(writer.str());
  CHECK(value["q"].as_string() == "caf\xC3\xA9 \"x\"\n\x01");
  CHECK(value.dump() == writer.str());
  CHECK(parse_ok(value.dump()) == value);
}

TEST_CASE("util::JsonValue builds values and compares them") {
  const JsonValue built(JsonValue::Object{
      {"a", JsonValue(JsonValue::Array{1, 2.5, "x", true, nullptr})},
      {"b", JsonValue(JsonValue::Object{})},
  });
  CHECK(built.dump() == R"({"a":[1,2.5,"x",true,null],"b":{}})");
  CHECK(built == parse_ok(R"({"a":[1,2.5,"x",true,null],"b":{}})"));
  CHECK(built != parse_ok(R"({"b":{},"a":[1,2.5,"x",true,null]})"));  // order matters
  CHECK(JsonValue(3.0).get_integer() == 3);
  CHECK(JsonValue(0.1).dump() == "0.1");
  CHECK(JsonValue(1e300).dump() == "1e+300");
  CHECK(parse_ok("0.1").as_number() == 0.1);
  CHECK(JsonValue(std::nan("")).dump() == "null");
}
