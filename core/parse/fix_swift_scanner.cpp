// Fix for the external scanner of tree-sitter-swift 0.7.1: its create() is
// `calloc(0, sizeof state)` (a zero-byte allocation it then writes to) and an empty
// deserialize, tree-sitter's "reset", leaves a stale raw-string hash count behind.
//
// The copy of the language made here allocates the state properly, zeroed, and turns an
// empty deserialize into "deserialize the initial state" (four zero bytes).
#include <cstdlib>

// The TSLanguage layout of the ABI this grammar was generated with (only here: struct
// copies must match the grammar object byte for byte).
#include "grammars/node_modules/tree-sitter-swift/src/tree_sitter/parser.h"

#include "core/parse/grammar_fixes.hpp"

namespace kasava::parse {
namespace {

constexpr std::size_t k_state_bytes = 64;  // the scanner's state is 4 bytes; leave room

void (*g_original_deserialize)(void*, const char*, unsigned) = nullptr;

void* create_zeroed() {
  return std::calloc(1, k_state_bytes);
}

void deserialize_or_reset(void* payload, const char* buffer, unsigned length) {
  static const char k_initial_state[4] = {0, 0, 0, 0};
  if (length == 0) {
    g_original_deserialize(payload, k_initial_state, sizeof k_initial_state);
  } else {
    g_original_deserialize(payload, buffer, length);
  }
}

}  // namespace

const TSLanguage* fixed_swift_grammar(const TSLanguage* original) {
  static const TSLanguage fixed = [original] {
    TSLanguage copy = *original;
    g_original_deserialize = copy.external_scanner.deserialize;
    copy.external_scanner.create = &create_zeroed;  // destroy is free(): fine for calloc
    copy.external_scanner.deserialize = &deserialize_or_reset;
    return copy;
  }();
  return &fixed;
}

}  // namespace kasava::parse
