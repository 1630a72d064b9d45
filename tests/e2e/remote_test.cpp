// Remote embedding models end to end: the real binary indexing and asking through an
// embeddings server on 127.0.0.1 that this test process runs (tests/unit/http_server.hpp),
// in the OpenAI and the Voyage shapes — what was sent (batches, input types, headers, never a
// secret file), the vector cache, chunks that fail kept as pending and sent again, dry runs,
// errors that name the key's variable but never the key, and the settings' provenance.
#include <algorithm>
#include <cctype>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <mutex>
#include <string>
#include <vector>

#include "harness.hpp"
#include "tests/unit/http_server.hpp"

namespace kasava::e2e {
namespace {

using test::HttpServer;
using test::RecordedRequest;
using test::Reply;

const std::string k_key = "sk-E2E-REMOTE-SECRET-4242";
constexpr int k_dims = 64;

// A deterministic embedding: a hashed bag of lower-cased words, L2-normalised, so equal texts
// get equal vectors and texts sharing words are near.
std::vector<double> embed_text(const std::string& text, int dims) {
  std::vector<double> vector(static_cast<std::size_t>(dims), 0.0);
  std::string word;
  auto flush = [&] {
    if (word.empty()) return;
    std::size_t hash = std::hash<std::string>{}(word);
    vector[hash % static_cast<std::size_t>(dims)] += (hash >> 20) % 2 != 0U ? 1.0 : -1.0;
    word.clear();
  };
  for (const char c : text) {
    if (std::isalnum(static_cast<unsigned char>(c)) != 0) {
      word += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    } else {
      flush();
    }
  }
  flush();
  double norm = 0;
  for (const double v : vector) norm += v * v;
  norm = norm > 0 ? std::sqrt(norm) : 1.0;
  for (double& v : vector) v /= norm;
  return vector;
}

// The inputs of an embeddings request body.
std::vector<std::string> inputs_of(const RecordedRequest& request) {
  std::vector<std::string> inputs;
  auto body = util::parse_json(request.body);
  if (!body) return inputs;
  for (const auto& input : (*body)["input"].as_array()) inputs.push_back(input.as_string());
  return inputs;
}

// The answer to an embeddings request: one vector per input, in the OpenAI/Voyage shape.
Reply embeddings_reply(const RecordedRequest& request, int dims) {
  auto body = util::parse_json(request.body);
  if (!body) return Reply::json(400, R"({"error":{"message":"malformed"}})");
  if (const auto asked = (*body)["output_dimension"].get_integer()) dims = static_cast<int>(*asked);
  std::string data = "[";
  std::size_t index = 0;
  for (const auto& input : (*body)["input"].as_array()) {
    if (index > 0) data += ',';
    data += R"({"object":"embedding","index":)" + std::to_string(index++) + R"(,"embedding":[)";
    bool first = true;
    for (const double v : embed_text(input.as_string(), dims)) {
      if (!first) data += ',';
      first = false;
      data += std::to_string(v);
    }
    data += "]}";
  }
  data += "]";
  return Reply::json(200, R"({"object":"list","data":)" + data + R"(,"usage":{"total_tokens":7}})");
}

// An embeddings server: answers every request, except those whose inputs contain `fail_word`
// (500, as a service that keeps failing for them).
class EmbeddingsServer {
public:
  EmbeddingsServer()
      : m_server([this](const RecordedRequest& request) { return answer(request); }) {}

  std::string base_url() const { return m_server.url() + "/v1"; }
  std::vector<RecordedRequest> requests() const { return m_server.requests(); }
  void fail_inputs_containing(const std::string& word) {
    std::lock_guard lock(m_mutex);
    m_fail_word = word;
  }
  HttpServer& server() { return m_server; }

