# Use ccache for C and C++ when it is installed: a rebuild of the grammars then costs seconds.
find_program(KASAVA_CCACHE ccache)
if(KASAVA_CCACHE)
  set(CMAKE_C_COMPILER_LAUNCHER ${KASAVA_CCACHE})
  set(CMAKE_CXX_COMPILER_LAUNCHER ${KASAVA_CCACHE})
endif()
