// Splits a source file into chunks: definitions found by the grammar's tag query, line windows
// for the code between them and for files without a grammar. The only user of tree-sitter.
//
// How a file becomes chunks
// =========================
// 1. Parse. One TSParser per Chunker, re-targeted per language (a grammar with a broken
//    external scanner is swapped for a fixed copy, see grammar_fixes.hpp). A progress
//    callback enforces the time budget (options.timeout_ms); on timeout, parse failure, NUL
//    bytes or a query that does not compile, the whole file falls back to line windows (step
//    6), so chunk() never fails. Tree-sitter reads invalid UTF-8 as U+FFFD: any bytes are safe.
//
// 2. Query. Each language's tag query (tags.scm conventions) is compiled once per process,
//    lazily, and shared by the Chunkers of all threads (tag_queries.cpp), with
//    two patterns appended that capture every comment node (`@kasava.comment`) and every
//    decorator-like node that stands before a definition (`@kasava.preamble`: `@decorator`,
//    `#[attribute]`). Captures named `definition.<kind>` give the definition node and its
//    kind, `@name` its name, and our own `@parent` (in grammars/queries/*.scm) the name of the
//    owner when syntax says it and nesting does not (a Go receiver, `Foo::bar` in C++, Lua's
//    `M.f`). Everything else (`@reference.*`, `@doc`, …) is disabled in the query, and
//    patterns left without a definition are disabled too, so the cursor does no work for
//    them. Predicates (#strip!, #select-adjacent!, #not-eq? …) are ignored.
//    Kinds are normalised to a short set (see normalise_kind: object → class, trait and
//    protocol → interface, constructor → method…); constants, variables, fields and
//    properties are dropped: they would make tiny chunks, and they stay inside windows.
//
// 3. Nesting. Definitions sorted by (start, -end) form a tree with one stack pass. A node
//    captured by two patterns keeps the first pattern's kind; a definition inside another
//    with the same name node is the same definition seen through a wrapper (C++
//    template_declaration) and is dropped, as is one of the same kind that is the `type` of
//    the definition around it (C's `typedef enum X {…} X;` is one enum, named by the typedef,
//    not a head chunk and a nested chunk of the same lines). The parent of a definition is its explicit
//    @parent, else the qualifier of a `A::b` name, else the nearest enclosing definition. A
//    function directly inside a class-like definition becomes a method; a method with no
//    owner at all (Ruby's top-level `def`) a function. A method without a body inside a
//    class-like definition is a declaration (interface members, abstract methods) and stays
//    in its class's lines, as does a namespace without a body (PHP's `namespace X;`).
//    Definitions nested deeper than k_max_nesting are ignored (their lines stay in their
//    ancestor's chunks).
//
// 4. Head, doc, signature. Comments and decorators directly above a definition (each on its
//    own lines, no blank line between, not inside an earlier definition) extend the chunk
//    upwards; the comments, markers stripped, are its doc. Row arithmetic on the captured
//    comment list makes this cheap: no tree walking per definition. A Python-style docstring
//    (the body's first statement is a string) is added to the doc. The signature is the text
//    from the start of the definition's first line up to its body (field `body`, or a child
//    whose type says body/block/declaration_list), whitespace-collapsed, at most 200 bytes.
//
// 5. Coverage. Every non-blank line ends up in at least one chunk:
//    - A function, method or macro is one chunk over its whole range (split into balanced
//      parts of at most max_chunk_lines). Definitions nested in it are also emitted, but only
//      one level deep, which bounds duplication of text at about twice the file.
//    - A class-like definition (class, struct, interface, enum, module, impl…) that contains
//      definitions is NOT emitted whole, so methods are not indexed twice: its chunk is its
//      head (doc, signature, fields) up to the first nested definition; lines of its own
//      between and after the nested ones (fields, nested statements) become further chunks
//      with the class's kind, name and signature. A class without nested definitions is one
//      chunk, like a function.
//    - Lines outside all definitions (imports, top-level statements) become "block" chunks of
//      at most window_lines lines; blank lines at window edges are trimmed and blank windows
//      skipped. A gap of only closing lines (`}`, `});`, `end`) extends the chunk before it
//      instead of becoming a chunk of its own.
//    A final guard falls back to line windows if pathological input (many definitions on one
//    huge line) would make the chunks' text several times larger than the file.
//
// 6. Line windows. Files without a grammar are cut into windows of window_lines lines;
//    markdown is first cut at its headings, and the heading names the window (`symbol`).
#include "core/parse/chunker.hpp"

#include <tree_sitter/api.h>

#include <algorithm>
#include <chrono>
#include <ctime>
#include <cstdint>
#include <cstring>
#include <limits>
#include <optional>
#include <unordered_map>
#include <utility>

#include "core/parse/doc_text.hpp"
#include "core/parse/languages.hpp"
#include "core/parse/source_lines.hpp"
#include "core/parse/tag_queries.hpp"
#include "core/util/strings.hpp"

