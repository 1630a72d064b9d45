# libFuzzer builds: -DKASAVA_FUZZ=ON with clang (CC=clang CXX=clang++), in their own build
# directory (CI: build-fuzz), usually with -DKASAVA_SANITIZERS="address;undefined". All code
# is instrumented for coverage (fuzzer-no-link); only the targets in tests/fuzz/ link
# libFuzzer's main. The normal build (g++) never sets this.
option(KASAVA_FUZZ "Build the libFuzzer targets in tests/fuzz (needs clang)" OFF)
if(KASAVA_FUZZ)
  if(NOT CMAKE_CXX_COMPILER_ID MATCHES "Clang")
    message(FATAL_ERROR "KASAVA_FUZZ needs clang: configure with CC=clang CXX=clang++")
  endif()
  add_compile_options(-fsanitize=fuzzer-no-link -g)
endif()
