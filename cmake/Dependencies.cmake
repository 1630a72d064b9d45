# Third-party libraries from Debian's packages (see scripts/setup). Each is linked by exactly
# one core/ module; see ARCHITECTURE.md.
find_package(PkgConfig REQUIRED)
find_package(Threads REQUIRED)
find_package(SQLite3 REQUIRED)
find_package(CURL REQUIRED)
pkg_check_modules(LIBGIT2 REQUIRED IMPORTED_TARGET libgit2)
find_package(CLI11 CONFIG REQUIRED)
if(KASAVA_BUILD_TESTS)
  find_package(Catch2 REQUIRED)
endif()