namespace kasava::parse {
namespace {

constexpr int k_max_nesting = 32;         // deeper definitions are left inside their ancestors
constexpr int k_max_whole_ancestors = 1;  // nested definitions re-emitted inside one function
constexpr std::size_t k_max_signature_bytes = 200;
constexpr std::size_t k_max_symbol_bytes = 200;
constexpr std::size_t k_max_doc_bytes = 2000;
constexpr std::size_t k_max_text_factor = 4;  // chunks' text at most this many times the file

struct ParserDeleter {
  void operator()(TSParser* parser) const { ts_parser_delete(parser); }
};
struct TreeDeleter {
  void operator()(TSTree* tree) const { ts_tree_delete(tree); }
};
struct QueryCursorDeleter {
  void operator()(TSQueryCursor* cursor) const { ts_query_cursor_delete(cursor); }
};
using ParserPtr = std::unique_ptr<TSParser, ParserDeleter>;
using TreePtr = std::unique_ptr<TSTree, TreeDeleter>;
using QueryCursorPtr = std::unique_ptr<TSQueryCursor, QueryCursorDeleter>;

// TSTreeCursor is a value type with heap state: RAII around ts_tree_cursor_delete.
class TreeCursor {
public:
  explicit TreeCursor(TSNode node) : m_cursor(ts_tree_cursor_new(node)) {}
  ~TreeCursor() { ts_tree_cursor_delete(&m_cursor); }
  TreeCursor(const TreeCursor&) = delete;
  TreeCursor& operator=(const TreeCursor&) = delete;
  TSTreeCursor* get() { return &m_cursor; }

private:
  TSTreeCursor m_cursor;
};

// Functions, methods and macros are chunked whole; everything else is class-like (step 5).
bool is_whole_kind(std::string_view kind) {
  return kind == "function" || kind == "method" || kind == "macro";
}

// Whether a function directly inside a definition of this kind is a method.
bool has_methods(std::string_view kind) {
  return kind == "class" || kind == "interface" || kind == "struct" || kind == "enum" ||
         kind == "impl";
}

// The time budget shared by the parse and query progress callbacks. It is CPU time of this
// thread, not wall time: on a loaded machine a thread gets a share of a core, and a wall-clock
// budget made the same file chunks or line windows depending on the load (the 300 KB files of
// a unit test fell back to windows at a load of 10 on 2 cores). The wall clock is read
// at every check (cheap); the thread's CPU clock (a system call) only when the wall time
// runs out, to see how much of the budget is really used.
struct Deadline {
  std::chrono::nanoseconds budget;
  std::chrono::nanoseconds cpu_start = thread_cpu_time();
  std::chrono::steady_clock::time_point at = std::chrono::steady_clock::now() + budget;
  bool expired = false;

  explicit Deadline(int milliseconds) : budget(std::chrono::milliseconds(milliseconds)) {}

