// The model compiled into the binary: models/kasava-code.kmodel, included byte for byte by
// the assembler's .incbin (path from CMake, which recompiles this file when the model changes).
#include <mutex>

#include "core/embed/model.hpp"

#ifndef KASAVA_BUILTIN_MODEL_PATH
#error "KASAVA_BUILTIN_MODEL_PATH must name the model file (set by core/embed/CMakeLists.txt)"
#endif

// The hash CMake computed of the model file: a new model changes this translation unit, so
// compiler caches cannot hand back an object with the old model inside.
#ifndef KASAVA_BUILTIN_MODEL_HASH
#define KASAVA_BUILTIN_MODEL_HASH "unknown"
#endif

__asm__(".section .rodata\n"
        ".balign 16\n"
        ".global kasava_builtin_model_begin\n"
        "kasava_builtin_model_begin:\n"
        ".incbin \"" KASAVA_BUILTIN_MODEL_PATH "\"\n"
        ".global kasava_builtin_model_end\n"
        "kasava_builtin_model_end:\n"
        ".byte 0\n"
        ".previous\n");

extern "C" const char kasava_builtin_model_begin[];
extern "C" const char kasava_builtin_model_end[];

namespace kasava::embed {

std::shared_ptr<const Model> builtin_model() {
  static const std::shared_ptr<const Model> model = [] {
    const std::string_view bytes(kasava_builtin_model_begin,
                                 static_cast<std::size_t>(kasava_builtin_model_end -
                                                          kasava_builtin_model_begin));
    // Built from a committed, checked file: failing here is a broken build, not a user error.
    auto loaded = Model::from_bytes(bytes, "built-in model (" KASAVA_BUILTIN_MODEL_HASH ")",
                                    false);
    if (!loaded) throw util::Failure(loaded.error());
    return std::move(loaded).value();
  }();
  return model;
}

} // namespace kasava::embed
