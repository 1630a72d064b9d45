# Sanitizer builds: -DKASAVA_SANITIZERS="address;undefined" in a separate build directory.
foreach(sanitizer IN LISTS KASAVA_SANITIZERS)
  add_compile_options(-fsanitize=${sanitizer} -fno-omit-frame-pointer)
  add_link_options(-fsanitize=${sanitizer})
endforeach()
if(KASAVA_SANITIZERS)
  add_compile_options(-fno-sanitize-recover=all)
endif()