  static std::chrono::nanoseconds thread_cpu_time() {
    timespec now{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
    return std::chrono::seconds(now.tv_sec) + std::chrono::nanoseconds(now.tv_nsec);
  }

  bool check() {
    if (expired) return true;
    const auto now = std::chrono::steady_clock::now();
    if (now <= at) return false;
    const auto used = thread_cpu_time() - cpu_start;
    if (used >= budget) {
      expired = true;
    } else {
      at = now + (budget - used);
    }
    return expired;
  }
};

bool parse_progress(TSParseState* state) {
  return static_cast<Deadline*>(state->payload)->check();
}

bool query_progress(TSQueryCursorState* state) {
  return static_cast<Deadline*>(state->payload)->check();
}

const char* read_content(void* payload, std::uint32_t byte, TSPoint, std::uint32_t* bytes_read) {
  const auto* content = static_cast<const std::string_view*>(payload);
  if (byte >= content->size()) {
    *bytes_read = 0;
    return "";
  }
  *bytes_read = static_cast<std::uint32_t>(content->size() - byte);
  return content->data() + byte;
}

// A comment or preamble node, with the rows it spans.
struct Item {
  std::uint32_t start_byte = 0;
  std::uint32_t end_byte = 0;
  int first_row = 0;
  int last_row = 0;
  bool ends_at_line_start = false;  // the node swallowed its line break
  bool comment = false;
};

struct Definition {
  TSNode node{};
  TSNode body{};  // null for declarations without a body
  std::uint32_t start_byte = 0;
  std::uint32_t end_byte = 0;
  std::uint32_t name_start = 0;
  std::uint32_t name_end = 0;
  std::uint32_t pattern = 0;
  std::string_view kind;
  std::string_view name;
  std::string_view parent_name;
  bool explicit_parent = false;
  int first_row = 0;
  int last_row = 0;
  int head_row = 0;  // first row of the chunk: doc comments and decorators included
  int parent = -1;
  int first_child = -1;
  int last_child = -1;
  int next_sibling = -1;
  std::string symbol;
  std::string signature;
  std::string doc;
};

// A range of rows to become one chunk: part of a definition (def >= 0) or a window.
struct Piece {
  int first = 0;
  int last = 0;
  int def = -1;
  bool lead = false;        // the first part of a definition: carries its doc
  std::string_view symbol;  // for windows: a markdown heading
};

// Last row of a node: a node that ends at column 0 ended with the line break before it.
int last_row_of(TSPoint start, TSPoint end) {
  if (end.column == 0 && end.row > start.row) return static_cast<int>(end.row) - 1;
  return static_cast<int>(end.row);
}

bool is_inline_space(char c) {
  return c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v';
}

// True when only whitespace stands between the start of its line and byte.
bool starts_line(std::string_view content, std::uint32_t byte) {
  for (std::size_t i = byte; i > 0; --i) {
    const char c = content[i - 1];
    if (c == '\n') return true;
    if (!is_inline_space(c)) return false;
  }
  return true;
}

// True when only whitespace follows byte up to the end of its line.
bool ends_line(std::string_view content, std::uint32_t byte) {
  for (std::size_t i = byte; i < content.size(); ++i) {
    const char c = content[i];
    if (c == '\n') return true;
    if (!is_inline_space(c)) return false;
  }
  return true;
}

std::string_view node_text(std::string_view content, TSNode node) {
  const std::uint32_t start = ts_node_start_byte(node);
  const std::uint32_t end = ts_node_end_byte(node);
  if (start >= content.size() || end <= start) return {};
  return content.substr(start, std::min<std::size_t>(end, content.size()) - start);
}

bool is_body_type(std::string_view type) {
  if (type.find("comment") != std::string_view::npos) return false;
  return type.find("body") != std::string_view::npos ||
         type.find("block") != std::string_view::npos ||
         type.ends_with("declaration_list") || type == "compound_statement" ||
         type == "enumerator_list";
}

// The body of a definition: the `body` field of the node or of a descendant a few levels
// down (`const f = () => {…}` keeps it in the arrow function), or a child whose type names a
// body (`class_body`, `declaration_list`). Null when it has none: a declaration or signature.
TSNode find_body(TSNode node) {
  constexpr int k_max_depth = 3;
  constexpr std::size_t k_max_nodes_per_level = 16;
  std::vector<TSNode> level{node};
  std::vector<TSNode> next;
  TreeCursor cursor(node);
  for (int depth = 0; depth <= k_max_depth && !level.empty(); ++depth) {
    next.clear();
    for (const TSNode current : level) {
      const TSNode body = ts_node_child_by_field_name(current, "body", 4);
      if (!ts_node_is_null(body)) return body;
      ts_tree_cursor_reset(cursor.get(), current);
      if (!ts_tree_cursor_goto_first_child(cursor.get())) continue;
      do {
        const TSNode child = ts_tree_cursor_current_node(cursor.get());
        if (!ts_node_is_named(child)) continue;
        if (is_body_type(ts_node_type(child))) return child;
        if (next.size() < k_max_nodes_per_level) next.push_back(child);
      } while (ts_tree_cursor_goto_next_sibling(cursor.get()));
    }
    level.swap(next);
  }
  return TSNode{};
}

// A docstring: the body's first statement is a lone string literal (Python and the like).
std::string find_docstring(std::string_view content, TSNode body) {
  if (ts_node_is_null(body)) return {};
  TreeCursor cursor(body);
  if (!ts_tree_cursor_goto_first_child(cursor.get())) return {};
  do {
    const TSNode child = ts_tree_cursor_current_node(cursor.get());
    if (!ts_node_is_named(child)) continue;
    const std::string_view type = ts_node_type(child);
    if (type.find("comment") != std::string_view::npos) continue;
    if (type != "expression_statement" || ts_node_named_child_count(child) != 1) return {};
    const TSNode literal = ts_node_named_child(child, 0);
    if (std::string_view(ts_node_type(literal)) != "string") return {};
    return strip_docstring(node_text(content, literal));
  } while (ts_tree_cursor_goto_next_sibling(cursor.get()));
  return {};
}

// Chunks one parsed file: steps 2 to 5 of the comment at the top.
class TreeChunker {
public:
  TreeChunker(const SourceLines& lines, const LanguageState& language,
              const ChunkerOptions& options)
      : m_lines(lines), m_content(lines.content()), m_language(language), m_options(options) {}

  // Definitions, comments and preambles by the query; false when it ran out of time.
  bool collect(TSQueryCursor* cursor, TSNode root, Deadline& deadline);
  void build_tree();
  void describe();
  std::vector<types::Chunk> assemble();

private:
  int clamp_row(int row) const { return std::clamp(row, 0, m_lines.count() - 1); }
  void describe(Definition& def, std::uint32_t items_bound);
  void read_matches(TSQueryCursor* cursor);
  void add_item(TSNode node, bool comment);

