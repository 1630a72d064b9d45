// Unit tests for core/util/hash.hpp: FNV-1a against the published 64-bit test values.
#include <catch2/catch.hpp>

#include "core/util/hash.hpp"

using namespace kasava::util;

TEST_CASE("util::fnv1a64 gives FNV-1a's published values and continues a hash") {
  CHECK(fnv1a64("") == 0xcbf29ce484222325ULL);
  CHECK(fnv1a64("a") == 0xaf63dc4c8601ec8cULL);
  CHECK(fnv1a64("foobar") == 0x85944171f73967e8ULL);
  CHECK(fnv1a64("bar", fnv1a64("foo")) == fnv1a64("foobar"));
  CHECK(fnv1a64(std::string_view("\xff\x00", 2)) != fnv1a64(std::string_view("\xff", 1)));
  static_assert(fnv1a64("a") == 0xaf63dc4c8601ec8cULL);
}
