// The Catch2 main of every test binary (unit and end-to-end), compiled once for all of them:
// Catch2 2's implementation costs ~35 s of compiler time per copy.
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>

#include "tests/support/test_names.hpp"