  const SourceLines& m_lines;
  std::string_view m_content;
  const LanguageState& m_language;
  const ChunkerOptions& m_options;
  std::vector<Definition> m_defs;
  std::vector<Item> m_items;
  std::vector<int> m_roots;
  std::vector<std::uint32_t> m_doc_bounds;  // per definition: items must start at or after
};

// C and C++ name a function through a chain of declarators (`*f(int)`, `Foo::bar(int)`), and
// their queries (grammars/queries/c.scm, cpp.scm) capture a definition's whole `declarator` as
// @name: one pattern instead of one per shape of the chain, because tree-sitter analyses every
// pattern when it compiles a query, once per process — the per-shape patterns cost C++ 775M
// instructions (~200 ms) before its first file, which a refresh of one edited file paid.
// When a function's @name is the `declarator` of its parent, this sets `declared` to the name
// in that chain as those patterns found it: the `declarator` of a function_declarator at most
// k_max_wrappers declarators down, which must be a name (identifier, qualified_identifier,
// operator_name, destructor_name, template_function…), not what a macro the parser could not
// see through left there. A qualified name (`Foo::bar` defined out of line) makes the function
// a method. False when there is no such name: not a function. Other names leave `declared`
// null.
bool name_of_declarator(TSNode name, TSNode& declared, std::string_view& kind) {
  constexpr std::string_view k_field = "declarator";
  constexpr int k_max_wrappers = 2;  // `**f()`, `*(*f)()`: the depth the patterns went to
  const auto inner = [&](TSNode node) {
    return ts_node_child_by_field_name(node, k_field.data(), static_cast<std::uint32_t>(k_field.size()));
  };
  if (kind != "function") return true;
  const TSNode parent = ts_node_parent(name);
  if (ts_node_is_null(parent) || !ts_node_eq(inner(parent), name)) return true;
  TSNode node = name;
  for (int wrappers = 0; wrappers <= k_max_wrappers && !ts_node_is_null(node); ++wrappers) {
    if (std::string_view(ts_node_type(node)) == "function_declarator") {
      const TSNode candidate = inner(node);
      const std::string_view type = ts_node_is_null(candidate) ? "" : ts_node_type(candidate);
      if (type.find("identifier") != std::string_view::npos || type.ends_with("_name") ||
          type.starts_with("template_")) {
        declared = candidate;
        if (type == "qualified_identifier") kind = "method";
        return true;
      }
    }
    node = inner(node);
  }
  return false;
}

bool TreeChunker::collect(TSQueryCursor* cursor, TSNode root, Deadline& deadline) {
  const TSQueryCursorOptions options{&deadline, &query_progress};
  const std::vector<std::uint8_t>& starts = m_language.starts;
  if (starts.empty() || m_options.whole_tree_query) {
    ts_query_cursor_set_max_start_depth(cursor, std::numeric_limits<std::uint32_t>::max());
    ts_query_cursor_exec_with_options(cursor, m_language.query.get(), root, &options);
    read_matches(cursor);
    return !deadline.expired;
  }
  // The query runs only at nodes where a pattern can start, and starts nothing deeper: it
  // walked and examined every node of the tree, leaves and punctuation included (~1,000
  // instructions each, a third of parsing's cost), where this walk takes a few dozen.
  ts_query_cursor_set_max_start_depth(cursor, 0);
  constexpr std::uint32_t k_nodes_per_deadline_check = 4096;
  std::uint32_t nodes = 0;
  TreeCursor walk(root);
  for (;;) {
    const TSNode node = ts_tree_cursor_current_node(walk.get());
    const TSSymbol symbol = ts_node_symbol(node);
    const std::uint8_t start = symbol < starts.size() ? starts[symbol] : 0;
    if ((start & k_starts_pattern) != 0) {
      ts_query_cursor_exec_with_options(cursor, m_language.query.get(), node, &options);
      read_matches(cursor);
      if (deadline.expired) return false;
    } else if (start != 0) {
      add_item(node, (start & k_starts_comment) != 0);
    }
    if (++nodes % k_nodes_per_deadline_check == 0 && deadline.check()) return false;
    if (ts_tree_cursor_goto_first_child(walk.get())) continue;
    while (!ts_tree_cursor_goto_next_sibling(walk.get())) {
      if (!ts_tree_cursor_goto_parent(walk.get())) return true;
    }
  }
}

void TreeChunker::add_item(TSNode node, bool comment) {
  const TSPoint start = ts_node_start_point(node);
  const TSPoint end = ts_node_end_point(node);
  m_items.push_back({ts_node_start_byte(node), ts_node_end_byte(node),
                     static_cast<int>(start.row), last_row_of(start, end),
                     end.column == 0 && end.row > start.row, comment});
}

void TreeChunker::read_matches(TSQueryCursor* cursor) {
  TSQueryMatch match;
  while (ts_query_cursor_next_match(cursor, &match)) {
    const TSNode* def_node = nullptr;
    const TSNode* name_node = nullptr;
    const TSNode* parent_node = nullptr;
    std::string_view kind;
    for (std::uint16_t i = 0; i < match.capture_count; ++i) {
      const TSQueryCapture& capture = match.captures[i];
      const CaptureInfo& info = m_language.captures[capture.index];
      switch (info.role) {
        case Role::definition:
          def_node = &capture.node;
          kind = info.kind;
          break;
        case Role::name:
          if (name_node == nullptr) name_node = &capture.node;
          break;
        case Role::parent:
          if (parent_node == nullptr) parent_node = &capture.node;
          break;
        case Role::comment:
        case Role::preamble:
          add_item(capture.node, info.role == Role::comment);
          break;
        case Role::ignored:
          break;
      }
    }
    if (def_node == nullptr || name_node == nullptr) continue;
    TSNode declared_name{};
    if (!name_of_declarator(*name_node, declared_name, kind)) continue;
    if (!ts_node_is_null(declared_name)) name_node = &declared_name;
    Definition def;
    def.node = *def_node;
    def.start_byte = ts_node_start_byte(*def_node);
    def.end_byte = ts_node_end_byte(*def_node);
    if (def.end_byte <= def.start_byte) continue;
    def.name_start = ts_node_start_byte(*name_node);
    def.name_end = ts_node_end_byte(*name_node);
    def.pattern = match.pattern_index;
    def.kind = kind;
    def.name = node_text(m_content, *name_node);
    if (parent_node != nullptr) {
      def.parent_name = node_text(m_content, *parent_node);
      def.explicit_parent = true;
    }
    const TSPoint start = ts_node_start_point(*def_node);
    def.first_row = clamp_row(static_cast<int>(start.row));
    def.last_row = clamp_row(last_row_of(start, ts_node_end_point(*def_node)));
    def.head_row = def.first_row;
    if (util::trim(def.name).empty()) continue;
    def.body = find_body(*def_node);
    // A namespace without a body is a statement (PHP's `namespace X;`).
    if (ts_node_is_null(def.body) && kind == "module") continue;
    m_defs.push_back(std::move(def));
  }
}

void TreeChunker::build_tree() {
  std::sort(m_items.begin(), m_items.end(), [](const Item& a, const Item& b) {
    return a.start_byte != b.start_byte ? a.start_byte < b.start_byte : a.end_byte > b.end_byte;
  });
  // Drop items inside another (Rust's doc_comment inside its line_comment).
  std::size_t kept_items = 0;
  for (std::size_t i = 0; i < m_items.size(); ++i) {
    if (kept_items > 0 && m_items[i].start_byte < m_items[kept_items - 1].end_byte) continue;
    m_items[kept_items++] = m_items[i];
  }
  m_items.resize(kept_items);

  std::sort(m_defs.begin(), m_defs.end(), [](const Definition& a, const Definition& b) {
    if (a.start_byte != b.start_byte) return a.start_byte < b.start_byte;
    if (a.end_byte != b.end_byte) return a.end_byte > b.end_byte;
    return a.pattern < b.pattern;
  });
  std::vector<Definition> kept;
  kept.reserve(m_defs.size());
  std::vector<int> stack;
  std::uint32_t closed_end = 0;  // end of the last definition that ended before this one
  for (Definition& def : m_defs) {
    if (!kept.empty() && kept.back().start_byte == def.start_byte &&
        kept.back().end_byte == def.end_byte) {
      continue;  // the same node from a later pattern
    }
    while (!stack.empty() && kept[static_cast<std::size_t>(stack.back())].end_byte < def.end_byte) {
      closed_end = std::max(closed_end, kept[static_cast<std::size_t>(stack.back())].end_byte);
      stack.pop_back();
    }
    if (!stack.empty()) {
      const Definition& outer = kept[static_cast<std::size_t>(stack.back())];
      if (outer.name_start == def.name_start && outer.name_end == def.name_end) continue;
      if (def.kind == outer.kind &&
          ts_node_eq(def.node, ts_node_child_by_field_name(outer.node, "type", 4))) {
        continue;
      }
    }
    if (static_cast<int>(stack.size()) >= k_max_nesting) continue;
    // A method without a body is a declaration (of an interface, an abstract class): it stays
    // in its class's lines rather than making a one-line chunk.
    if (!stack.empty() && ts_node_is_null(def.body) && is_whole_kind(def.kind) &&
        def.kind != "macro" && has_methods(kept[static_cast<std::size_t>(stack.back())].kind)) {
      continue;
    }
    const int index = static_cast<int>(kept.size());
    def.parent = stack.empty() ? -1 : stack.back();
    if (def.parent >= 0) {
      Definition& outer = kept[static_cast<std::size_t>(def.parent)];
      if (outer.first_child < 0) {
        outer.first_child = index;
      } else {
        kept[static_cast<std::size_t>(outer.last_child)].next_sibling = index;
      }
      outer.last_child = index;
    } else {
      m_roots.push_back(index);
    }
    // Doc comments of a nested definition lie inside its parent, after anything closed.
    m_doc_bounds.push_back(
        def.parent >= 0
            ? std::max(closed_end, kept[static_cast<std::size_t>(def.parent)].start_byte + 1)
            : closed_end);
    kept.push_back(std::move(def));
    stack.push_back(index);
  }
  m_defs = std::move(kept);
}

void TreeChunker::describe() {
  for (std::size_t i = 0; i < m_defs.size(); ++i) describe(m_defs[i], m_doc_bounds[i]);
}

void TreeChunker::describe(Definition& def, std::uint32_t items_bound) {
  // Name and parent: "Foo::bar" names bar, owned by Foo.
  std::string_view name = def.name;
  if (const auto scope = name.rfind("::"); scope != std::string_view::npos && scope > 0) {
    if (!def.explicit_parent) {
      def.parent_name = name.substr(0, scope);
      def.explicit_parent = true;
    }
    name = name.substr(scope + 2);
  }
  def.symbol = collapse_whitespace(name, k_max_symbol_bytes);
  if (!def.explicit_parent && def.parent >= 0) {
    def.parent_name = m_defs[static_cast<std::size_t>(def.parent)].symbol;
  }
  if (def.kind == "function" && !def.explicit_parent && def.parent >= 0 &&
      has_methods(m_defs[static_cast<std::size_t>(def.parent)].kind)) {
    def.kind = "method";
  } else if (def.kind == "method" && !def.explicit_parent && def.parent < 0) {
    def.kind = "function";  // Ruby's top-level `def`, methods of a top-level object literal
  }

  // Head and doc: comments and decorators on the lines right above, nothing else between.
  auto item =
      std::lower_bound(m_items.begin(), m_items.end(), def.start_byte,
                       [](const Item& it, std::uint32_t byte) { return it.start_byte < byte; });
  std::vector<const Item*> doc_items;
  while (item != m_items.begin()) {
    const Item& candidate = *(item - 1);
    if (candidate.start_byte < items_bound || candidate.end_byte > def.start_byte) break;
    if (candidate.last_row != def.head_row - 1) break;
    if (!starts_line(m_content, candidate.start_byte)) break;
    if (!candidate.ends_at_line_start && !ends_line(m_content, candidate.end_byte)) break;
    def.head_row = candidate.first_row;
    if (candidate.comment) doc_items.push_back(&candidate);
    --item;
  }
  std::string doc;
  for (auto it = doc_items.rbegin(); it != doc_items.rend(); ++it) {
    const std::string text = strip_comment_markers(
        m_content.substr((*it)->start_byte, (*it)->end_byte - (*it)->start_byte));
    if (text.empty()) continue;
    if (!doc.empty()) doc += '\n';
    doc += text;
    if (doc.size() > k_max_doc_bytes) break;
  }

  // Signature: from the start of the first line (so `export`, `type`, `const` are in) to the body.
  const TSNode body = def.body;
  const std::string docstring = find_docstring(m_content, body);
  if (!docstring.empty()) {
    if (!doc.empty()) doc += '\n';
    doc += docstring;
  }
  if (doc.size() > k_max_doc_bytes) {
    // Cut at a character boundary: drop a partial UTF-8 sequence at the end.
    doc.resize(k_max_doc_bytes);
    std::size_t end = doc.size();
    while (end > 0 && (static_cast<unsigned char>(doc[end - 1]) & 0xC0) == 0x80) --end;
    if (end > 0 && (static_cast<unsigned char>(doc[end - 1]) & 0x80) != 0) doc.resize(end - 1);
  }
  def.doc = std::move(doc);

  // Keywords before the node on its line belong to the signature (`export const f = …`,
  // Go's `type T struct`); code that merely shares the line (`}); function f()`) does not.
  std::size_t sig_start = m_lines.start_of(def.first_row);
  while (sig_start < def.start_byte && is_inline_space(m_content[sig_start])) ++sig_start;
  for (std::size_t i = sig_start; i < def.start_byte; ++i) {
    const char c = m_content[i];
    const bool word = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                      c == '_' || c == '$' || is_inline_space(c);
    if (!word) {
      sig_start = def.start_byte;
      break;
    }
  }
  std::size_t sig_end = m_lines.end_of(def.first_row);
  if (!ts_node_is_null(body) && ts_node_start_byte(body) > sig_start) {
    sig_end = ts_node_start_byte(body);
  }
  sig_end = std::min<std::size_t>({sig_end, def.end_byte, sig_start + 8 * k_max_signature_bytes});
  // A comment between the name and the body is not part of the signature.
  for (auto it = std::lower_bound(
           m_items.begin(), m_items.end(), sig_start,
           [](const Item&candidate, std::size_t byte) { return candidate.start_byte < byte; });
       it != m_items.end() && it->start_byte < sig_end; ++it) {
    if (it->comment) {
      sig_end = it->start_byte;
      break;
    }
  }
  if (sig_end > sig_start) {
    std::string signature = collapse_whitespace(m_content.substr(sig_start, sig_end - sig_start),
                                                k_max_signature_bytes);
    // Without a body node the first line may end with the body's opening brace.
    while (!signature.empty() && (signature.back() == '{' || signature.back() == ' ')) {
      signature.pop_back();
    }
    def.signature = std::move(signature);
  }
}

// Turns the definition tree into pieces that cover every non-blank line (step 5).
class Assembler {
public:
  Assembler(const SourceLines& lines, const ChunkerOptions& options,
            const std::vector<Definition>& defs)
      : m_lines(lines), m_options(options), m_defs(defs) {}

