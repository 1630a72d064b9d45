// The grammars' tag queries as the chunker runs them (internal to core/parse): each shipped
// or own tags.scm is cut down to the patterns that capture a definition of a chunked kind,
// loses its `(comment)* @doc .` sequences, gains the comment and preamble patterns, and is
// compiled once per process; its captures are classified and the node types at which a
// pattern can start are read, so the chunker runs the query only there.
#pragma once

#include <tree_sitter/api.h>

#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

#include "core/parse/language_table.hpp"

namespace kasava::parse {

inline constexpr std::string_view k_comment_capture = "kasava.comment";
inline constexpr std::string_view k_preamble_capture = "kasava.preamble";

struct QueryDeleter {
  void operator()(TSQuery* query) const { ts_query_delete(query); }
};
using QueryPtr = std::unique_ptr<TSQuery, QueryDeleter>;

enum class Role : std::uint8_t { ignored, definition, name, parent, comment, preamble };

struct CaptureInfo {
  Role role = Role::ignored;
  std::string_view kind;  // for definitions; points into static storage or the query
};

// What a node of one symbol starts (LanguageState::starts): a match of a query pattern, or
// only a capture of the comment or preamble pattern, which needs no query to be read.
enum Start : std::uint8_t { k_starts_pattern = 1, k_starts_comment = 2, k_starts_preamble = 4 };

// A language's compiled query and what each of its captures means.
struct LanguageState {
  const TSLanguage* language = nullptr;
  QueryPtr query;  // null when the language has no query or it does not compile
  std::vector<CaptureInfo> captures;
  // By symbol id, what a node of that symbol starts (Start flags), so the chunker runs the
  // query only at such nodes (see TreeChunker::collect). Empty when a pattern could start at
  // any node: then the query runs over the whole tree.
  std::vector<std::uint8_t> starts;
};

/// The language's compiled query with its captures classified, made on first use and shared
/// by every Chunker of the process.
const LanguageState& shared_language_state(const LanguageSpec& spec);

}  // namespace kasava::parse