  /// Every chunk's input sent so far, over all requests (without the one-input request a
  /// new index makes to learn the length of the vectors of a model it does not know).
  std::vector<std::string> all_inputs() const {
    std::vector<std::string> inputs;
    for (const auto& request : requests()) {
      for (auto& input : inputs_of(request)) {
        if (input != "dimension probe") inputs.push_back(std::move(input));
      }
    }
    return inputs;
  }

private:
  Reply answer(const RecordedRequest& request) {
    if (request.path != "/v1/embeddings") return Reply::json(404, R"({"error":{"message":"no"}})");
    std::string fail_word;
    {
      std::lock_guard lock(m_mutex);
      fail_word = m_fail_word;
    }
    if (!fail_word.empty()) {
      for (const auto& input : inputs_of(request)) {
        if (input.find(fail_word) != std::string::npos) {
          return Reply::json(500, R"({"error":{"message":"temporarily unavailable"}})");
        }
      }
    }
    return embeddings_reply(request, k_dims);
  }

  mutable std::mutex m_mutex;
  std::string m_fail_word;
  HttpServer m_server;  // last: its threads call answer() and use the members above
};

void write_project(const FixtureRepo& repo) {
  repo.write("auth/login.py",
             "def authenticate_user(username, password):\n"
             "    \"\"\"Checks a user's password against the stored hash.\"\"\"\n"
             "    return verify_hash(password, lookup(username))\n");
  repo.write("net/retry.go",
             "package net\n\n"
             "// RetryWithBackoff retries an operation with exponential backoff.\n"
             "func RetryWithBackoff(op func() error) error {\n"
             "\treturn op()\n"
             "}\n");
  repo.write("docs/guide.md", "# Guide\n\nHow to deploy the service to production.\n");
  repo.write(".env", "DATABASE_PASSWORD=hunter2-very-secret\n");
  repo.write("deploy/id_rsa",
             "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n"
             "-----END OPENSSH PRIVATE KEY-----\n");
  repo.write("config/settings.yaml",
             "tls:\n  key: |\n    -----BEGIN RSA PRIVATE KEY-----\n    MIIEow\n"
             "    -----END RSA PRIVATE KEY-----\n");
}

RunOptions openai_env(const EmbeddingsServer& server, const TempDir& cache) {
  RunOptions options;
  options.set_env("KASAVA_MODEL", "openai:test-embed");
  options.set_env("KASAVA_OPENAI_BASE_URL", server.base_url());
  options.set_env("OPENAI_API_KEY", k_key);
  options.set_env("XDG_CACHE_HOME", cache.path());
  options.set_env("KASAVA_RETRIES", "1");  // failures show up at once, not after backoff
  return options;
}

bool any_contains(const std::vector<std::string>& texts, const std::string& needle) {
  return std::any_of(texts.begin(), texts.end(),
                     [&](const std::string& text) { return text.find(needle) != std::string::npos; });
}

TEST_CASE("remote: index and ask through an OpenAI-compatible server") {
  EmbeddingsServer server;
  TempDir cache("cache");
  FixtureRepo repo;
  write_project(repo);
  repo.commit_all("project");
  const RunOptions env = openai_env(server, cache);

  const auto indexed = repo.kasava({"index", "--json"}, env);
  INFO(describe(indexed));
  REQUIRE(indexed.exit_code == 0);
  const auto summary = parse_json_output(indexed.out);
  CHECK(summary["model"].as_string() == "openai:test-embed");
  CHECK(summary["embedding"]["pending"].get_integer() == 0);
  const std::int64_t sent = summary["embedding"]["sent"].as_integer();
  CHECK(sent == summary["chunks"].as_integer());
  CHECK(summary["skipped_by_reason"]["secret"].get_integer() == 3);

  // What went over the wire: the key as a bearer token, batches within the limit, no
  // input_type (an OpenAI server has none), and nothing of the secret files.
  const auto requests = server.requests();
  REQUIRE(!requests.empty());
  for (const auto& request : requests) {
    CHECK(request.method == "POST");
    CHECK(request.path == "/v1/embeddings");
    CHECK(request.header("authorization") == "Bearer " + k_key);
    CHECK(inputs_of(request).size() <= 128);
    CHECK(request.body.find("input_type") == std::string::npos);
  }
  const auto inputs = server.all_inputs();
  CHECK(any_contains(inputs, "authenticate_user"));
  CHECK(!any_contains(inputs, "hunter2"));
  CHECK(!any_contains(inputs, "PRIVATE KEY"));
  CHECK(!any_contains(inputs, "MIIEow"));

  // The query is embedded through the same server, and the index remembers its model: no
  // KASAVA_MODEL needed to ask it.
  RunOptions ask_env = env;
  ask_env.unset_env.push_back("KASAVA_MODEL");
  ask_env.env.erase("KASAVA_MODEL");
  const std::size_t before = server.requests().size();
  const auto asked = repo.kasava({"ask", "check the user password", "--json", "--mode", "semantic"}, ask_env);
  INFO(describe(asked));
  REQUIRE(asked.exit_code == 0);
  CHECK(result_paths(parse_json_output(asked.out)).front() == "auth/login.py");
  CHECK(server.requests().size() == before + 1);
  CHECK(inputs_of(server.requests().back()) == std::vector<std::string>{"check the user password"});

  // Nothing of the key in the index file.
  CHECK(repo.read(".kasava/index.db").find(k_key) == std::string::npos);

  // `kasava index` keeps the index's model too; `--model builtin` switches back, saying so.
  const auto again = repo.kasava({"index", "--json"}, ask_env);
  INFO(describe(again));
  REQUIRE(again.exit_code == 0);
  CHECK(parse_json_output(again.out)["model"].as_string() == "openai:test-embed");
  CHECK(parse_json_output(again.out)["parsed"].get_integer() == 0);
  const auto back = repo.kasava({"index", "--json", "--model", "builtin"}, ask_env);
  INFO(describe(back));
  REQUIRE(back.exit_code == 0);
  CHECK(parse_json_output(back.out)["model"].as_string().rfind("builtin:", 0) == 0);
  CHECK(back.err.find("re-embedding everything") != std::string::npos);

  const auto verified = repo.kasava({"verify"}, env);
  INFO(describe(verified));
  CHECK(verified.exit_code == 0);
}

TEST_CASE("remote: Voyage gets input types, an output dimension and its key") {
  EmbeddingsServer server;
  TempDir cache("cache");
  FixtureRepo repo;
  write_project(repo);
  repo.commit_all("project");
  RunOptions env;
  env.set_env("KASAVA_VOYAGE_BASE_URL", server.base_url());
  env.set_env("XDG_CACHE_HOME", cache.path());
  env.set_env("KASAVA_DIMENSIONS", "32");

  // Without a key: a clear error naming the variable, nothing sent, no index.
  const auto keyless = repo.kasava({"index", "--model", "voyage:voyage-code-3"}, env);
  INFO(describe(keyless));
  CHECK(keyless.exit_code == 2);
  CHECK(keyless.err.find("VOYAGE_API_KEY") != std::string::npos);
  CHECK(server.requests().empty());
  CHECK(!repo.exists(".kasava/index.db"));

  env.set_env("VOYAGE_API_KEY", k_key);
  const auto indexed = repo.kasava({"index", "--model", "voyage:voyage-code-3", "--json"}, env);
  INFO(describe(indexed));
  REQUIRE(indexed.exit_code == 0);
  CHECK(parse_json_output(indexed.out)["model"].as_string() == "voyage:voyage-code-3@32");
  for (const auto& request : server.requests()) {
    auto body = util::parse_json(request.body);
    REQUIRE(body);
    CHECK((*body)["model"].as_string() == "voyage-code-3");
    CHECK((*body)["input_type"].as_string() == "document");
    CHECK((*body)["output_dimension"].get_integer() == 32);
    CHECK(request.header("authorization") == "Bearer " + k_key);
  }
  const auto status = repo.kasava({"status", "--json"}, env);
  REQUIRE(status.exit_code == 0);
  const auto state = parse_json_output(status.out);
  CHECK(state["dimensions"].get_integer() == 32);
  CHECK(state["api_keys"]["VOYAGE_API_KEY"].as_string() == "set");
  CHECK(status.out.find(k_key) == std::string::npos);

  const auto asked = repo.kasava({"ask", "retry with backoff", "--model", "voyage:voyage-code-3",
                                  "--json"}, env);
  INFO(describe(asked));
  REQUIRE(asked.exit_code == 0);
  auto last = util::parse_json(server.requests().back().body);
  REQUIRE(last);
  CHECK((*last)["input_type"].as_string() == "query");
}

TEST_CASE("remote: a rejected key stops the run with the variable to set, never the key") {
  HttpServer server([](const RecordedRequest&) {
    return Reply::json(401, R"({"error":{"message":"Incorrect API key provided: sk-E2E-REMOTE-SECRET-4242"}})");
  });
  TempDir cache("cache");
  RunOptions env;
  env.set_env("KASAVA_OPENAI_BASE_URL", server.url() + "/v1");
  env.set_env("OPENAI_API_KEY", k_key);
  env.set_env("XDG_CACHE_HOME", cache.path());
  // A model of known vector length fails at its first batch, another at the request that
  // learns the length.
  for (const auto& model : {"openai:text-embedding-3-small", "openai:unknown-size-model"}) {
    FixtureRepo repo;
    write_project(repo);
    repo.commit_all("project");
    const auto result = repo.kasava({"index", "--model", model}, env);
    INFO(describe(result));
    CHECK(result.exit_code == 2);
    CHECK(result.err.find("OPENAI_API_KEY") != std::string::npos);
    CHECK(result.err.find(k_key) == std::string::npos);
    CHECK(result.out.find(k_key) == std::string::npos);
    CHECK(lines_of(result.err).size() == 1);
    // Whatever was committed before the stop is a sound index.
    if (repo.exists(".kasava/index.db")) CHECK(repo.kasava({"verify"}, env).exit_code == 0);
  }
}

TEST_CASE("remote: chunks that fail are kept as pending, searchable by words, and sent again") {
  EmbeddingsServer server;
  TempDir cache("cache");
  FixtureRepo repo;
  write_project(repo);
  repo.commit_all("project");
  // Enough chunks for several requests (at most 128 inputs each), so one can fail alone.
  for (int i = 0; i < 300; ++i) {
    repo.write("gen/module" + std::to_string(i) + ".py",
               "def handler_" + std::to_string(i) + "(event):\n    return event\n");
  }
  repo.commit_all("generated");
  const RunOptions env = openai_env(server, cache);

  server.fail_inputs_containing("RetryWithBackoff");
  const auto first = repo.kasava({"index", "--json"}, env);
  INFO(describe(first));
  REQUIRE(first.exit_code == 0);
  const auto summary = parse_json_output(first.out);
  const std::int64_t pending = summary["embedding"]["pending"].as_integer();
  CHECK(pending >= 1);
  CHECK(pending < summary["chunks"].as_integer());
  CHECK(first.err.find("no vector yet") != std::string::npos);

  // The index is sound, the status says so, and the failed file is still found by words.
  CHECK(repo.kasava({"verify"}, env).exit_code == 0);
  const auto status = repo.kasava({"status", "--json"}, env);
  CHECK(parse_json_output(status.out)["pending_vectors"].get_integer() == pending);
  const auto lexical = repo.kasava({"ask", "RetryWithBackoff", "--json", "--no-refresh"}, env);
  REQUIRE(lexical.exit_code == 0);
  CHECK(result_paths(parse_json_output(lexical.out)).front() == "net/retry.go");

  // The service recovers: the next run sends only the pending chunks, and nothing is left.
  server.fail_inputs_containing("");
  const std::size_t before = server.all_inputs().size();
  const auto second = repo.kasava({"index", "--json"}, env);
  INFO(describe(second));
  REQUIRE(second.exit_code == 0);
  const auto after = parse_json_output(second.out);
  CHECK(after["embedding"]["retried"].get_integer() == pending);
  CHECK(after["embedding"]["pending"].get_integer() == 0);
  CHECK(server.all_inputs().size() - before == static_cast<std::size_t>(pending));
  CHECK(repo.kasava({"verify"}, env).exit_code == 0);
  const auto semantic =
      repo.kasava({"ask", "retry backoff", "--json", "--mode", "semantic", "--no-refresh"}, env);
  REQUIRE(semantic.exit_code == 0);
  CHECK(result_paths(parse_json_output(semantic.out)).front() == "net/retry.go");
}

TEST_CASE("remote: the vector cache spares a rebuild and another repository with the same files") {
  EmbeddingsServer server;
  TempDir cache("cache");
  FixtureRepo repo;
  write_project(repo);
  repo.commit_all("project");
  const RunOptions env = openai_env(server, cache);
  REQUIRE(repo.kasava({"index"}, env).exit_code == 0);
  const std::size_t first_inputs = server.all_inputs().size();
  REQUIRE(first_inputs > 0);

  const auto rebuilt = repo.kasava({"index", "--rebuild", "--json"}, env);
  INFO(describe(rebuilt));
  REQUIRE(rebuilt.exit_code == 0);
  const auto summary = parse_json_output(rebuilt.out);
  CHECK(summary["embedding"]["sent"].get_integer() == 0);
  CHECK(summary["embedding"]["cached"].get_integer() == summary["chunks"].get_integer());
  CHECK(server.all_inputs().size() == first_inputs);

  FixtureRepo other;
  write_project(other);
  other.write("extra.py", "def brand_new_function():\n    return 42\n");
  other.commit_all("other");
  const auto indexed = other.kasava({"index", "--json"}, env);
  INFO(describe(indexed));
  REQUIRE(indexed.exit_code == 0);
  const auto other_summary = parse_json_output(indexed.out);
  CHECK(other_summary["embedding"]["sent"].get_integer() == 1);
  CHECK(server.all_inputs().back().find("brand_new_function") != std::string::npos);
}

TEST_CASE("remote: --dry-run says what would be sent and sends and writes nothing") {
  EmbeddingsServer server;
  TempDir cache("cache");
  FixtureRepo repo;
  write_project(repo);
  repo.commit_all("project");
  const RunOptions env = openai_env(server, cache);
  const auto dry = repo.kasava({"index", "--dry-run"}, env);
  INFO(describe(dry));
  REQUIRE(dry.exit_code == 0);
  CHECK(dry.out.find("would send ") != std::string::npos);
  CHECK(dry.out.find("tokens") != std::string::npos);
  CHECK(server.requests().empty());
  CHECK(!repo.exists(".kasava/index.db"));

  const auto json = repo.kasava({"index", "--dry-run", "--json"}, env);
  REQUIRE(json.exit_code == 0);
  const auto summary = parse_json_output(json.out);
  CHECK(summary["dry_run"].as_bool());
  const std::int64_t would_send = summary["embedding"]["would_send"].as_integer();
  CHECK(would_send > 0);
  CHECK(summary["embedding"]["estimated_tokens"].as_integer() > would_send);
  CHECK(server.requests().empty());

  // After a real run, a dry run has nothing left to send.
  REQUIRE(repo.kasava({"index"}, env).exit_code == 0);
  CHECK(server.all_inputs().size() == static_cast<std::size_t>(would_send));
  const auto again = repo.kasava({"index", "--dry-run", "--json"}, env);
  CHECK(parse_json_output(again.out)["embedding"]["would_send"].get_integer() == 0);
}

TEST_CASE("remote: when the service is down, ask answers by words with a warning") {
  EmbeddingsServer server;
  TempDir cache("cache");
  FixtureRepo repo;
  write_project(repo);
  repo.commit_all("project");
  const RunOptions env = openai_env(server, cache);
  REQUIRE(repo.kasava({"index"}, env).exit_code == 0);
  server.fail_inputs_containing("password");
  const auto asked = repo.kasava({"ask", "user password", "--json", "--no-refresh"}, env);
  INFO(describe(asked));
  CHECK(asked.exit_code == 0);
  CHECK(asked.err.find("by words only") != std::string::npos);
  CHECK(result_paths(parse_json_output(asked.out)).front() == "auth/login.py");
}

TEST_CASE("settings: flags beat the environment, which beats the repository's and the user's config") {
  TempDir home("home");
  FixtureRepo repo;
  write_project(repo);
  repo.write(".kasava/config", "# this repository's search model\nmodel = openai:from-repo\n"
                               "answer_model = anthropic:from-repo\n"
                               "openai_base_url = http://attacker.invalid/v1\n");
  repo.commit_all("project");
  RunOptions env;
  env.set_env("XDG_CONFIG_HOME", home.path());
  std::filesystem::create_directories(home / "kasava");
  std::ofstream(home / "kasava/config") << "model = openai:from-user\ndimensions = 128\nmodle = x\n";

  const auto status = repo.kasava({"index", "--dry-run", "--json"}, env);
  INFO(describe(status));
  REQUIRE(status.exit_code == 0);
  // The repository may not choose a remote model: the user's own applies.
  CHECK(parse_json_output(status.out)["model"].as_string() == "openai:from-user@128");
  CHECK(status.err.find("ignoring model 'openai:from-repo'") != std::string::npos);
  // The endpoint in the repository's config is not used, and the unknown key is named.
  CHECK(status.err.find("ignoring 'openai_base_url'") != std::string::npos);
  CHECK(status.err.find("unknown setting 'modle'") != std::string::npos);
  CHECK(status.err.find("did you mean 'model'?") != std::string::npos);

  env.set_env("KASAVA_MODEL", "openai:from-env");
  CHECK(parse_json_output(repo.kasava({"index", "--dry-run", "--json"}, env).out)["model"].as_string() ==
        "openai:from-env@128");
  CHECK(parse_json_output(
            repo.kasava({"index", "--dry-run", "--json", "--model", "openai:from-flag"}, env).out)["model"]
            .as_string() == "openai:from-flag@128");

  // A setting that does not fit the model is an error naming where it came from.
  RunOptions int8 = env;
  int8.set_env("KASAVA_OUTPUT_DTYPE", "int8");
  const auto misfit = repo.kasava({"index", "--dry-run"}, int8);
  CHECK(misfit.exit_code == 2);
  CHECK(misfit.err.find("(from KASAVA_OUTPUT_DTYPE) applies to voyage: models only") != std::string::npos);

  // A broken config is an error naming the file and line.
  repo.write(".kasava/config", "model voyage\n");
  const auto broken = repo.kasava({"index", "--dry-run"}, env);
  CHECK(broken.exit_code == 2);
  CHECK(broken.err.find(".kasava/config', line 1") != std::string::npos);
}

TEST_CASE("settings: status shows each setting, where it came from, and keys only as set") {
  FixtureRepo repo;
  write_project(repo);
  repo.commit_all("project");
  REQUIRE(repo.kasava({"index"}).exit_code == 0);
  repo.write(".kasava/config", "answer_model = anthropic:claude-test\n");
  RunOptions env;
  env.set_env("ANTHROPIC_API_KEY", k_key);
  env.set_env("KASAVA_ALLOW_REPOSITORY_MODELS", "true");  // else the repository's is ignored
  const auto status = repo.kasava({"status", "--json"}, env);
  INFO(describe(status));
  REQUIRE(status.exit_code == 0);
  const auto state = parse_json_output(status.out);
  CHECK(state["settings"]["model"]["value"].as_string() == "builtin");
  CHECK(state["settings"]["model"]["origin"].as_string() == "default");
  CHECK(state["settings"]["answer_model"]["value"].as_string() == "anthropic:claude-test");
  CHECK(state["settings"]["answer_model"]["origin"].as_string() == "repository config");
  CHECK(state["settings"]["answer_model"]["source"].as_string() ==
        repo.path(".kasava/config") + ":1");
  CHECK(state["api_keys"]["ANTHROPIC_API_KEY"].as_string() == "set");
  CHECK(state["api_keys"]["OPENAI_API_KEY"].as_string() == "unset");
  CHECK(status.out.find(k_key) == std::string::npos);
  const auto text = repo.kasava({"status"}, env);
  CHECK(text.out.find("answer_model = anthropic:claude-test  (repository config: ") != std::string::npos);
  CHECK(text.out.find("ANTHROPIC_API_KEY set") != std::string::npos);
  CHECK(text.out.find(k_key) == std::string::npos);
}

}  // namespace
}  // namespace kasava::e2e