  void emit_file(const std::vector<int>& roots) {
    int cursor = 0;
    int tail = -1;
    for (const int root : roots) {
      emit_gap(-1, cursor, m_defs[static_cast<std::size_t>(root)].head_row - 1, tail, {});
      tail = emit_definition(root, 0);
      cursor = std::max(cursor, m_defs[static_cast<std::size_t>(root)].last_row + 1);
    }
    emit_gap(-1, cursor, m_lines.count() - 1, tail, {});
  }

  // Windows over rows first..last with no definition: owner is the class whose own lines
  // they are, or -1 for top-level blocks. tail is the piece that covers the row before first.
  void emit_gap(int owner, int first, int last, int& tail, std::string_view symbol) {
    while (first <= last && m_lines.is_blank(first)) ++first;
    while (last >= first && m_lines.is_blank(last)) --last;
    if (first > last) return;
    if (tail >= 0 && m_pieces[static_cast<std::size_t>(tail)].last < first) {
      bool closing = true;
      for (int row = first; row <= last && closing; ++row) {
        closing = m_lines.is_blank(row) || m_lines.is_closing(row);
      }
      if (closing) {
        m_pieces[static_cast<std::size_t>(tail)].last = last;
        return;
      }
    }
    const int size = balanced_size(last - first + 1, m_options.window_lines);
    for (int start = first; start <= last;) {
      int end = std::min(start + size - 1, last);
      while (end > start && m_lines.is_blank(end)) --end;
      tail = push({start, end, owner, false, symbol});
      start = end + 1;
      while (start <= last && m_lines.is_blank(start)) ++start;
    }
  }

