// Tests of core/parse/doc_text.cpp: comment markers, docstrings and signatures.
#include <catch2/catch.hpp>

#include "core/parse/doc_text.hpp"

using kasava::parse::collapse_whitespace;
using kasava::parse::strip_comment_markers;
using kasava::parse::strip_docstring;

TEST_CASE("parse::strip_comment_markers") {
  CHECK(strip_comment_markers("// Adds two numbers.") == "Adds two numbers.");
  CHECK(strip_comment_markers("/// Doc line") == "Doc line");
  CHECK(strip_comment_markers("//! Inner doc") == "Inner doc");
  CHECK(strip_comment_markers("# Python or shell") == "Python or shell");
  CHECK(strip_comment_markers("-- Lua") == "Lua");
  CHECK(strip_comment_markers("--- LuaDoc") == "LuaDoc");
  CHECK(strip_comment_markers("/* one line */") == "one line");
  CHECK(strip_comment_markers("/**\n * Adds.\n *\n * @param a first\n */") ==
        "Adds.\n\n@param a first");
  CHECK(strip_comment_markers("/** Finds a user. */") == "Finds a user.");
  CHECK(strip_comment_markers("--[[ long\n comment ]]") == "long\ncomment");
  CHECK(strip_comment_markers("--[==[ level ]==]") == "level");
  // Only Lua long comments lose a closing `]]`.
  CHECK(strip_comment_markers("# see a[b[0]]") == "see a[b[0]]");
  CHECK(strip_comment_markers("// with CRLF\r") == "with CRLF");
  CHECK(strip_comment_markers("//") == "");
  CHECK(strip_comment_markers("") == "");
}

TEST_CASE("parse::strip_docstring") {
  CHECK(strip_docstring(R"("""Return a greeting.""")") == "Return a greeting.");
  CHECK(strip_docstring("'''Single quotes.'''") == "Single quotes.");
  CHECK(strip_docstring(R"(r"raw")") == "raw");
  CHECK(
      strip_docstring("\"\"\"Greets people.\n\n    Keeps a count:\n        indented\n    \"\"\"") ==
      "Greets people.\n\nKeeps a count:\n    indented");
  CHECK(strip_docstring("\"\"\"\"\"\"") == "");
}

TEST_CASE("parse::collapse_whitespace") {
  CHECK(collapse_whitespace("  def  f(a,\n        b):\n", 200) == "def f(a, b):");
  CHECK(collapse_whitespace("\t\r\n", 200) == "");
  CHECK(collapse_whitespace("abcdef", 3) == "abc");
  // Never cuts a UTF-8 sequence in half: "é" is two bytes.
  CHECK(collapse_whitespace("ab\xC3\xA9", 3) == "ab");
  CHECK(collapse_whitespace("ab\xC3\xA9", 4) == "ab\xC3\xA9");
  CHECK(collapse_whitespace("a\xE2\x82\xAC", 3) == "a");
}
