// A Catch2 listener, included by each test binary's main, that stops a run when any test's name
// holds a ';'. CMake's catch_discover_tests keeps names in a CMake list, which splits them at
// ';': ctest then runs the pieces as filters that match no test, and such a test "passes"
// without running.
#pragma once

#include <cstdio>
#include <cstdlib>

namespace kasava::test_support {

struct TestNamesForCtest : Catch::TestEventListenerBase {
  using TestEventListenerBase::TestEventListenerBase;
  void testRunStarting(const Catch::TestRunInfo& info) override {
    TestEventListenerBase::testRunStarting(info);
    bool bad = false;
    for (const Catch::TestCase& test : Catch::getAllTestCasesSorted(*m_config)) {
      if (test.name.find(';') != std::string::npos) {
        std::fprintf(stderr, "test name holds ';' (ctest would not run it): %s\n", test.name.c_str());
        bad = true;
      }
    }
    if (bad) std::exit(EXIT_FAILURE);
  }
};
CATCH_REGISTER_LISTENER(TestNamesForCtest)

} // namespace kasava::test_support