  std::vector<Piece> take() { return std::move(m_pieces); }

private:
  static int balanced_size(int rows, int limit) {
    limit = std::max(limit, 1);
    const int parts = (rows + limit - 1) / limit;
    return parts <= 1 ? rows : (rows + parts - 1) / parts;
  }

  int push(Piece piece) {
    m_pieces.push_back(piece);
    return static_cast<int>(m_pieces.size()) - 1;
  }

  // A definition's rows first..last as one chunk, or balanced parts when too long. Returns
  // the piece that covers last.
  int emit_span(int def, int first, int last, bool lead) {
    const int size = balanced_size(last - first + 1, m_options.max_chunk_lines);
    int tail = -1;
    for (int start = first; start <= last; start += size) {
      const int end = std::min(start + size - 1, last);
      bool blank = true;
      for (int row = start; row <= end && blank; ++row) blank = m_lines.is_blank(row);
      if (blank && tail >= 0) continue;
      tail = push({start, end, def, lead && start == first, {}});
    }
    return tail;
  }

  int emit_definition(int index, int whole_ancestors) {
    const Definition& def = m_defs[static_cast<std::size_t>(index)];
    if (def.first_child < 0 || is_whole_kind(def.kind)) {
      const int tail = emit_span(index, def.head_row, def.last_row, true);
      if (whole_ancestors < k_max_whole_ancestors) {
        for (int child = def.first_child; child >= 0;
             child = m_defs[static_cast<std::size_t>(child)].next_sibling) {
          emit_definition(child, whole_ancestors + 1);
        }
      }
      return tail;
    }
    // Class-like with nested definitions: the head up to the first one, then its own lines.
    int header_last = m_defs[static_cast<std::size_t>(def.first_child)].head_row - 1;
    while (header_last > def.head_row && m_lines.is_blank(header_last)) --header_last;
    header_last = std::max(header_last, def.head_row);
    int tail = emit_span(index, def.head_row, header_last, true);
    int cursor = header_last + 1;
    for (int child = def.first_child; child >= 0;
         child = m_defs[static_cast<std::size_t>(child)].next_sibling) {
      const Definition& nested = m_defs[static_cast<std::size_t>(child)];
      emit_gap(index, cursor, nested.head_row - 1, tail, {});
      tail = emit_definition(child, whole_ancestors);
      cursor = std::max(cursor, nested.last_row + 1);
    }
    emit_gap(index, cursor, def.last_row, tail, {});
    return tail;
  }

