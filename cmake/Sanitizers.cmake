# Sanitizer builds: -DKASAVA_SANITIZERS="address;undefined" in a separate build directory
# (CI: build-asan). Leak reports from libgit2's use of libpcre2 (an upstream leak) are
# suppressed by tests/sanitizers/lsan.supp through LSAN_OPTIONS (see .ci/run).
# The build type CI's sanitizer build uses (-DCMAKE_BUILD_TYPE=Sanitize): -O1 and line tables
# only. Under ASan + UBSan it compiles in about half the time of RelWithDebInfo's -O2 -g
# (tests/unit/store_store_test.cpp: 49 s against 107), and reports still name file and line.
set(CMAKE_C_FLAGS_SANITIZE "-O1 -g1 -DNDEBUG" CACHE STRING "C flags of the Sanitize build type")
set(CMAKE_CXX_FLAGS_SANITIZE "-O1 -g1 -DNDEBUG" CACHE STRING "C++ flags of the Sanitize build type")
foreach(sanitizer IN LISTS KASAVA_SANITIZERS)
  add_compile_options(-fsanitize=${sanitizer} -fno-omit-frame-pointer)
  add_link_options(-fsanitize=${sanitizer})
endforeach()
if(KASAVA_SANITIZERS)
  add_compile_options(-fno-sanitize-recover=all)
  # GCC 12 with ASan reports a false -Wmaybe-uninitialized inside libstdc++'s <regex> as used
  # by Catch2 (tests/support/catch_main.cpp); -Werror stays on for everything else.
  if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
    target_compile_options(kasava_warnings INTERFACE -Wno-maybe-uninitialized)
  endif()
endif()

# The pinned tree-sitter grammars' external scanners (Kotlin, Swift) do shifts and casts UBSan
# rejects; they are third-party code we do not fix, so grammars/ is built without UBSan (ASan
# stays on). Deferred to the end of the top-level CMakeLists, when grammars/ has its targets.
function(kasava_grammars_without_ubsan)
  get_property(targets DIRECTORY ${PROJECT_SOURCE_DIR}/grammars PROPERTY BUILDSYSTEM_TARGETS)
  foreach(target IN LISTS targets)
    get_target_property(type ${target} TYPE)
    if(NOT type STREQUAL "INTERFACE_LIBRARY")
      target_compile_options(${target} PRIVATE -fno-sanitize=undefined)
    endif()
  endforeach()
endfunction()
if("undefined" IN_LIST KASAVA_SANITIZERS)
  cmake_language(DEFER DIRECTORY ${PROJECT_SOURCE_DIR} CALL kasava_grammars_without_ubsan)
endif()
