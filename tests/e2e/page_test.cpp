// The search page of `kasava serve` in real browsers: Debian's chromium and firefox-esr,
// headless, driven by tests/browser/page_test.mjs (puppeteer-core), against the real binary
// serving a fixture's index on a loopback port. The script reports what it saw; the checks
// are here. Screenshots (light, dark, phone) land in <build>/test-artifacts/ for a person to
// look at.
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <regex>
#include <string>
#include <thread>
#include <vector>

#include "tests/e2e/background.hpp"
#include "tests/e2e/harness.hpp"

namespace kasava::e2e {
namespace {

namespace fs = std::filesystem;

// A program found in PATH, or "" when there is none.
std::string find_in_path(const std::string& name) {
  const char* path = std::getenv("PATH");
  std::string folders = path ? path : "/usr/bin:/bin";
  std::size_t start = 0;
  while (start <= folders.size()) {
    const std::size_t end = std::min(folders.find(':', start), folders.size());
    const std::string candidate = folders.substr(start, end - start) + "/" + name;
    if (end > start && ::access(candidate.c_str(), X_OK) == 0) return candidate;
    start = end + 1;
  }
  return "";
}

enum class Browser { chromium, firefox };

// What the browser test needs, each missing one a failure that says how to install it (the
// test never skips: CI must run it).
struct BrowserTools {
  Browser browser = Browser::chromium;
  std::string node;
  std::string executable;  ///< chromium or firefox
  std::string script;
};

BrowserTools browser_tools(Browser browser) {
  BrowserTools tools;
  tools.browser = browser;
  tools.node = find_in_path("node");
  if (tools.node.empty()) FAIL("node is missing: install Debian's nodejs (scripts/setup does)");
  const bool chromium = browser == Browser::chromium;
  const char* variable = chromium ? "KASAVA_TEST_CHROMIUM" : "KASAVA_TEST_FIREFOX";
  const std::string package = chromium ? "chromium" : "firefox-esr";
  const char* given = std::getenv(variable);
  tools.executable = given && *given ? given : find_in_path(package);
  if (tools.executable.empty()) {
    FAIL(package << " is missing: apt-get install " << package << " (scripts/test installs it), or set "
                 << variable << " to its binary");
  }
  if (::access(tools.executable.c_str(), X_OK) != 0) {
    FAIL(package << " '" << tools.executable << "' is not an executable file");
  }
  const std::string folder = std::string(KASAVA_SOURCE_DIR) + "/tests/browser";
  tools.script = folder + "/page_test.mjs";
  if (!fs::exists(folder + "/node_modules/puppeteer-core/package.json")) {
    FAIL("puppeteer-core is missing: run scripts/test, or (cd tests/browser && npm ci)");
  }
  return tools;
}

// Where screenshots go: test-artifacts/ beside the binary under test, in the build tree.
std::string artifacts_folder() {
  return (fs::path(KASAVA_BINARY).parent_path() / "test-artifacts").string();
}

// A repository with one function in Python and one in JavaScript that the query finds; the
// Python one's doc comment holds markup that must reach the page as text, not elements.
void write_page_fixture(const FixtureRepo& repo) {
  repo.write("src/config.py",
             "\"\"\"Reading the service's settings.\"\"\"\n\n\n"
             "def parse_config(text):\n"
             "    \"\"\"Parse config lines <img src=x onerror=\"window.kasavaInjected=true\"> "
             "into a dict of settings.\"\"\"\n"
             "    settings = {}\n"
             "    for line in text.splitlines():\n"
             "        name, _, value = line.partition(\"=\")\n"
             "        settings[name.strip()] = value.strip()\n"
             "    return settings\n\n\n"
             "def write_report(rows):\n"
             "    \"\"\"Print a table of rows.\"\"\"\n"
             "    for row in rows:\n"
             "        print(row)\n");
  repo.write("web/config.js",
             "// The browser side of the settings.\n\n"
             "/** Parse config text sent by the server into an object. */\n"
             "export function parseConfig(text) {\n"
             "  const settings = {};\n"
             "  for (const line of text.split('\\n')) {\n"
             "    const [name, value] = line.split('=');\n"
             "    settings[name.trim()] = (value || '').trim();\n"
             "  }\n"
             "  return settings;\n"
             "}\n");
  repo.commit_all("config parsing on both sides");
}

// `kasava serve` on a free loopback port; the URL once it says it listens.
class Server {
public:
  Server(const FixtureRepo& repo, std::vector<std::string> extra, const std::string& label)
      : m_logs(label), m_process(arguments(std::move(extra)), repo.root(), m_logs / "serve") {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    const std::regex listening(R"(on (http://127\.0\.0\.1:[0-9]+/))");
    std::smatch match;
    std::string out;
    while (true) {
      out = m_process.out();
      if (std::regex_search(out, match, listening)) break;
      INFO("kasava serve ended or never said where it listens\nstdout: " << out
                                                                          << "\nstderr: " << m_process.err());
      REQUIRE(m_process.running());
      REQUIRE(std::chrono::steady_clock::now() < deadline);
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    m_url = match[1].str();
  }
  const std::string& url() const { return m_url; }
  std::string err() const { return m_process.err(); }

private:
  static std::vector<std::string> arguments(std::vector<std::string> extra) {
    std::vector<std::string> args = {"serve", "--listen", "127.0.0.1:0"};
    args.insert(args.end(), extra.begin(), extra.end());
    return args;
  }
  TempDir m_logs;
  BackgroundKasava m_process;
  std::string m_url;
};

// Runs the browser script; the report it prints.
util::JsonValue run_browser(const BrowserTools& tools, const std::string& url,
                            const std::string& screenshots, std::vector<std::string> extra) {
  std::vector<std::string> args = {
      tools.script, "--url", url, tools.browser == Browser::chromium ? "--chromium" : "--firefox",
      tools.executable, "--screenshots", screenshots, "--query", "parse config"};
  args.insert(args.end(), extra.begin(), extra.end());
  RunOptions options;
  options.timeout = std::chrono::seconds(100);
  const RunResult result = run_program(tools.node, args, options);
  INFO(describe(result));
  REQUIRE_FALSE(result.timed_out);
  REQUIRE(result.exit_code == 0);
  return parse_json_output(result.out);
}

std::vector<std::string> strings_of(const util::JsonValue& results, const std::string& key) {
  std::vector<std::string> values;
  if (const auto* array = results.get_array()) {
    for (const auto& result : *array) {
      const auto* text = result[key].get_string();
      values.push_back(text ? *text : std::string());
    }
  }
  return values;
}

std::vector<std::string> string_array(const util::JsonValue& array) {
  std::vector<std::string> values;
  for (const auto& value : array.as_array()) values.push_back(value.as_string());
  return values;
}

bool contains(const std::vector<std::string>& values, const std::string& value) {
  return std::find(values.begin(), values.end(), value) != values.end();
}

// True when the file starts with PNG's signature.
bool is_png(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  char magic[8] = {};
  file.read(magic, sizeof magic);
  return file.gcount() == 8 && std::string(magic, 8) == std::string("\x89PNG\r\n\x1a\n", 8);
}

void check_screenshot(const std::string& path) {
  INFO(path);
  CHECK(is_png(path));
  CHECK(fs::file_size(path) > 10'000);  // a page with results, not an empty image
}

// What every browser must show of the page: it loads clean, typing finds both definitions
// with the query's words marked and markup shown as text, the filters narrow the results,
// and the keyboard selects and opens one.
void check_searching(const util::JsonValue& report) {
  // The page loads clean: served by the binary, under a policy that forbids inline script.
  CHECK(report["page_status"].get_integer() == 200);
  const auto* policy = report["page_headers"]["content-security-policy"].get_string();
  REQUIRE(policy != nullptr);
  CHECK(policy->find("script-src 'self'") != std::string::npos);
  CHECK(string_array(report["console_errors"]).empty());
  CHECK(string_array(report["page_errors"]).empty());
  CHECK(string_array(report["failed_requests"]).empty());

  // '/' focuses the box; typing (no Enter) searches; both definitions are found, marked.
  CHECK(report["slash_focuses"].get_bool() == true);
  const auto symbols = strings_of(report["results"], "symbol");
  CHECK(contains(symbols, "parse_config"));
  CHECK(contains(symbols, "parseConfig"));
  bool marked = false;
  for (const auto& result : report["results"].as_array()) {
    if (result["symbol"].as_string() == "parse_config") {
      marked = contains(string_array(result["marks"]), "parse_config") ||
               contains(string_array(result["marks"]), "parse");
      // The markup in the doc comment is shown as text.
      CHECK(result["text"].as_string().find("<img src=x onerror=") != std::string::npos);
    }
  }
  CHECK(marked);
  CHECK(report["injected_elements"].get_integer() == 0);
  CHECK(report["injected_script_ran"].get_bool() == false);
  CHECK(contains(string_array(report["language_options"]), "python"));

  // The language filter keeps Python only; the path filter keeps web/ only.
  const auto languages = strings_of(report["lang_filtered"], "language");
  REQUIRE_FALSE(languages.empty());
  for (const auto& language : languages) CHECK(language == "python");
  CHECK(contains(strings_of(report["lang_filtered"], "symbol"), "parse_config"));
  const auto paths = strings_of(report["path_filtered"], "path");
  REQUIRE_FALSE(paths.empty());
  for (const auto& path : paths) CHECK(path.rfind("web/", 0) == 0);

  // Down, down, up selects the first result; Enter opens the lines around it from
  // /api/file: the whole definition and the lines before it, its own lines marked.
  CHECK(report["selected_after_keys"].get_integer() == 0);
  CHECK(report["focus_after_keys"].as_string() == "q");
  const auto& opened = report["opened"];
  const auto first_symbol = symbols.front();
  CHECK(opened["symbol"].as_string() == first_symbol);
  CHECK(opened["first_line"].get_integer() == 1);
  const std::string& text = opened["text"].as_string();
  const std::string definition = first_symbol == "parseConfig" ? "export function parseConfig(text) {"
                                                               : "def parse_config(text):";
  CHECK(text.find(definition) != std::string::npos);
  CHECK(opened["hit_lines"].get_integer() >= 7);
  CHECK(report["url_after_search"].as_string().find("q=parse+config") != std::string::npos);

}

TEST_CASE("serve page: typing shows results, filters narrow them, the keyboard opens lines") {
  const BrowserTools tools = browser_tools(Browser::chromium);
  FixtureRepo repo;
  write_page_fixture(repo);
  REQUIRE(repo.kasava({"index"}).exit_code == 0);
  Server server(repo, {}, "page");
  const std::string screenshots = artifacts_folder();
  const auto report = run_browser(tools, server.url(), screenshots,
                                  {"--lang", "python", "--path", "web/**"});
  INFO(report.dump());
  check_searching(report);

  // Themes follow the browser; a phone's width does not scroll sideways.
  CHECK(report["light_background"].as_string() == "rgb(255, 255, 255)");
  CHECK(report["dark_background"].as_string() != "rgb(255, 255, 255)");
  CHECK(report["phone_overflows"].get_bool() == false);
  for (const char* name : {"search-page-light.png", "search-page-dark.png", "search-page-phone-dark.png"}) {
    check_screenshot(screenshots + "/" + name);
  }
}

TEST_CASE("serve page: with a token file the page asks for a token, again after a wrong one, then searches") {
  const BrowserTools tools = browser_tools(Browser::chromium);
  FixtureRepo repo;
  write_page_fixture(repo);
  REQUIRE(repo.kasava({"index"}).exit_code == 0);
  TempDir secrets("tokens");
  const std::string token = "page-test-token-0123456789";
  {
    std::ofstream file(secrets / "tokens");
    file << token << "\n";
  }
  Server server(repo, {"--token-file", secrets / "tokens"}, "page-token");
  const std::string screenshots = artifacts_folder() + "/token";
  const auto report = run_browser(tools, server.url(), screenshots,
                                  {"--token", token, "--wrong-token", "not-the-token-0123456789"});
  INFO(report.dump());

  CHECK(report["page_status"].get_integer() == 200);  // the page itself needs no token
  CHECK(report["token_prompt_shown"].get_bool() == true);
  CHECK(report["token_input_focused"].get_bool() == true);
  CHECK(report["token_prompt_again"].get_bool() == true);
  CHECK(report["wrong_token_kept"].get_bool() == false);
  CHECK(report["wrong_token_message"].as_string().find("did not accept") != std::string::npos);
  CHECK(report["token_stored"].get_bool() == true);
  const auto symbols = strings_of(report["results"], "symbol");
  CHECK(contains(symbols, "parse_config"));
  CHECK(contains(symbols, "parseConfig"));
  CHECK(report["opened"]["text"].as_string().find("parse") != std::string::npos);
  // The only error the console shows is the 401 that asked for the token.
  for (const auto& error : string_array(report["console_errors"])) {
    CHECK(error.find("401") != std::string::npos);
  }
  CHECK(string_array(report["page_errors"]).empty());
  // The token never appears in the server's log.
  CHECK(server.err().find(token) == std::string::npos);
  check_screenshot(screenshots + "/search-page-token.png");
}

TEST_CASE("serve page: Firefox shows results, filters them and opens lines as Chromium does") {
  const BrowserTools tools = browser_tools(Browser::firefox);
  FixtureRepo repo;
  write_page_fixture(repo);
  REQUIRE(repo.kasava({"index"}).exit_code == 0);
  Server server(repo, {}, "page-firefox");
  const std::string screenshots = artifacts_folder() + "/firefox";
  const auto report = run_browser(tools, server.url(), screenshots,
                                  {"--lang", "python", "--path", "web/**"});
  INFO(report.dump());
  check_searching(report);
  check_screenshot(screenshots + "/search-page-light.png");
}

}  // namespace
}  // namespace kasava::e2e