  const SourceLines& m_lines;
  const ChunkerOptions& m_options;
  const std::vector<Definition>& m_defs;
  std::vector<Piece> m_pieces;
};

std::vector<types::Chunk> to_chunks(const SourceLines& lines, std::vector<Piece> pieces,
                                    const std::vector<Definition>& defs) {
  std::stable_sort(pieces.begin(), pieces.end(),
                   [](const Piece& a, const Piece& b) { return a.first < b.first; });
  std::vector<types::Chunk> chunks;
  chunks.reserve(pieces.size());
  for (const Piece& piece : pieces) {
    types::Chunk chunk;
    if (piece.def >= 0) {
      const Definition& def = defs[static_cast<std::size_t>(piece.def)];
      chunk.kind = def.kind;
      chunk.symbol = def.symbol;
      chunk.parent = def.parent_name;
      chunk.signature = def.signature;
      if (piece.lead) chunk.doc = def.doc;
    } else {
      chunk.kind = "block";
      chunk.symbol = piece.symbol;
    }
    chunk.start_line = piece.first + 1;
    chunk.end_line = piece.last + 1;
    chunk.text = lines.text(piece.first, piece.last);
    chunks.push_back(std::move(chunk));
  }
  return chunks;
}

std::vector<types::Chunk> TreeChunker::assemble() {
  Assembler assembler(m_lines, m_options, m_defs);
  assembler.emit_file(m_roots);
  std::vector<Piece> pieces = assembler.take();
  std::size_t total = 0;
  for (const Piece& piece : pieces) total += m_lines.text(piece.first, piece.last).size();
  if (total > k_max_text_factor * m_content.size() + 65536) return {};
  return to_chunks(m_lines, std::move(pieces), m_defs);
}

// A markdown ATX heading's text ("## Install" → "Install"), or nullopt.
std::optional<std::string_view> markdown_heading(std::string_view line) {
  std::size_t indent = 0;
  while (indent < 3 && indent < line.size() && line[indent] == ' ') ++indent;
  line.remove_prefix(indent);
  std::size_t level = 0;
  while (level < line.size() && line[level] == '#') ++level;
  if (level == 0 || level > 6) return std::nullopt;
  if (level < line.size() && line[level] != ' ' && line[level] != '\t') return std::nullopt;
  std::string_view text = util::trim(line.substr(level));
  while (!text.empty() && text.back() == '#') text.remove_suffix(1);
  return util::trim(text);
}

std::vector<types::Chunk> window_chunks(const SourceLines& lines, const ChunkerOptions& options,
                                        bool markdown) {
  static const std::vector<Definition> no_defs;
  Assembler assembler(lines, options, no_defs);
  int section_start = 0;
  std::string_view section_symbol;
  if (markdown) {
    bool in_fence = false;
    for (int row = 0; row < lines.count(); ++row) {
      const std::string_view line = util::trim(lines.line(row));
      if (line.starts_with("```") || line.starts_with("~~~")) {
        in_fence = !in_fence;
        continue;
      }
      if (in_fence) continue;
      const auto heading = markdown_heading(lines.line(row));
      if (!heading) continue;
      int tail = -1;
      assembler.emit_gap(-1, section_start, row - 1, tail, section_symbol);
      section_start = row;
      section_symbol = *heading;
    }
  }
  int tail = -1;
  assembler.emit_gap(-1, section_start, lines.count() - 1, tail, section_symbol);
  return to_chunks(lines, assembler.take(), no_defs);
}

}  // namespace

struct Chunker::Impl {
  ChunkerOptions options;
  ParserPtr parser{ts_parser_new()};
  QueryCursorPtr cursor{ts_query_cursor_new()};
  // This Chunker's view of the shared states: found without taking the lock again.
  std::unordered_map<const LanguageSpec*, const LanguageState*> languages;

