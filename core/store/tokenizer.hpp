// The FTS5 tokenizer "kasava": feeds util::for_each_code_token's code-aware tokens to SQLite's
// full-text index, so documents and queries are split the same way (camelCase, snake_case…).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

struct sqlite3;

namespace kasava::store {

/// The name the tokenizer is registered under; tables use it as tokenize='porter kasava'.
inline constexpr const char* k_tokenizer_name = "kasava";

/// FTS5's per-token callback (the xToken argument of fts5_tokenizer::xTokenize).
using TokenCallback = int (*)(void* context, int flags, const char* token, int size, int begin,
                              int end);

/// Tokens emitted by the tokenizer of one connection, all tables and statements together.
struct TokenCount {
  std::uint64_t tokens = 0;
};

/// While `active`, every term FTS5 makes of a text on the connection is shown to `term`: the
/// stem the index keeps (the tables' tokenizer is 'porter kasava', so these are Porter stems
/// of this tokenizer's tokens). The writer counts terms' documents with it (term_docs.hpp).
/// `term` must not throw.
struct TermTap {
  void (*term)(void* context, const char* text, int size) = nullptr;
  void* context = nullptr;
  bool active = false;
};

/// Registers the tokenizer on one connection; FTS5 tokenizers are per connection, so every
/// connection that touches chunks_fts needs it. With `count`, which must outlive the
/// connection, every token it emits is counted there. With `tap`, which must outlive it too,
/// the connection's "porter" becomes SQLite's own behind a wrapper that shows the terms it
/// makes to the tap (FTS5 finds a tokenizer by name, the latest registered first). Call once
/// per connection, before it touches a table. Returns "" on success, else the reason.
std::string register_tokenizer(sqlite3* db, TokenCount* count = nullptr, TermTap* tap = nullptr);

/// The terms FTS5 makes of each text as a query with the tables' tokenizer ('porter kasava'),
/// in order; nullopt when FTS5 fails. The connection must have the tokenizer registered.
std::optional<std::vector<std::vector<std::string>>> query_terms_of(
    sqlite3* db, const std::vector<std::string>& texts);

/// The tokenizer's xTokenize: reports every token of text[0, size) with its byte range, in
/// the same way for documents and queries (a query term must come out as the document's
/// tokens did). Stops at, and returns, the first non-zero code the callback returns.
int tokenize(void* context, int flags, const char* text, int size, TokenCallback callback);

} // namespace kasava::store
