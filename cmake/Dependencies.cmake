# Third-party libraries from Debian's packages (see scripts/setup). Each is linked by exactly
# one core/ module; see ARCHITECTURE.md.
find_package(PkgConfig REQUIRED)
find_package(Threads REQUIRED)
find_package(CURL REQUIRED)
pkg_check_modules(LIBGIT2 REQUIRED libgit2)
# libpq (Debian libpq-dev) for the shared PostgreSQL store, core/pgstore only.
pkg_check_modules(LIBPQ REQUIRED IMPORTED_TARGET libpq)

# libgit2 and SQLite are linked in from Debian's static archives. kasava starts before every
# `ask` and every refresh, and with libgit2's shared library the dynamic loader made ~6,900
# symbol bindings per start, ~5,500 of them into libgit2's dependency tree (libcrypto through
# libssh2, mbedTLS, PCRE2, zlib): `kasava --version` p50 13.6 -> 9.6 ms (100 alternating runs).
# The archives come with the -dev packages scripts/setup installs (libgit2-dev depends on the
# others'). pkg-config's static list for libgit2 misses libssh2's OpenSSL and GSSAPI, so the
# list is spelled out here, in link order. GSSAPI (Kerberos) has no static archive and stays
# a shared library.
set(KASAVA_STATIC_LIBGIT2_PARTS git2 mbedtls mbedx509 mbedcrypto http_parser ssh2 ssl crypto
    pcre2-8 z)
set(KASAVA_STATIC_LIBGIT2 "")
foreach(part IN LISTS KASAVA_STATIC_LIBGIT2_PARTS)
  find_library(KASAVA_STATIC_${part} NAMES lib${part}.a REQUIRED)
  list(APPEND KASAVA_STATIC_LIBGIT2 ${KASAVA_STATIC_${part}})
endforeach()
find_library(KASAVA_GSSAPI NAMES gssapi_krb5 libgssapi_krb5.so.2 REQUIRED)
add_library(kasava_libgit2 INTERFACE)
target_include_directories(kasava_libgit2 SYSTEM INTERFACE ${LIBGIT2_INCLUDE_DIRS})
target_link_libraries(kasava_libgit2 INTERFACE ${KASAVA_STATIC_LIBGIT2} ${KASAVA_GSSAPI}
                      Threads::Threads ${CMAKE_DL_LIBS} rt)
# See core/repo/git_handles.cpp, "Deferred CA certificates".
target_link_options(kasava_libgit2 INTERFACE -Wl,--wrap=mbedtls_x509_crt_parse_file)

# OpenSSL's libcrypto for SHA-256 (core/store/vector_cache.cpp): the same static archive as
# libgit2's list above, so it costs no extra library at run time.
find_path(KASAVA_OPENSSL_INCLUDE openssl/evp.h REQUIRED)
add_library(kasava_crypto INTERFACE)
target_include_directories(kasava_crypto SYSTEM INTERFACE ${KASAVA_OPENSSL_INCLUDE})
target_link_libraries(kasava_crypto INTERFACE ${KASAVA_STATIC_crypto} Threads::Threads
                      ${CMAKE_DL_LIBS})

# zstd, from Debian's static archive: chunk text in the index (core/util/compression.cpp);
# bench/codec_compare measures its levels.
find_path(KASAVA_ZSTD_INCLUDE zstd.h REQUIRED)
find_library(KASAVA_STATIC_ZSTD NAMES libzstd.a REQUIRED)
add_library(kasava_zstd INTERFACE)
target_include_directories(kasava_zstd SYSTEM INTERFACE ${KASAVA_ZSTD_INCLUDE})
target_link_libraries(kasava_zstd INTERFACE ${KASAVA_STATIC_ZSTD})

# libstemmer (Snowball), from Debian's static archive: Porter stems for the shared store's terms
# (core/util/stem.cpp only).
find_path(KASAVA_STEMMER_INCLUDE libstemmer.h REQUIRED)
find_library(KASAVA_STATIC_STEMMER NAMES libstemmer.a REQUIRED)
add_library(kasava_stemmer INTERFACE)
target_include_directories(kasava_stemmer SYSTEM INTERFACE ${KASAVA_STEMMER_INCLUDE})
target_link_libraries(kasava_stemmer INTERFACE ${KASAVA_STATIC_STEMMER})

# nlohmann-json (header only): reads and escapes JSON in core/util/json*.cpp only.
find_package(nlohmann_json 3 REQUIRED)

find_path(KASAVA_SQLITE_INCLUDE sqlite3.h REQUIRED)
find_library(KASAVA_STATIC_SQLITE NAMES libsqlite3.a REQUIRED)
add_library(kasava_sqlite INTERFACE)
target_include_directories(kasava_sqlite SYSTEM INTERFACE ${KASAVA_SQLITE_INCLUDE})
target_link_libraries(kasava_sqlite INTERFACE ${KASAVA_STATIC_SQLITE} Threads::Threads
                      ${CMAKE_DL_LIBS} m)
# libmicrohttpd: `kasava serve`'s HTTP server (core/httpd/server.cpp, which loads the shared
# library at run time; only the header is needed here).
find_path(KASAVA_MICROHTTPD_INCLUDE microhttpd.h REQUIRED)
find_package(CLI11 CONFIG REQUIRED)
if(KASAVA_BUILD_TESTS)
  find_package(Catch2 REQUIRED)
endif()
