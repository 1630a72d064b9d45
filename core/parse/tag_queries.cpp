// Prepares the grammars' tag queries for the chunker (see tag_queries.hpp): which patterns
// of a tags.scm are kept, compiling once per process, what each capture means and where the
// patterns can start.
#include "core/parse/tag_queries.hpp"

#include <algorithm>
#include <cctype>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>

#include "core/parse/chunker.hpp"
#include "core/parse/grammar_fixes.hpp"
#include "core/parse/languages.hpp"
#include "core/util/strings.hpp"

namespace kasava::parse {
namespace {

// Our kind for a tag's `definition.<kind>`, or nullopt for kinds that are not chunked.
// Unknown kinds from future queries pass through unchanged.
std::optional<std::string_view> normalise_kind(std::string_view raw) {
  static constexpr std::pair<std::string_view, std::string_view> k_kinds[] = {
      {"function", "function"},   {"method", "method"},    {"class", "class"},
      {"interface", "interface"}, {"struct", "struct"},    {"enum", "enum"},
      {"module", "module"},       {"type", "type"},        {"macro", "macro"},
      {"impl", "impl"},           {"object", "class"},     {"trait", "interface"},
      {"protocol", "interface"},  {"namespace", "module"}, {"package", "module"},
      {"constructor", "method"},  {"union", "struct"},     {"record", "class"},
  };
  static constexpr std::string_view k_skipped[] = {
      "constant", "variable", "field", "property", "parameter", "label", "enum_variant",
  };
  for (const auto& [from, to] : k_kinds) {
    if (raw == from) return to;
  }
  for (std::string_view skipped : k_skipped) {
    if (raw == skipped) return std::nullopt;
  }
  return raw;
}

// Patterns that capture comments and decorator-like nodes, built from the node types the
// grammar has, so no query file needs to list them.
std::string extra_patterns(const TSLanguage* language) {
  std::vector<std::string_view> comments;
  std::vector<std::string_view> preambles;
  const std::uint32_t count = ts_language_symbol_count(language);
  for (std::uint32_t id = 0; id < count; ++id) {
    const auto symbol = static_cast<TSSymbol>(id);
    if (ts_language_symbol_type(language, symbol) != TSSymbolTypeRegular) continue;
    const std::string_view name = ts_language_symbol_name(language, symbol);
    if (name.empty() || name.front() == '_') continue;
    std::vector<std::string_view>* list = nullptr;
    if (name.find("comment") != std::string_view::npos &&
        name.find("marker") == std::string_view::npos) {
      list = &comments;
    } else if (name == "decorator" || name == "attribute_item") {
      list = &preambles;
    }
    if (list != nullptr && std::find(list->begin(), list->end(), name) == list->end()) {
      list->push_back(name);
    }
  }
  std::string out;
  const auto add = [&out](const std::vector<std::string_view>& names, std::string_view capture) {
    if (names.empty()) return;
    out += "\n[";
    for (std::string_view name : names) {
      out += " (";
      out += name;
      out += ')';
    }
    out += " ] @";
    out += capture;
    out += '\n';
  };
  add(comments, k_comment_capture);
  add(preambles, k_preamble_capture);
  return out;
}

const char* query_error_name(TSQueryError error) {
  switch (error) {
    case TSQueryErrorSyntax:
      return "syntax error";
    case TSQueryErrorNodeType:
      return "invalid node type";
    case TSQueryErrorField:
      return "invalid field";
    case TSQueryErrorCapture:
      return "invalid capture";
    case TSQueryErrorStructure:
      return "invalid structure";
    case TSQueryErrorLanguage:
      return "incompatible language";
    default:
      return "error";
  }
}

QueryPtr compile(const TSLanguage* language, const std::string& source, std::string* error) {
  std::uint32_t offset = 0;
  TSQueryError type = TSQueryErrorNone;
  QueryPtr query(ts_query_new(language, source.data(), static_cast<std::uint32_t>(source.size()),
                              &offset, &type));
  if (!query && error != nullptr) {
    std::string_view near(source);
    near = near.substr(std::min<std::size_t>(offset, near.size()), 40);
    near = near.substr(0, near.find('\n'));
    *error = "query " + std::string(query_error_name(type)) + " at offset " +
             std::to_string(offset) + " near '" + std::string(near) + "'";
  }
  return query;
}

// The index of the quote that closes the query string opened at `open`, past `\"` escapes
// (query.size() when it is not closed): the scanners below keep strings out of their counts.
std::size_t closing_quote(std::string_view query, std::size_t open) {
  std::size_t at = open + 1;
  while (at < query.size() && query[at] != '"') at += query[at] == '\\' ? 2 : 1;
  return std::min(at, query.size());
}

// Whether a pattern captures a definition of a kind that is chunked (normalise_kind).
bool captures_chunked_definition(std::string_view pattern) {
  constexpr std::string_view k_prefix = "@definition.";
  for (std::size_t at = pattern.find(k_prefix); at != std::string_view::npos;
       at = pattern.find(k_prefix, at + 1)) {
    const std::size_t begin = at + k_prefix.size();
    std::size_t end = begin;
    while (end < pattern.size() &&
           (std::isalnum(static_cast<unsigned char>(pattern[end])) || pattern[end] == '_')) {
      ++end;
    }
    if (normalise_kind(pattern.substr(begin, end - begin))) return true;
  }
  return false;
}

// The query with only its top-level patterns that capture a definition of a kind that is
// chunked: not tags.scm's call sites (`@reference.*`), nor its constants and variables (kinds
// normalise_kind drops), nor patterns of other captures only (`@ignore`). They would be
// disabled after compiling anyway (see load_language), but tree-sitter analyses every
// pattern when it compiles a query: Python's one call pattern was 19M of 49M instructions,
// its module-level constants another 15M, paid once per process and language. A pattern runs
// from a `(`, `[`, `"` or `_` at depth 0 to the next one (its captures and quantifiers follow
// it); strings and `;` comments are skipped when counting brackets.
std::string definition_patterns(std::string_view query) {
  std::string kept;
  std::size_t pattern_start = 0;
  const auto close_pattern = [&](std::size_t end) {
    const std::string_view pattern = query.substr(pattern_start, end - pattern_start);
    if (captures_chunked_definition(pattern)) {
      kept += pattern;
    }
    pattern_start = end;
  };
  int depth = 0;
  for (std::size_t i = 0; i < query.size(); ++i) {
    const char c = query[i];
    if (c == ';') {  // a comment, to the end of the line
      while (i + 1 < query.size() && query[i + 1] != '\n') ++i;
      continue;
    }
    if (depth == 0 && (c == '(' || c == '[' || c == '"' || c == '_') && i > 0 &&
        (c != '_' || query[i - 1] == ' ' || query[i - 1] == '\n' || query[i - 1] == '\t')) {
      close_pattern(i);
    }
    if (c == '"') {  // a string: brackets inside do not count
      i = closing_quote(query, i);
    } else if (c == '(' || c == '[') {
      ++depth;
    } else if ((c == ')' || c == ']') && depth > 0) {
      --depth;
    }
  }
  close_pattern(query.size());
  return kept;
}

// The query without tags.scm's doc-comment captures: a `(comment)* @doc .` before a
// definition, and the predicates that name @doc (`#strip!`, `#select-adjacent!`). The chunker
// finds doc comments itself (`@kasava.comment`) and disables @doc, but tree-sitter analyses
// the quantified comment sequence of every such pattern when it compiles the query: for
// JavaScript's and Ruby's shipped queries 54M and 48M instructions, once per process, paid
// by every refresh of an edited file. Strings and `;` comments are skipped as they are.
std::string without_doc_captures(std::string_view query) {
  const auto is_space = [](char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; };
  const auto skip_space = [&](std::size_t at) {
    while (at < query.size() && is_space(query[at])) ++at;
    return at;
  };
  const auto names_doc = [](std::string_view text) {
    for (std::size_t at = text.find("@doc"); at != std::string_view::npos;
         at = text.find("@doc", at + 1)) {
      const std::size_t end = at + 4;
      if (end == text.size() || !(std::isalnum(static_cast<unsigned char>(text[end])) ||
                                  text[end] == '_' || text[end] == '.' || text[end] == '-')) {
        return true;
      }
    }
    return false;
  };
  std::string kept;
  kept.reserve(query.size());
  std::size_t i = 0;
  while (i < query.size()) {
    const char c = query[i];
    if (c == ';') {  // a comment, to the end of the line
      const std::size_t end = std::min(query.find('\n', i), query.size());
      kept.append(query, i, end - i);
      i = end;
      continue;
    }
    if (c == '"') {  // a string, kept whole
      const std::size_t end = std::min(closing_quote(query, i) + 1, query.size());
      kept.append(query, i, end - i);
      i = end;
      continue;
    }
    if (query.substr(i, 9) == "(comment)") {  // `(comment)* @doc .`
      std::size_t at = skip_space(i + 9);
      if (at < query.size() && (query[at] == '*' || query[at] == '+' || query[at] == '?')) {
        at = skip_space(at + 1);
      }
      if (query.substr(at, 4) == "@doc" && names_doc(query.substr(at, 5))) {
        at = skip_space(at + 4);
        if (at < query.size() && query[at] == '.') {
          i = at + 1;
          continue;
        }
      }
    }
    if (query.substr(i, 2) == "(#") {  // a predicate: dropped when it names @doc
      std::size_t end = i + 1;
      int depth = 1;
      while (end < query.size() && depth > 0) {
        if (query[end] == '"') {
          end = closing_quote(query, end);
        } else if (query[end] == '(') {
          ++depth;
        } else if (query[end] == ')') {
          --depth;
        }
        ++end;
      }
      const std::string_view predicate = query.substr(i, end - i);
      if (!names_doc(predicate)) kept += predicate;
      i = end;
      continue;
    }
    kept += c;
    ++i;
  }
  return kept;
}

// A node name at which a pattern starts: `(name …)`, or `"text"` for an anonymous node.
struct StartName {
  std::string_view name;
  bool named = true;
};

// Reads the names of the nodes at which the pattern element at `at` of a query source can
// match first: the node of `(name …)`, each alternative's of `[…]`, the first element's of a
// group `((name …) (#predicate? …))`, an anonymous node `"text"`. False for anything that could
// start at any node or that this reading does not know: a wildcard `_`, a supertype's subtype
// `(expression/identifier)`, ERROR and MISSING nodes, an escaped string, a field.
bool read_start_names(std::string_view query, std::size_t at, std::vector<StartName>& names) {
  const auto skip_space = [&](std::size_t i) {
    while (i < query.size()) {
      if (query[i] == ';') {
        while (i < query.size() && query[i] != '\n') ++i;
      } else if (std::isspace(static_cast<unsigned char>(query[i]))) {
        ++i;
      } else {
        break;
      }
    }
    return i;
  };
  // The index just past the element at `i`: a string, or brackets with what they hold.
  const auto skip_element = [&](std::size_t i) {
    if (query[i] == '"') return closing_quote(query, i) + 1;
    int depth = 0;
    for (; i < query.size(); ++i) {
      const char c = query[i];
      if (c == '"') {
        i = closing_quote(query, i);
      } else if (c == ';') {
        while (i + 1 < query.size() && query[i + 1] != '\n') ++i;
      } else if (c == '(' || c == '[') {
        ++depth;
      } else if ((c == ')' || c == ']') && --depth == 0) {
        return i + 1;
      }
    }
    return query.size();
  };
  at = skip_space(at);
  if (at >= query.size()) return false;
  if (query[at] == '"') {
    const std::size_t end = closing_quote(query, at);
    const std::string_view text = query.substr(at + 1, end - at - 1);
    if (end >= query.size() || text.empty() || text.find('\\') != std::string_view::npos) {
      return false;
    }
    names.push_back({text, false});
    return true;
  }
  if (query[at] == '(') {
    at = skip_space(at + 1);
    if (at < query.size() && (query[at] == '(' || query[at] == '[' || query[at] == '"')) {
      return read_start_names(query, at, names);  // a group: its first element
    }
    std::size_t end = at;
    while (end < query.size() && (std::isalnum(static_cast<unsigned char>(query[end])) ||
                                  query[end] == '_' || query[end] == '.' || query[end] == '-')) {
      ++end;
    }
    const std::string_view name = query.substr(at, end - at);
    if (name.empty() || name == "_" || name == "ERROR" || name == "MISSING" ||
        (end < query.size() && query[end] == '/')) {
      return false;
    }
    names.push_back({name, true});
    return true;
  }
  if (query[at] == '[') {
    for (at = skip_space(at + 1); at < query.size() && query[at] != ']';) {
      if (query[at] != '(' && query[at] != '[' && query[at] != '"') return false;
      if (!read_start_names(query, at, names)) return false;
      at = skip_space(skip_element(at));
      // The alternative's captures and quantifier.
      while (at < query.size() &&
             (query[at] == '@' || query[at] == '*' || query[at] == '+' || query[at] == '?')) {
        ++at;
        while (at < query.size() && (std::isalnum(static_cast<unsigned char>(query[at])) ||
                                     query[at] == '_' || query[at] == '.' || query[at] == '-')) {
          ++at;
        }
        at = skip_space(at);
      }
    }
    return at < query.size();
  }
  return false;
}

// LanguageState::starts for a compiled query: by symbol, whether a node of it can start a
// match of one of the patterns not disabled (`enabled`), read from the query's `source`.
// Running the query at those nodes only, each time with no deeper start, finds the same
// matches as running it over the whole tree: a rooted pattern's match starts at a node of its
// first step's symbol. A pattern whose only capture is the comment or the preamble capture,
// on its outermost element (our extra patterns), marks its symbols k_starts_comment or
// k_starts_preamble: such a node is its own capture. Empty when some pattern is not rooted
// (a sequence of siblings), or its start cannot be read: the whole tree must be searched.
std::vector<std::uint8_t> start_symbols(const TSLanguage* language, const TSQuery* query,
                                        std::string_view source, const std::vector<bool>& enabled,
                                        const std::vector<CaptureInfo>& captures) {
  std::vector<std::uint8_t> starts(ts_language_symbol_count(language), 0);
  const std::uint32_t capture_count = ts_query_capture_count(query);
  for (std::uint32_t pattern = 0; pattern < enabled.size(); ++pattern) {
    if (!enabled[pattern]) continue;
    if (!ts_query_is_pattern_rooted(query, pattern) ||
        ts_query_is_pattern_non_local(query, pattern)) {
      return {};
    }
    const std::uint32_t begin = ts_query_start_byte_for_pattern(query, pattern);
    const std::uint32_t end = ts_query_end_byte_for_pattern(query, pattern);
    if (begin >= end || end > source.size()) return {};
    std::vector<StartName> names;
    if (!read_start_names(source.substr(0, end), begin, names) || names.empty()) return {};

    std::uint8_t flag = k_starts_pattern;
    Role only = Role::ignored;
    bool single = true;
    for (std::uint32_t id = 0; id < capture_count; ++id) {
      const Role role = captures[id].role;
      if (role == Role::ignored ||
          ts_query_capture_quantifier_for_id(query, pattern, id) == TSQuantifierZero) {
        continue;
      }
      single = single && (only == Role::ignored || only == role);
      only = role;
    }
    const std::string_view text = util::trim(source.substr(begin, end - begin));
    const auto captured_whole = [&](std::string_view capture) {
      return text.size() > capture.size() && text.ends_with(capture) &&
             text[text.size() - capture.size() - 1] == '@';
    };
    if (single && only == Role::comment && captured_whole(k_comment_capture)) {
      flag = k_starts_comment;
    } else if (single && only == Role::preamble && captured_whole(k_preamble_capture)) {
      flag = k_starts_preamble;
    }
    for (const StartName& name : names) {
      const TSSymbol symbol = ts_language_symbol_for_name(
          language, name.name.data(), static_cast<std::uint32_t>(name.name.size()), name.named);
      if (symbol == 0 || symbol >= starts.size() ||
          ts_language_symbol_type(language, symbol) == TSSymbolTypeSupertype) {
        return {};
      }
      starts[symbol] |= flag;
    }
  }
  return starts;
}

// Compiles the tag query of spec with the extra patterns (without them if they are the
// problem) and classifies its captures.
LanguageState load_language(const LanguageSpec& spec, std::string* error) {
  LanguageState state;
  state.language = fixed_grammar(spec.name, spec.grammar());
  if (spec.tag_query == nullptr || spec.tag_query[0] == '\0') return state;
  const std::string tags(spec.tag_query);
  const std::string extra = extra_patterns(state.language);
  std::string source = without_doc_captures(definition_patterns(tags)) + extra;
  state.query = compile(state.language, source, error);
  if (!state.query) state.query = compile(state.language, source = tags + extra, error);
  if (!state.query) state.query = compile(state.language, source = tags, error);
  if (!state.query) return state;
  if (error != nullptr) error->clear();

  TSQuery* query = state.query.get();
  const std::uint32_t capture_count = ts_query_capture_count(query);
  state.captures.resize(capture_count);
  std::vector<std::string_view> disabled;
  for (std::uint32_t id = 0; id < capture_count; ++id) {
    std::uint32_t length = 0;
    const char* text = ts_query_capture_name_for_id(query, id, &length);
    const std::string_view name(text, length);
    CaptureInfo& info = state.captures[id];
    if (name.starts_with("definition.")) {
      if (const auto kind = normalise_kind(name.substr(11))) {
        info = {Role::definition, *kind};
      }
    } else if (name == "name") {
      info.role = Role::name;
    } else if (name == "parent") {
      info.role = Role::parent;
    } else if (name == k_comment_capture) {
      info.role = Role::comment;
    } else if (name == k_preamble_capture) {
      info.role = Role::preamble;
    }
    if (info.role == Role::ignored) disabled.push_back(name);
  }
  // A pattern is worth running only if it yields a definition we keep, a comment or a
  // preamble; reference patterns in shipped tags.scm files would otherwise match every call.
  const std::uint32_t pattern_count = ts_query_pattern_count(query);
  std::vector<bool> enabled(pattern_count, false);
  for (std::uint32_t pattern = 0; pattern < pattern_count; ++pattern) {
    bool useful = false;
    for (std::uint32_t id = 0; id < capture_count && !useful; ++id) {
      const Role role = state.captures[id].role;
      useful = (role == Role::definition || role == Role::comment || role == Role::preamble) &&
               ts_query_capture_quantifier_for_id(query, pattern, id) != TSQuantifierZero;
    }
    enabled[pattern] = useful;
    if (!useful) ts_query_disable_pattern(query, pattern);
  }
  for (std::string_view name : disabled) {
    ts_query_disable_capture(query, name.data(), static_cast<std::uint32_t>(name.size()));
  }
  state.starts = start_symbols(state.language, query, source, enabled, state.captures);
  return state;
}
}  // namespace

std::string tag_query_error(std::string_view language) {
  const LanguageSpec* spec = find_language(language);
  if (spec == nullptr || spec->grammar == nullptr) return {};
  std::string error;
  (void)load_language(*spec, &error);
  return error;
}

bool tag_query_runs_at_starts(std::string_view language) {
  const LanguageSpec* spec = find_language(language);
  if (spec == nullptr || spec->grammar == nullptr) return false;
  const LanguageState state = load_language(*spec, nullptr);
  return state.query != nullptr && !state.starts.empty();
}
// The language's compiled query, made once per process and shared by every Chunker: compiling
// a tag query costs tree-sitter ~50M instructions (its analysis of the patterns), which each
// indexing thread used to pay again for each language. A TSQuery is not changed by running
// it (cursors take it const), so threads can share it; each Chunker keeps its own cursor.
const LanguageState& shared_language_state(const LanguageSpec& spec) {
  struct Entry {
    std::once_flag compiled;
    LanguageState state;
  };
  static std::mutex mutex;
  static std::unordered_map<const LanguageSpec*, Entry> entries;  // nodes never move
  Entry* entry = nullptr;
  {
    std::lock_guard lock(mutex);
    entry = &entries[&spec];
  }
  // Outside the lock: threads wanting other languages compile theirs meanwhile.
  std::call_once(entry->compiled, [&] { entry->state = load_language(spec, nullptr); });
  return entry->state;
}

}  // namespace kasava::parse
