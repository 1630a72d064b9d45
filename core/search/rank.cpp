// The file- and query-level steps of hybrid ranking (see rank.hpp; the stack and its
// constants are explained at the top of search.cpp).
#include "core/search/rank.hpp"

#include <algorithm>
#include <initializer_list>

#include "core/util/strings.hpp"
#include "core/util/tokenize.hpp"

namespace kasava::search {
namespace {

std::vector<std::string_view> components(std::string_view path) {
  std::vector<std::string_view> parts;
  std::size_t i = 0;
  while (i <= path.size()) {
    const std::size_t end = std::min(path.find('/', i), path.size());
    if (end > i) parts.push_back(path.substr(i, end - i));
    i = end + 1;
  }
  return parts;
}

// The file name without its extensions ("_utils.py" → "_utils", "index.d.ts" → "index").
std::string_view stem(std::string_view name) {
  const std::size_t dot = name.find('.', 1);
  return dot == std::string_view::npos ? name : name.substr(0, dot);
}

bool ends_with_any(std::string_view text, std::initializer_list<std::string_view> endings) {
  return std::any_of(endings.begin(), endings.end(), [&](std::string_view e) { return text.ends_with(e); });
}

bool is_any(std::string_view text, std::initializer_list<std::string_view> names) {
  return std::find(names.begin(), names.end(), text) != names.end();
}

// True when one of the query's parts is one of `words` (up to a short ending).
bool mentions(const Query& query, std::initializer_list<std::string_view> words) {
  return std::any_of(query.parts.begin(), query.parts.end(), [&](const std::string& part) {
    return std::any_of(words.begin(), words.end(), [&](std::string_view w) { return same_word(part, w); });
  });
}

// `dirs`, `name` and `base` lower-cased; `cased_base` is base as the path spells it.
bool is_test_path(const std::vector<std::string_view>& dirs, std::string_view name, std::string_view base,
                  std::string_view cased_base) {
  for (auto dir : dirs) {
    if (is_any(dir, {"test", "tests", "__tests__", "testdata", "testing", "spec", "specs", "e2e"})) return true;
  }
  return base.starts_with("test_") || base == "test" || base == "tests" || base == "conftest" ||
         ends_with_any(base, {"_test", "_tests", "_spec"}) ||
         name.find(".test.") != std::string_view::npos || name.find(".spec.") != std::string_view::npos ||
         (cased_base.size() > 4 && (cased_base.ends_with("Test") || cased_base.ends_with("Tests")));
}

} // namespace

bool same_word(std::string_view a, std::string_view b) {
  if (a == b) return true;
  if (a.size() > b.size()) std::swap(a, b);
  // "client"/"clients", "parse"/"parser", "decode"/"decoded": a stem of four or more letters
  // and an ending of at most three.
  return a.size() >= 4 && b.size() - a.size() <= 3 && b.starts_with(a);
}

QueryKind query_kind(const Query& query) {
  if (query.one_identifier) return QueryKind::identifier;
  return query.identifiers.empty() ? QueryKind::sentence : QueryKind::mixed;
}

FileKind file_kind(std::string_view path) {
  // Lower-cased once: every comparison below is by lower-case names. Lower-casing is per
  // byte, so a part of `lowered` is at the same offset as in `path`.
  const std::string lowered = util::to_lower(path);
  auto parts = components(lowered);
  if (parts.empty()) return FileKind::source;
  const std::string_view n = parts.back();
  parts.pop_back();
  const std::string_view b = stem(n);
  const std::string_view cased_base = path.substr(static_cast<std::size_t>(b.data() - lowered.data()), b.size());
  // Changelogs first: they are also text files.
  if (is_any(b, {"changelog", "changes", "history", "news", "releases", "release-notes", "release_notes"})) {
    return FileKind::changelog;
  }
  for (auto dir : parts) {
    if (is_any(dir, {"vendor", "third_party", "thirdparty", "node_modules", "dist", "generated"})) {
      return FileKind::generated;
    }
  }
  if (ends_with_any(n, {".min.js", ".pb.go", "_pb2.py", ".pb.cc", ".pb.h", ".generated.go", "_generated.go",
                        "_generated.rs", ".lock", ".asc", ".sig", ".prebuilt"}) ||
      n == "package-lock.json" || n == "yarn.lock" || n == "go.sum") {
    return FileKind::generated;
  }
  if (is_test_path(parts, n, b, cased_base)) return FileKind::test;
  for (auto dir : parts) {
    if (is_any(dir, {"example", "examples", "demo", "demos", "sample", "samples", "_examples"})) {
      return FileKind::example;
    }
  }
  if (ends_with_any(n, {".md", ".rst", ".txt", ".adoc", ".markdown", ".1", ".5", ".ronn"}) ||
      is_any(b, {"readme", "license", "copying", "authors", "contributing", "notice"})) {
    if (n != "cmakelists.txt" && n != "requirements.txt") return FileKind::docs;
  }
  for (auto dir : parts) {
    if (is_any(dir, {"doc", "docs", "documentation", "man"})) return FileKind::docs;
  }
  for (auto dir : parts) {
    if (is_any(dir, {".github", ".circleci", ".gitlab", ".ci", "ci"})) return FileKind::build;
  }
  if (is_any(n, {"makefile", "cmakelists.txt", "requirements.txt", "package.json", "cargo.toml", "go.mod",
                 "setup.py", "setup.cfg", "pyproject.toml", "tox.ini", "dockerfile", "gemfile", "rakefile",
                 "build.gradle", "pom.xml", "meson.build", "configure.ac", "build.rs", ".gitignore",
                 "tsconfig.json", ".travis.yml", "appveyor.yml", "justfile", "noxfile.py"}) ||
      ends_with_any(n, {".cmake", ".gemspec", ".mk", ".am", ".m4", ".yml", ".yaml", ".toml", ".cfg", ".ini"})) {
    return FileKind::build;
  }
  if (ends_with_any(n, {".d.ts", ".d.mts", ".d.cts", ".pyi"})) return FileKind::stubs;
  if (is_any(n, {"__init__.py", "index.ts", "index.js", "index.mjs", "index.cjs", "mod.rs"})) return FileKind::barrel;
  return FileKind::source;
}

std::string_view file_kind_name(FileKind kind) {
  switch (kind) {
    case FileKind::source: return "source";
    case FileKind::test: return "test";
    case FileKind::example: return "example";
    case FileKind::docs: return "docs";
    case FileKind::changelog: return "changelog";
    case FileKind::build: return "build";
    case FileKind::generated: return "generated";
    case FileKind::barrel: return "barrel";
    case FileKind::stubs: return "stubs";
  }
  return "source";
}

// The words by which a query asks for a kind of file. How much a kind the query does not ask
// for weighs is the ranker's business (its kind_* weights, fitted on the commit-subject set,
// where tests, changelogs, docs and build files took first places from the source file a
// subject is about); a query that mentions the kind gets no such penalty, so "a flaky test"
// still finds tests. Source files and generated ones are never asked for by words.
bool asks_for_kind(FileKind kind, const Query& query) {
  switch (kind) {
    case FileKind::source: return true;
    case FileKind::test:
      return mentions(query, {"test", "tests", "testing", "spec", "specs", "unittest", "fixture", "fixtures",
                              "assert", "flaky", "coverage", "mock"});
    case FileKind::example:
      return mentions(query, {"example", "examples", "demo", "sample", "samples", "tutorial"});
    case FileKind::docs:
      return mentions(query, {"doc", "docs", "documentation", "readme", "guide", "manual", "typo", "typos",
                              "license", "markdown", "wording", "link", "links"});
    case FileKind::changelog:
      return mentions(query, {"changelog", "release", "releases", "version", "news", "history"});
    case FileKind::build:
      return mentions(query, {"build", "ci", "make", "makefile", "cmake", "cargo", "dependency", "dependencies",
                              "deps", "bump", "workflow", "workflows", "github", "action", "actions", "docker",
                              "package", "install", "lint", "linter", "config", "setup", "compiler", "msrv",
                              "toolchain", "travis", "yaml", "toml"});
    case FileKind::generated: return false;
    case FileKind::barrel:
      return mentions(query, {"export", "exports", "expose", "import", "imports", "init", "module", "modules",
                              "public", "all"});
    case FileKind::stubs:
      return mentions(query, {"type", "types", "typing", "typings", "typescript", "declaration", "declarations",
                              "definition", "definitions", "generic", "generics", "interface"});
  }
  return true;
}

double path_match(std::string_view path, const Query& query) {
  // A path, or a tail of one, written in the query.
  if (!query.path_words.empty()) {
    const std::string lowered_path = util::to_lower(path);
    for (const auto& [w, has_slash] : query.path_words) {
      // The word is the whole path, a tail of it after a slash, or (with a slash) the path
      // without its extension: `ignore/types` for `ignore/types.rs`.
      const auto at = lowered_path.rfind(w);
      if (at != std::string::npos && (at == 0 || lowered_path[at - 1] == '/' || lowered_path[at - 1] == '_')) {
        const std::size_t after = at + w.size();
        if (after == lowered_path.size() || (has_slash && lowered_path[after] == '.') ||
            (has_slash && lowered_path[after] == '/')) {
          return 1.0;
        }
      }
    }
  }
  if (query.parts.empty()) return 0.0;

  auto parts = components(path);
  if (parts.empty()) return 0.0;
  std::string lowered;
  std::vector<std::string_view> word_parts;
  auto held = [&](std::string_view word) {
    return std::any_of(query.parts.begin(), query.parts.end(),
                       [&](const std::string& part) { return same_word(part, word); });
  };
  // The file name: the share of its parts the query holds. Names of one generic part
  // ("index", "main", "utils") count like any other; the barrel kind handles barrels.
  double name = 0.0;
  util::split_identifier(stem(parts.back()), lowered, word_parts);
  parts.pop_back();
  if (!word_parts.empty()) {
    int found = 0;
    for (const auto part : word_parts) found += held(part) ? 1 : 0;
    name = static_cast<double>(found) / static_cast<double>(word_parts.size());
  }
  // Folders: a little for each the query mentions, at most half of a name match.
  double folders = 0.0;
  for (auto dir : parts) {
    util::split_identifier(dir, lowered, word_parts);
    for (const auto part : word_parts) {
      if (held(part)) folders += 0.25;
    }
  }
  return std::min(1.0, name + std::min(folders, 0.5));
}

} // namespace kasava::search