  const LanguageState& language_state(const LanguageSpec& spec) {
    auto found = languages.find(&spec);
    if (found == languages.end()) {
      found = languages.emplace(&spec, &shared_language_state(spec)).first;
    }
    return *found->second;
  }

  // Chunks with the grammar, or nullopt when the file must fall back to line windows.
  std::optional<std::vector<types::Chunk>> chunk_with_grammar(const SourceLines& lines,
                                                              const LanguageState& language) {
    std::string_view content = lines.content();
    if (!language.query || content.size() >= std::numeric_limits<std::uint32_t>::max() / 2 ||
        std::memchr(content.data(), '\0', content.size()) != nullptr) {
      return std::nullopt;  // some external scanners take NUL for the end of input
    }
    if (ts_parser_language(parser.get()) != language.language &&
        !ts_parser_set_language(parser.get(), language.language)) {
      return std::nullopt;
    }
    Deadline deadline(options.timeout_ms);
    const TSInput input{&content, &read_content, TSInputEncodingUTF8, nullptr};
    const TSParseOptions parse_options{&deadline, &parse_progress};
    TreePtr tree(ts_parser_parse_with_options(parser.get(), nullptr, input, parse_options));
    if (!tree) {
      ts_parser_reset(parser.get());  // a cancelled parse would otherwise resume next time
      return std::nullopt;
    }
    TreeChunker chunker(lines, language, options);
    if (!chunker.collect(cursor.get(), ts_tree_root_node(tree.get()), deadline))
      return std::nullopt;
    chunker.build_tree();
    chunker.describe();
    std::vector<types::Chunk> chunks = chunker.assemble();
    if (chunks.empty()) return std::nullopt;
    return chunks;
  }
};

Chunker::Chunker(ChunkerOptions options) : m_impl(std::make_unique<Impl>()) {
  m_impl->options = options;
  m_impl->options.window_lines = std::max(1, options.window_lines);
  m_impl->options.max_chunk_lines = std::max(1, options.max_chunk_lines);
  m_impl->options.timeout_ms = std::max(1, options.timeout_ms);
}

Chunker::~Chunker() = default;

std::vector<types::Chunk> Chunker::chunk(std::string_view /*path*/, std::string_view language,
                                         std::string_view content) {
  if (content.empty()) return {};
  const SourceLines lines(content);
  const LanguageSpec* spec = language.empty() ? nullptr : find_language(language);
  if (spec != nullptr && spec->grammar != nullptr) {
    if (auto chunks = m_impl->chunk_with_grammar(lines, m_impl->language_state(*spec))) {
      return std::move(*chunks);
    }
  }
  return window_chunks(lines, m_impl->options, language == "markdown");
}

bool Chunker::parse_only(std::string_view language, std::string_view content) {
  const LanguageSpec* spec = language.empty() ? nullptr : find_language(language);
  if (spec == nullptr || spec->grammar == nullptr || content.empty()) return false;
  const LanguageState& state = m_impl->language_state(*spec);
  TSParser* parser = m_impl->parser.get();
  if (ts_parser_language(parser) != state.language &&
      !ts_parser_set_language(parser, state.language)) {
    return false;
  }
  Deadline deadline(m_impl->options.timeout_ms);
  const TSInput input{&content, &read_content, TSInputEncodingUTF8, nullptr};
  const TSParseOptions parse_options{&deadline, &parse_progress};
  TreePtr tree(ts_parser_parse_with_options(parser, nullptr, input, parse_options));
  if (!tree) ts_parser_reset(parser);
  return tree != nullptr;
}

}  // namespace kasava::parse
