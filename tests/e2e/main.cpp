// The Catch2 main of the end-to-end test binary.
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>

#include "tests/support/test_names.hpp"
