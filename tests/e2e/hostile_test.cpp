// Hostile and odd repositories: pathological content and names, odd git states, huge file
// counts. Each: no crash (run_kasava fails on a signal or a timeout), a warning where
// something is skipped, and the ordinary files next to the odd ones are still found.
#include <filesystem>
#include <fstream>

#include "harness.hpp"

namespace kasava::e2e {
namespace {

// The ordinary file every fixture carries; finding it proves the rest was indexed.
void write_canary(const FixtureRepo& repo) {
  repo.write("src/canary.py",
             "def locate_canary_bird(cage):\n    \"\"\"Finds the canary bird in its cage.\"\"\"\n"
             "    return cage.bird\n");
}

// `ask --json` for the canary: exit 0, valid JSON, the canary first.
void require_canary(const FixtureRepo& repo, RunOptions options = {}) {
  const auto result = repo.kasava({"ask", "--json", "canary bird cage"}, options);
  INFO(describe(result));
  REQUIRE(result.exit_code == 0);
  const auto document = parse_json_output(result.out);
  REQUIRE(result_paths(document).at(0) == "src/canary.py");
}

RunResult index_ok(const FixtureRepo& repo, const std::vector<std::string>& extra = {}) {
  std::vector<std::string> args{"index"};
  args.insert(args.end(), extra.begin(), extra.end());
  auto result = repo.kasava(args);
  INFO(describe(result));
  REQUIRE(result.exit_code == 0);
  return result;
}

}  // namespace

TEST_CASE("hostile: deeply nested code in every grammar does not crash the parser") {
  FixtureRepo repo;
  write_canary(repo);
  const int depth = 20000;
  repo.write("deep/nested.py", "x = " + std::string(depth, '(') + "1" + std::string(depth, ')') + "\n");
  repo.write("deep/nested.c", "int f(void) " + std::string(depth, '{') + std::string(depth, '}') + "\n");
  repo.write("deep/nested.js", "const a = " + std::string(depth, '[') + std::string(depth, ']') + ";\n");
  std::string ifs = "fn main() {\n";
  for (int i = 0; i < 3000; ++i) ifs += "if x {\n";
  ifs += std::string(3000, '}') + "\n}\n";
  repo.write("deep/nested.rs", ifs);
  index_ok(repo);
  require_canary(repo);
}

TEST_CASE("hostile: a 100k-line file is indexed and its last line found") {
  FixtureRepo repo;
  write_canary(repo);
  std::string big;
  for (int i = 0; i < 100000; ++i) {
    big += 'v';
    big += static_cast<char>('0' + i % 10);
    big += " = 1\n";
  }
  big += "def zebra_striped_needle():\n    return 42\n";
  repo.write("big/huge.py", big);
  index_ok(repo);
  require_canary(repo);
  const auto result = repo.kasava({"ask", "--json", "zebra_striped_needle"});
  INFO(describe(result));
  REQUIRE(result.exit_code == 0);
  const auto document = parse_json_output(result.out);
  REQUIRE(document["results"][std::size_t{0}]["path"].as_string() == "big/huge.py");
  CHECK(document["results"][std::size_t{0}]["start_line"].as_integer() >= 100000);
}

TEST_CASE("hostile: NUL bytes, invalid UTF-8, BOM and CRLF leave the rest searchable") {
  FixtureRepo repo;
  write_canary(repo);
  static constexpr char k_with_nuls[] = "int nul_function(void) {\0\0\0 return 0; }\n";
  repo.write("odd/nul.c", std::string(k_with_nuls, sizeof k_with_nuls - 1));
  repo.write("odd/latin1.py", "# caf\xe9 \xff\xfe\n def latin_quokka():\n    return 1\n");
  repo.write("odd/bom_crlf.py", "\xef\xbb\xbf" "def bom_wombat():\r\n    return 2\r\n\r\ndef other():\r\n    pass\r\n");
  repo.write("odd/only_cr.py", "def cr_numbat():\r    return 3\r");
  index_ok(repo);
  require_canary(repo);
  const auto bom = repo.kasava({"ask", "--json", "bom_wombat"});
  INFO(describe(bom));
  REQUIRE(bom.exit_code == 0);
  const auto document = parse_json_output(bom.out);
  CHECK(document["results"][std::size_t{0}]["path"].as_string() == "odd/bom_crlf.py");
  CHECK(document["results"][std::size_t{0}]["start_line"].as_integer() == 1);
  for (const char* query : {"latin_quokka", "cr_numbat", "nul_function"}) {
    const auto result = repo.kasava({"ask", "--json", query});
    INFO(describe(result));
    REQUIRE((result.exit_code == 0 || result.exit_code == 1));
    parse_json_output(result.out);
  }
}

TEST_CASE("hostile: file names with a newline or non-UTF-8 bytes do not break output") {
  FixtureRepo repo;
  write_canary(repo);
  repo.write("names/new\nline.py", "def newline_named_pangolin():\n    return 1\n");
  repo.write("names/caf\xe9.py", "def latin_named_pangolin():\n    return 2\n");
  repo.write("names/tab\tand \"quote\".py", "def quoted_named_pangolin():\n    return 3\n");
  repo.commit_all("odd names");
  index_ok(repo);
  require_canary(repo);
  const auto result = repo.kasava({"ask", "--json", "pangolin", "--limit", "20"});
  INFO(describe(result));
  REQUIRE(result.exit_code == 0);
  const auto document = parse_json_output(result.out);  // valid JSON despite the names
  CHECK(document["results"].size() >= 2);
  // Text output: one heading or result per line, never a raw newline inside a path.
  const auto text = repo.kasava({"ask", "pangolin", "--limit", "20"});
  REQUIRE(text.exit_code == 0);
  for (const auto& line : lines_of(text.out)) CHECK(line != "line.py");
}

TEST_CASE("hostile: a Git LFS pointer is indexed as the small text it is, never fetched") {
  FixtureRepo repo;
  write_canary(repo);
  repo.write(".gitattributes", "*.bin filter=lfs diff=lfs merge=lfs -text\n");
  repo.write("assets/model.bin",
             "version https://git-lfs.github.com/spec/v1\n"
             "oid sha256:4d7a214614ab2935c943f9e0ff69d22eadbb8f32b1258daaa5e2ca24d17e2393\n"
             "size 12345\n");
  repo.commit_all("lfs pointer");
  index_ok(repo);
  require_canary(repo);
}

TEST_CASE("hostile: 20k tiny files are indexed in bounded time") {
  FixtureRepo repo;
  write_canary(repo);
  for (int i = 0; i < 20000; ++i) {
    // Built with += : GCC 12 warns falsely (-Wrestrict) on a chain of + here.
    std::string name = "tiny/d";
    name += std::to_string(i % 100);
    if (i < 100) std::filesystem::create_directories(repo.path(name));
    name += "/f";
    name += std::to_string(i);
    name += ".txt";
    std::ofstream(repo.path(name)) << "t" << i << "\n";
  }
  const auto result = repo.kasava({"index", "--json"});
  INFO(describe(result));
  REQUIRE(result.exit_code == 0);
  CHECK(result.seconds < 60.0);
  const auto summary = parse_json_output(result.out);
  CHECK(summary["files"].as_integer() == 20001);
  require_canary(repo);
}

TEST_CASE("hostile: an empty repository, .gitignore of everything: nothing found, no error") {
  SECTION("empty") {
    FixtureRepo repo;
    const auto result = index_ok(repo, {"--json"});
    CHECK(parse_json_output(result.out)["files"].as_integer() == 0);
    const auto asked = repo.kasava({"ask", "anything"});
    INFO(describe(asked));
    CHECK(asked.exit_code == 1);
  }
  SECTION("gitignore everything") {
    FixtureRepo repo;
    write_canary(repo);
    repo.write(".gitignore", "*\n");
    index_ok(repo);
    const auto asked = repo.kasava({"ask", "canary bird cage"});
    INFO(describe(asked));
    CHECK(asked.exit_code == 1);
  }
}

TEST_CASE("hostile: a detached HEAD and a shallow clone index like any work tree") {
  FixtureRepo origin;
  write_canary(origin);
  const std::string first = origin.commit_all("first");
  origin.write("src/later.py", "def later_addition():\n    pass\n");
  origin.commit_all("second");
  SECTION("detached HEAD") {
    origin.git({"checkout", "-q", "--detach", first});
    index_ok(origin);
    require_canary(origin);
    const auto later = origin.kasava({"ask", "--json", "later_addition"});
    CHECK(later.exit_code == 1);  // not in the checked-out tree
  }
  SECTION("shallow clone") {
    TempDir parent("shallow");
    const auto clone = run_program(
        "git", {"clone", "-q", "--depth", "1", "file://" + origin.root(), parent / "clone"});
    INFO(describe(clone));
    REQUIRE(clone.exit_code == 0);
    RunOptions options;
    options.cwd = parent / "clone";
    const auto indexed = run_kasava({"index"}, options);
    INFO(describe(indexed));
    REQUIRE(indexed.exit_code == 0);
    const auto asked = run_kasava({"ask", "--json", "later_addition"}, options);
    CHECK(asked.exit_code == 0);
    const auto status = run_kasava({"status"}, options);
    CHECK(status.exit_code == 0);
  }
}

}  // namespace kasava::e2e
