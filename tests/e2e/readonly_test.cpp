// End-to-end: an index its reader may not write — another user's, in a folder or on a file
// system that is read-only to them — is read as it is: `ask --index`, `status` and `verify`
// work and leave no -wal or -shm file behind. Run as root (CI), the reader is nobody.
#include <catch2/catch.hpp>

#include <filesystem>

#include "tests/e2e/fixtures.hpp"
#include "tests/e2e/harness.hpp"
#include "tests/e2e/unprivileged.hpp"

using namespace kasava::e2e;
using kasava::util::JsonValue;

namespace fs = std::filesystem;

namespace {

// No SQLite companion file beside the index: a reader that made one would leave it, owned by
// the reader, in a folder that is not theirs.
void check_no_companions(const std::string& index) {
  CHECK_FALSE(fs::exists(index + "-wal"));
  CHECK_FALSE(fs::exists(index + "-shm"));
  CHECK_FALSE(fs::exists(index + "-journal"));
}

void check_no_error(const RunResult& run) {
  INFO(describe(run));
  CHECK(run.err.find("kasava: error") == std::string::npos);
  CHECK(run.err.find("readonly database") == std::string::npos);
}

}  // namespace

TEST_CASE("read-only index: another user's index in a folder they cannot write is read as it is") {
  FixtureRepo repo;
  index_sample_project(repo);
  const std::string index = repo.index_path();
  check_no_companions(index);
  open_to_others(repo.root());
  if (!running_as_root()) {
    // The owner is the reader: take the write permissions away instead.
    make_read_only(index, repo.path(".kasava"));
  }
  // An unstaged edit: the reader's `ask` would refresh the index, and cannot.
  repo.append("internal/config/config.go", "\n// touched by the owner\n");
  const UnprivilegedReader reader(repo.root());

  const RunResult ask = reader.run({"--index", index, "ask", "parseConfig", "--json"});
  INFO(describe(ask));
  REQUIRE(ask.exit_code == 0);
  CHECK(parse_json_output(ask.out)["results"][0]["symbol"].as_string() == "parseConfig");
  check_no_error(ask);
  check_no_companions(index);

  const RunResult no_refresh =
      reader.run({"--index", index, "ask", "parseConfig", "--json", "--no-refresh"});
  INFO(describe(no_refresh));
  REQUIRE(no_refresh.exit_code == 0);
  CHECK(no_refresh.err.empty());
  check_no_companions(index);

  // Found by walking up from the repository, too.
  const RunResult status = reader.run({"status", "--json"});
  INFO(describe(status));
  REQUIRE(status.exit_code == 0);
  const JsonValue document = parse_json_output(status.out);
  CHECK(document["files"].get_integer() == static_cast<std::int64_t>(sample_file_count()));
  CHECK(document["stale_files"].get_integer() == std::int64_t{1});
  check_no_error(status);
  check_no_companions(index);

  const RunResult verify = reader.run({"verify", "--json"});
  INFO(describe(verify));
  REQUIRE(verify.exit_code == 0);
  const JsonValue report = parse_json_output(verify.out);
  CHECK(report["ok"].as_bool());
  CHECK(report["stale"].get_integer() == std::int64_t{1});
  check_no_error(verify);
  check_no_companions(index);

  // The owner still writes it afterwards: nothing the reader left stands in the way.
  if (!running_as_root()) {
    fs::permissions(repo.path(".kasava"), fs::perms::owner_all, fs::perm_options::add);
    fs::permissions(index, fs::perms::owner_write, fs::perm_options::add);
  }
  const RunResult refreshed = repo.kasava({"index", "--json"});
  INFO(describe(refreshed));
  REQUIRE(refreshed.exit_code == 0);
  CHECK(parse_json_output(refreshed.out)["parsed"].get_integer() == std::int64_t{1});
  check_no_companions(index);
}

TEST_CASE("read-only index: a copy in a read-only folder (0555, file 0444) is searched alone") {
  TempDir artifacts("artifact");
  std::string copy;
  {
    FixtureRepo repo;
    index_sample_project(repo);
    copy = copy_index(repo, artifacts);
  }
  make_read_only(copy, artifacts.path());
  const UnprivilegedReader reader(artifacts.path());
  for (const std::vector<std::string>& command :
       {std::vector<std::string>{"ask", "parseConfig", "--json"},
        std::vector<std::string>{"status", "--json"},
        std::vector<std::string>{"verify", "--json"}}) {
    std::vector<std::string> args = {"--index", copy};
    args.insert(args.end(), command.begin(), command.end());
    const RunResult run = reader.run(args);
    INFO(describe(run));
    CHECK(run.exit_code == 0);
    CHECK(run.err.empty());
    parse_json_output(run.out);
    check_no_companions(copy);
  }
}

TEST_CASE("read-only index: in a folder anyone may write, a reader leaves nothing of its own") {
  FixtureRepo repo;
  index_sample_project(repo);
  open_to_others(repo.root());
  // A shared folder (like /tmp) holding the owner's index, which only the owner may write.
  TempDir shared("shared");
  fs::permissions(shared.path(), fs::perms::all | fs::perms::sticky_bit);
  const std::string index = copy_index(repo, shared);
  fs::permissions(index, running_as_root() ? fs::perms::owner_read | fs::perms::owner_write |
                                                 fs::perms::group_read | fs::perms::others_read
                                           : fs::perms::owner_read | fs::perms::group_read |
                                                 fs::perms::others_read);
  repo.append("internal/config/config.go", "\n// touched by the owner\n");
  const UnprivilegedReader reader(repo.root());
  for (const std::vector<std::string>& command :
       {std::vector<std::string>{"ask", "parseConfig", "--json"},
        std::vector<std::string>{"status", "--json"},
        std::vector<std::string>{"verify", "--json"}}) {
    std::vector<std::string> args = {"--index", index};
    args.insert(args.end(), command.begin(), command.end());
    const RunResult run = reader.run(args);
    INFO(describe(run));
    CHECK(run.exit_code == 0);
    check_no_error(run);
    parse_json_output(run.out);
    // Nothing but the index: no -wal, -shm or lock file owned by the reader.
    std::vector<std::string> names;
    for (const auto& entry : fs::directory_iterator(shared.path())) {
      names.push_back(entry.path().filename().string());
    }
    CHECK(names == std::vector<std::string>{"index.db"});
  }
}
