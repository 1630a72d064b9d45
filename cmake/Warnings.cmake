# Our warning flags, as an INTERFACE target linked by kasava's own code only (never the grammars).
# -Werror only in developer mode (CI), never for users building a release.
add_library(kasava_warnings INTERFACE)
target_compile_options(kasava_warnings INTERFACE
  -Wall -Wextra -Wpedantic -Wshadow -Wnon-virtual-dtor -Wcast-align -Wunused
  -Woverloaded-virtual -Wimplicit-fallthrough)
if(KASAVA_DEVELOPER_MODE)
  target_compile_options(kasava_warnings INTERFACE -Werror)
endif()
