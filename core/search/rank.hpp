// The steps of hybrid ranking that look past one chunk: what kind of query this is, what kind
// of file a chunk lies in, and how well the file's path names what is asked. Each is a small function of plain values (paths, the parsed
// query, candidate scores), so another store (PostgreSQL) can compute the same features; the
// order in which search.cpp applies them is explained at the top of that file.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/search/query.hpp"

namespace kasava::search {

/// What a query is made of, which decides how much the blend leans on words.
enum class QueryKind {
  identifier,  ///< one identifier or qualified name and nothing more (`RouterGroup`, `json.loads`)
  mixed,       ///< a sentence with an identifier in it ("Fix `verify=False` case")
  sentence,    ///< words only
};
QueryKind query_kind(const Query& query);

/// What a file is, judged from its path alone.
enum class FileKind {
  source,
  test,       ///< tests/, test_x.py, x_test.go, x.test.ts, XTest.java, x_spec.rb, testdata/
  example,    ///< examples/, demo/, samples/
  docs,       ///< .md, .rst, .txt, .adoc, docs/, man pages
  changelog,  ///< CHANGELOG, CHANGES, HISTORY, NEWS, RELEASE notes
  build,      ///< build and CI files: Makefile, CMake, package manifests, workflows, Dockerfile
  generated,  ///< vendored, minified or generated (vendor/, dist/, *.pb.go, *_generated.*, *.prebuilt, signatures)
  barrel,     ///< re-exports: __init__.py, index.ts/js, mod.rs
  stubs,      ///< type declarations: .d.ts, .pyi
};
FileKind file_kind(std::string_view path);
std::string_view file_kind_name(FileKind kind);

/// Whether the query asks for files of this kind ("a flaky test", "the changelog", "fix the
/// types"): then the ranker's weight for the kind does not apply. Always true for source,
/// never for generated files.
bool asks_for_kind(FileKind kind, const Query& query);

/// How well a path names what the query asks, in [0, 1]: 1 when the query writes the path or
/// a tail of it (`ignore/types:`, `src/flask/typing`, `_utils.py`), else the share of the
/// file name's parts the query's words hold ("clients" for `_client.py`), with a little for
/// folder names the query mentions.
double path_match(std::string_view path, const Query& query);

/// True when two lower-cased words are the same word up to a short ending ("client" and
/// "clients", "decoder" and "decoders", "parse" and "parser"): names and prose inflect.
bool same_word(std::string_view a, std::string_view b);

} // namespace kasava::search
