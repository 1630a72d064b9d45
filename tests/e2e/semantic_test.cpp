// Vectors and the three ranking modes through the binary: semantic search with the built-in
// model, hybrid on exact identifiers, the model stamp (--model, another model's index), an
// index of an older schema rebuilt by itself, and verify finding a missing vector.
#include <cstdint>
#include <fstream>
#include <sstream>

#include "harness.hpp"

namespace kasava::e2e {
namespace {

void sqlite3_exec(const std::string& index, const std::string& sql) {
  const auto result = run_program("sqlite3", {index, sql});
  INFO(describe(result));
  REQUIRE(result.exit_code == 0);
}

std::string sqlite3_value(const std::string& index, const std::string& sql) {
  const auto result = run_program("sqlite3", {index, sql});
  INFO(describe(result));
  REQUIRE(result.exit_code == 0);
  std::string value = result.out;
  while (!value.empty() && value.back() == '\n') value.pop_back();
  return value;
}

// The rank of the first result whose symbol is `symbol` in an ask --json document, or 1000.
std::int64_t rank_of(const util::JsonValue& document, const std::string& symbol) {
  for (const auto& result : document["results"].as_array()) {
    if (result["symbol"].as_string() == symbol) return result["rank"].as_integer();
  }
  return 1000;
}

// A copy of the built-in model file with one table byte changed and the checksum redone:
// another model, with another id. `renamed` also changes a letter of its name (an older
// built-in model keeps the name; a model of one's own has another).
std::string write_other_model(const TempDir& dir, bool renamed = true) {
  std::ifstream in(std::string(KASAVA_SOURCE_DIR) + "/models/kasava-code.kmodel", std::ios::binary);
  REQUIRE(in.good());
  std::ostringstream content;
  content << in.rdbuf();
  std::string bytes = content.str();
  REQUIRE(bytes.size() > 1000);
  const std::size_t body = bytes.size() - 8;
  bytes[body - 3] = static_cast<char>(bytes[body - 3] ^ 0x01);  // a value of the last row
  // The name follows the magic and ten 32-bit header fields (the last is its length).
  constexpr std::size_t k_name_at = 8 + 10 * 4;
  REQUIRE(bytes.compare(k_name_at, 7, "kasava-") == 0);
  if (renamed) bytes[k_name_at] = 'K';
  std::uint64_t hash = 14695981039346656037ULL;  // FNV-1a 64 of everything before the checksum
  for (std::size_t i = 0; i < body; ++i) {
    hash ^= static_cast<unsigned char>(bytes[i]);
    hash *= 1099511628211ULL;
  }
  for (int i = 0; i < 8; ++i) bytes[body + static_cast<std::size_t>(i)] = static_cast<char>((hash >> (8 * i)) & 0xFF);
  const std::string path = dir / "other.kmodel";
  std::ofstream out(path, std::ios::binary);
  out << bytes;
  return path;
}

void write_config_project(const FixtureRepo& repo) {
  // One function named parseConfig, and many chunks that talk about parsing configuration.
  repo.write("core/config.go",
             "package core\n\n// parseConfig reads the settings file.\nfunc parseConfig(b []byte) "
             "(*Config, error) {\n\treturn decode(b)\n}\n");
  for (int i = 0; i < 12; ++i) {
    repo.write("loaders/loader" + std::to_string(i) + ".py",
               "def load_settings_" + std::to_string(i) +
                   "(path):\n    \"\"\"Parse the config file and return the configuration.\"\"\"\n"
                   "    return parse(read_config(path))\n");
  }
}

}  // namespace

TEST_CASE("semantic: ask --mode semantic ranks by meaning and says so in --json") {
  FixtureRepo repo;
  write_sample_project(repo);
  repo.commit_all("sample");
  REQUIRE(repo.kasava({"index"}).exit_code == 0);

  const auto status = repo.kasava({"status", "--json"});
  REQUIRE(status.exit_code == 0);
  const auto stats = parse_json_output(status.out);
  CHECK(stats["model"].as_string().rfind("builtin:", 0) == 0);
  CHECK(stats["dimensions"].as_integer() > 0);
  CHECK(stats["vectors"].as_integer() == stats["chunks"].as_integer());

  for (const std::string mode : {"semantic", "hybrid", "lexical"}) {
    const auto asked = repo.kasava({"ask", "parse the configuration", "--mode", mode, "--json"});
    INFO(describe(asked));
    REQUIRE(asked.exit_code == 0);
    const auto document = parse_json_output(asked.out);
    check_ask_schema(document, "parse the configuration", &repo);
    double previous = 1.0;
    for (const auto& result : document["results"].as_array()) {
      CHECK(result["mode"].as_string() == mode);
      const double score = result["score"].as_number();
      CHECK(score > 0.0);
      CHECK(score <= previous);
      previous = score;
    }
  }
}

TEST_CASE("semantic: hybrid ranks an exact identifier at least as well as lexical") {
  FixtureRepo repo;
  write_config_project(repo);
  repo.commit_all("config");
  REQUIRE(repo.kasava({"index"}).exit_code == 0);
  for (const std::string query : {"parseConfig", "where is parseConfig defined"}) {
    const auto lexical = repo.kasava({"ask", query, "--mode", "lexical", "--json"});
    const auto hybrid = repo.kasava({"ask", query, "--json"});
    INFO(describe(hybrid));
    REQUIRE(lexical.exit_code == 0);
    REQUIRE(hybrid.exit_code == 0);
    const auto hybrid_rank = rank_of(parse_json_output(hybrid.out), "parseConfig");
    CHECK(hybrid_rank <= rank_of(parse_json_output(lexical.out), "parseConfig"));
    CHECK(hybrid_rank == 1);
  }
}

TEST_CASE("semantic: --model with a bad file is a clear error") {
  FixtureRepo repo;
  write_sample_project(repo);
  repo.write("bad.kmodel", "this is not a model");
  for (const auto& args : std::vector<std::vector<std::string>>{
           {"index", "--model", repo.path("missing.kmodel")},
           {"index", "--model", repo.path("bad.kmodel")},
           {"ask", "anything", "--model", repo.path("bad.kmodel")}}) {
    const auto result = repo.kasava(args);
    INFO(describe(result));
    CHECK(result.exit_code == 2);
    CHECK(result.err.find("kasava: error: loading model '") != std::string::npos);
  }
}

TEST_CASE("semantic: an index of another model is re-embedded by index and refused by ask") {
  FixtureRepo repo;
  write_sample_project(repo);
  repo.commit_all("sample");
  TempDir models("models");
  const std::string other = write_other_model(models);

  const auto built = repo.kasava({"index", "--model", other, "--json"});
  INFO(describe(built));
  REQUIRE(built.exit_code == 0);
  const std::string other_id = parse_json_output(built.out)["model"].as_string();

  // The same model answers; the built-in one is refused with both names and the fix.
  CHECK(repo.kasava({"ask", "parse the configuration", "--model", other}).exit_code == 0);
  const auto refused = repo.kasava({"ask", "parse the configuration"});
  INFO(describe(refused));
  CHECK(refused.exit_code == 2);
  CHECK(refused.err.find(other_id) != std::string::npos);
  CHECK(refused.err.find("kasava index --rebuild") != std::string::npos);
  // Lexical search without a refresh needs no model.
  CHECK(repo.kasava({"ask", "parse the configuration", "--mode", "lexical", "--no-refresh"})
            .exit_code == 0);

  // `kasava index` with the built-in model re-embeds everything, with a notice.
  const auto rebuilt = repo.kasava({"index", "--json"});
  INFO(describe(rebuilt));
  REQUIRE(rebuilt.exit_code == 0);
  CHECK(rebuilt.err.find("re-embedding everything") != std::string::npos);
  const auto summary = parse_json_output(rebuilt.out);
  CHECK(summary["parsed"].as_integer() == summary["indexed"].as_integer());
  CHECK(summary["model"].as_string() != other_id);
  CHECK(repo.kasava({"ask", "parse the configuration"}).exit_code == 0);
}

TEST_CASE("semantic: an index of an older built-in model is re-embedded by the refresh before ask") {
  FixtureRepo repo;
  write_sample_project(repo);
  repo.commit_all("sample");
  TempDir models("models");
  const std::string older = write_other_model(models, false);  // the built-in's name, other rows

  const auto built = repo.kasava({"index", "--model", older, "--json"});
  INFO(describe(built));
  REQUIRE(built.exit_code == 0);
  const std::string older_id = parse_json_output(built.out)["model"].as_string();

  // Without a refresh there is nothing to re-embed with: the error names both models.
  const auto stale = repo.kasava({"ask", "parse the configuration", "--no-refresh"});
  CHECK(stale.exit_code == 2);
  CHECK(stale.err.find(older_id) != std::string::npos);

  // A chosen model is still the user's to switch: KASAVA_MODEL=builtin refuses as before.
  RunOptions chosen;
  chosen.set_env("KASAVA_MODEL", "builtin");
  CHECK(repo.kasava({"ask", "parse the configuration"}, chosen).exit_code == 2);

  // No model chosen: the refresh re-embeds with this kasava's model, says so, and answers.
  const auto asked = repo.kasava({"ask", "parse the configuration", "--json"});
  INFO(describe(asked));
  REQUIRE(asked.exit_code == 0);
  CHECK(asked.err.find("re-embedding everything") != std::string::npos);
  CHECK(!parse_json_output(asked.out)["results"].as_array().empty());
  const auto status = repo.kasava({"index", "--json"});
  REQUIRE(status.exit_code == 0);
  CHECK(parse_json_output(status.out)["model"].as_string() != older_id);
  CHECK(parse_json_output(status.out)["parsed"].as_integer() == 0);
}

TEST_CASE("semantic: an index of the previous schema is rebuilt by index and by ask") {
  FixtureRepo repo;
  write_sample_project(repo);
  repo.commit_all("sample");
  for (const std::string command : {"index", "ask"}) {
    REQUIRE(repo.kasava({"index"}).exit_code == 0);
    sqlite3_exec(repo.index_path(), "UPDATE meta SET value = '2' WHERE key = 'schema_version'");
    const auto result = command == "index" ? repo.kasava({"index"})
                                           : repo.kasava({"ask", "parse the configuration"});
    INFO(command << "\n" << describe(result));
    CHECK(result.exit_code == 0);
    CHECK(result.err.find("built by an older kasava") != std::string::npos);
    CHECK(lines_of(result.err).size() == 1);
    CHECK(sqlite3_value(repo.index_path(), "SELECT value FROM meta WHERE key = 'schema_version'") ==
          "9");
  }
}

TEST_CASE("semantic: verify finds a chunk without its vector and repairs it") {
  FixtureRepo repo;
  write_sample_project(repo);
  repo.commit_all("sample");
  REQUIRE(repo.kasava({"index"}).exit_code == 0);
  const std::string path = sqlite3_value(
      repo.index_path(),
      "SELECT f.path FROM chunks c JOIN files f ON f.id = c.file_id ORDER BY c.id LIMIT 1");
  sqlite3_exec(repo.index_path(), "DELETE FROM vectors WHERE chunk_id = (SELECT min(id) FROM chunks)");
  const auto damaged = repo.kasava({"verify"});
  INFO(describe(damaged));
  CHECK(damaged.exit_code == 1);
  CHECK(damaged.out.find("inconsistent: " + path) != std::string::npos);
  const auto repaired = repo.kasava({"verify", "--repair", "--json"});
  INFO(describe(repaired));
  CHECK(repaired.exit_code == 0);
  CHECK(parse_json_output(repaired.out)["ok"].as_bool());
}

}  // namespace kasava::e2e
