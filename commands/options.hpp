// Plain option structs, one per subcommand, filled by the CLI definition in cli/ and read by
// the commands. No CLI library here: commands and tests build these directly.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace kasava::commands {

enum class ColorChoice { automatic, always, never };

/// Options every command accepts.
struct GlobalOptions {
  std::string directory;   ///< -C PATH|URL: run in PATH, or in URL's clone; "" = here
  std::string url;         ///< the URL -C named ("" = none), set by the setup (commands/setup.hpp)
  std::string index_path;  ///< --index / KASAVA_INDEX; "" = find it
  std::string model;       ///< --model: builtin, voyage:<m>, openai:<m> or a .kmodel file; "" = not given
  ColorChoice color = ColorChoice::automatic;
  bool quiet = false;      ///< --quiet: no progress, no warnings
};

struct IndexCommandOptions {
  std::string target;      ///< path or URL; "" = the current directory
  std::string revision;    ///< --rev; "" = the working tree
  std::uint64_t max_file_size = 0;  ///< 0 = as the index was built last time (else 1 MiB)
  unsigned threads = 0;    ///< 0 = one per core
  bool rebuild = false;    ///< --rebuild: start from an empty index
  bool dry_run = false;    ///< --dry-run: say what would be indexed and sent; write and send nothing
  bool json = false;
  std::string store;       ///< --store URL: publish to this shared store; "" = KASAVA_STORE, config
  std::string name;        ///< --name org/repo: the repository's name in the store; "" = from origin
  std::string ref;         ///< --ref NAME: the ref published in the store; "" = --rev, else the branch
};

struct AskCommandOptions {
  std::string query;
  int limit = 10;
  std::string language;
  std::string path_glob;
  std::string mode = "hybrid";
  double min_score = 0.0;
  bool json = false;
  bool jsonl = false;      ///< --jsonl: one JSON object per result, one per line
  bool no_refresh = false;
  bool answer = false;       ///< --answer: a chat model writes an answer from the results
  std::string answer_model;  ///< --answer-model: anthropic:<model> or openai:<model>; "" = not given
  std::string store;         ///< --store URL: ask this shared store ("" = KASAVA_STORE, else the local index)
  std::vector<std::string> repositories;  ///< --repo GLOB (repeatable): only these repositories of the store
  std::string ref;           ///< --ref REF: this ref of each repository ("" = its latest publish)
};

struct StatusCommandOptions {
  bool json = false;
  std::string store;  ///< --store URL: the shared store's status instead ("" = KASAVA_STORE, else none)
};

/// `kasava mcp` has no options of its own (the index is found as for ask).
struct McpCommandOptions {
  std::string store;  ///< --store URL: serve this shared store ("" = KASAVA_STORE, else the local index)
};

} // namespace kasava::commands
