// A query parsed once: the terms the full-text index is asked for, the words that name code,
// and the lower-cased parts of its words. Search, highlighting and every other reader of a
// query take this value instead of splitting the text again.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace kasava::search {

/// A word of a query that looks like a path (a slash, or a file extension): `ignore/types:`,
/// `src/flask/typing`, `_utils.py`; lower-cased, trimmed of punctuation around it.
struct PathWord {
  std::string text;
  bool has_slash = false;
};

struct Query {
  std::string text;                      ///< as the user wrote it (what the model embeds)
  std::vector<std::string> terms;        ///< util::query_terms: lower-cased, stop words dropped
  std::string match_expression;          ///< the terms quoted and OR-ed for FTS5; "" when none
  std::vector<std::string> identifiers;  ///< words that name code (see identifier_words)
  std::vector<std::string> parts;        ///< lower-cased parts of every word, stop words dropped, once each
  std::vector<PathWord> path_words;      ///< the words that look like paths (see path_words)
  /// The query is one identifier and nothing more (`parseConfig`, `Store::open`): names are
  /// a lexical matter, so the hybrid blend leans on words.
  bool one_identifier = false;

  /// True when the query has a term the full-text index can be asked for.
  bool has_terms() const { return !match_expression.empty(); }
};

/// Parses a query.
Query parse_query(std::string_view text);

/// The FTS5 MATCH expression for a query: its terms (util::query_terms), quoted, OR-ed.
/// "" when the query has no searchable term.
std::string match_expression(std::string_view query);

/// The words of a query that name code (parseConfig, save_file, Store::open, or the query's
/// only word): a chunk whose symbol is one of them is boosted in hybrid mode, so exact
/// identifier queries rank at least as well as in lexical mode.
std::vector<std::string> identifier_words(std::string_view query);

/// The words of a query that look like paths, in order.
std::vector<PathWord> path_words(std::string_view query);

/// The components of a possibly qualified name ("Store::open" → Store, open; "a.b", "a->b");
/// empty when the word is not a (qualified) identifier.
std::vector<std::string_view> name_components(std::string_view word);

} // namespace kasava::search
