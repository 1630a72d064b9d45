// Splits a source file into chunks: definitions found by each grammar's tag query, line
// windows for the code between them and for files without a grammar. The only module that
// includes <tree_sitter/api.h>.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/types/chunk.hpp"

namespace kasava::parse {

/// The language of a path by its extension or file name ("python", "markdown"), or "" when
/// unknown (such text files are still chunked by line windows).
std::string detect_language(std::string_view path);

/// Names of all known languages, sorted.
std::vector<std::string> known_languages();

/// True when the language has a tree-sitter grammar compiled in.
bool has_grammar(std::string_view language);

/// Limits of chunking; defaults suit embedding models with ~512-token inputs.
struct ChunkerOptions {
  int window_lines = 40;      ///< lines per window for gaps and grammar-less files
  int max_chunk_lines = 150;  ///< definitions longer than this are split into parts
  int timeout_ms = 2000;      ///< budget (the thread's CPU time) for parsing and querying
                              ///< one file; past it the file falls back to line windows
  bool whole_tree_query = false;  ///< run the tag query over the whole tree, not only at the
                                  ///< nodes where its patterns start: slower, same chunks
                                  ///< (for tests that compare the two)
};

/// The error compiling the tag query of `language` with the compiled-in grammar ("query error
/// at offset 120: invalid node type 'foo'"), or "" when it compiles or there is no query.
/// For tests and diagnostics; Chunker compiles each query once per process on first use.
std::string tag_query_error(std::string_view language);

/// True when the chunker runs the tag query of `language` only at the nodes where one of its
/// patterns can start (see TreeChunker::collect); false when it must search the whole tree,
/// or the language has no grammar or query. For tests and diagnostics.
bool tag_query_runs_at_starts(std::string_view language);

/// Reusable per thread: holds a parser and a query cursor (not thread-safe). The compiled
/// tag queries are shared by all Chunkers of the process.
class Chunker {
public:
  explicit Chunker(ChunkerOptions options = {});
  ~Chunker();
  Chunker(const Chunker&) = delete;
  Chunker& operator=(const Chunker&) = delete;

  /// Chunks `content` of a file in `language` (as detect_language returned; "" = plain text).
  /// Never fails: a parse error or timeout falls back to line windows. Chunks are sorted by
  /// start line, cover every non-blank line at least once, and carry valid 1-based ranges.
  std::vector<types::Chunk> chunk(std::string_view path, std::string_view language,
                                  std::string_view content);

  /// Only parses `content` with the language's grammar and drops the tree: no query, no
  /// chunks. For the parse-limit benchmark (bench/parse_limit.cpp). False when the language
  /// has no grammar or the parse failed or timed out.
  bool parse_only(std::string_view language, std::string_view content);

private:
  struct Impl;
  std::unique_ptr<Impl> m_impl;
};

}  // namespace kasava::parse
