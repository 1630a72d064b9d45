// Unit tests for core/util/strings.cpp.
#include <catch2/catch.hpp>

#include "core/util/strings.hpp"

using namespace kasava::util;

TEST_CASE("util::count_lines and line_starts") {
  CHECK(count_lines("") == 0);
  CHECK(count_lines("a") == 1);
  CHECK(count_lines("a\n") == 1);
  CHECK(count_lines("a\nb") == 2);
  CHECK(line_starts("a\nbc\n") == std::vector<std::size_t>{0, 2});
}

TEST_CASE("util::is_valid_utf8") {
  CHECK(is_valid_utf8("plain"));
  CHECK(is_valid_utf8("\xE2\x82\xAC"));
  CHECK_FALSE(is_valid_utf8("\xC0\xAF"));      // overlong
  CHECK_FALSE(is_valid_utf8("\xED\xA0\x80"));  // surrogate
  CHECK_FALSE(is_valid_utf8("\xE2\x82"));      // truncated
  CHECK(to_valid_utf8("a\xFF" "b") == "a\xEF\xBF\xBD" "b");
}

TEST_CASE("util::edit_distance") {
  CHECK(edit_distance("serach", "search") == 2);
  CHECK(edit_distance("ask", "ask") == 0);
  CHECK(edit_distance("", "abc") == 3);
  CHECK(edit_distance("indx", "index") == 1);
}

TEST_CASE("util::trim split format_bytes") {
  CHECK(trim("  x y \n") == "x y");
  CHECK(split("a,,b", ',') == std::vector<std::string>{"a", "", "b"});
  CHECK(format_bytes(512) == "512 B");
  CHECK(format_bytes(1536) == "1.5 KiB");
  CHECK(format_bytes(3 * 1024 * 1024) == "3.0 MiB");
}

TEST_CASE("util::escape_controls") {
  CHECK(escape_controls("plain text\twith a tab, ünïcode") == "plain text\twith a tab, ünïcode");
  // ESC, BEL, CR, DEL and NUL are shown, not obeyed; '\n' too unless kept.
  CHECK(escape_controls("a\x1b[31mred\x1b]0;title\x07") == "a\\x1b[31mred\\x1b]0;title\\x07");
  CHECK(escape_controls("over\rwrite\x7f") == "over\\rwrite\\x7f");
  CHECK(escape_controls(std::string("nul\0here", 8)) == "nul\\x00here");
  CHECK(escape_controls("two\nlines") == "two\\nlines");
  CHECK(escape_controls("two\nlines", LineBreaks::keep) == "two\nlines");
  // C1 as UTF-8 (U+009B, CSI) and as a lone byte; other invalid bytes are kept.
  CHECK(escape_controls("x\xc2\x9b" "2Jy") == "x\\u009b2Jy");
  CHECK(escape_controls("x\x9b" "2J\xff") == "x\\x9b2J\xff");
  CHECK(escape_controls("\xc2\xa0") == "\xc2\xa0");  // U+00A0 is not a control
}

TEST_CASE("util::quoted puts single quotes around a value") {
  CHECK(quoted("a b") == "'a b'");
  CHECK(quoted("") == "''");
}
