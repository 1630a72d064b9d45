// The CLI definition: one table of subcommands (name, summary, what each needs set up before
// it runs, options, entry point), parsed by CLI11 into the plain option structs of
// commands/options.hpp; commands::run_command provides what the table says. The only file
// that includes CLI11. Errors from anywhere below end in the one catch in run().
#include "cli/app.hpp"

#include <CLI/CLI.hpp>
#include <charconv>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "cli/generate.hpp"
#include "commands/commands.hpp"
#include "commands/interrupt.hpp"
#include "commands/store_search.hpp"
#include "core/util/secrets.hpp"
#include "core/util/strings.hpp"

namespace kasava::cli {

using commands::ExitStatus;

namespace {

constexpr const char* k_version = "0.1.0";

using commands::Needs;

// Validators whose description (shown in --help) is CLI11's, with a message of our own: the
// built-in ones let NaN through (every comparison with it is false) and describe
// CLI::PositiveNumber's range as 0 to the largest double, all 309 digits of it.

/// --min-score: a number from 0 to 1; "nan" and "inf" are not.
CLI::Validator unit_interval() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        double value = 0.0;
        const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
        const bool number = error == std::errc() && end == text.data() + text.size();
        if (number && value >= 0.0 && value <= 1.0) return "";
        return "value '" + text + "' is not a number from 0 to 1";
      },
      "FLOAT in [0 - 1]");
}

/// --max-file-size: a whole number of bytes, at least 1.
CLI::Validator positive_byte_count() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        std::uint64_t value = 0;
        const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
        if (error == std::errc() && end == text.data() + text.size() && value > 0) return "";
        return "value '" + text + "' is not a positive whole number of bytes";
      },
      "POSITIVE");
}

/// The query of `ask`: an empty or blank one is a usage error, not a search for nothing.
CLI::Validator not_blank() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        return util::trim(text).empty() ? "the question is empty: ask in words or identifiers" : "";
      },
      "");
}

/// Every option struct, filled by the parser.
struct ParsedOptions {
  commands::GlobalOptions global;
  commands::IndexCommandOptions index;
  commands::AskCommandOptions ask;
  commands::StatusCommandOptions status;
  commands::VerifyCommandOptions verify;
  commands::UnpublishCommandOptions unpublish;
  commands::McpCommandOptions mcp;
  commands::ServeCommandOptions serve;
};

struct CommandSpec {
  const char* name;
  const char* summary;
  const char* examples;
  const char* notes;  ///< a paragraph after the examples in help and the man page, or ""
  Needs needs;        ///< what commands::run_command provides before `run`
  std::function<void(CLI::App&, ParsedOptions&)> define;
  std::function<ExitStatus(ParsedOptions&, commands::Context&, commands::Prepared&)> run;
  /// The command's say in its setup (commands::SetupHooks), or null.
  std::function<commands::SetupHooks(ParsedOptions&)> setup = nullptr;
};

const std::vector<CommandSpec>& command_table() {
  static const std::vector<CommandSpec> table = {
      {"index", "Index a repository, a directory or a URL (cloned into the cache)",
       "  kasava index                        # the repository you stand in\n"
       "  kasava index ~/src/project --json\n"
       "  kasava index --rev \"$CI_COMMIT_SHA\"  # a commit's tree, for CI\n"
       "  kasava index https://host/org/repo   # clone, then index\n"
       "  kasava -C https://host/org/repo ask \"retry\"   # then ask that clone from anywhere\n"
       "  kasava index --store postgresql://ci@db/kasava --rev \"$CI_COMMIT_SHA\" --name org/app",
       "Each chunk is stored with its vector from the built-in model, or from a remote one:\n"
       "  --model voyage:voyage-code-3   (VOYAGE_API_KEY; KASAVA_DIMENSIONS=256..2048)\n"
       "  --model openai:<model>         (any /v1/embeddings server: KASAVA_OPENAI_BASE_URL,\n"
       "                                  OPENAI_API_KEY when it needs one)\n"
       "Remote vectors are cached in $XDG_CACHE_HOME/kasava/vectors.db; files that look like\n"
       "secrets (.env, keys, credentials) are never sent; chunks that fail are kept without\n"
       "a vector and sent again by the next run. Settings also come from .kasava/config in\n"
       "the repository and $XDG_CONFIG_HOME/kasava/config (see `kasava status`).\n"
       "An index of an older kasava, or of another model, is rebuilt after a notice.\n"
       "With --store (or KASAVA_STORE, or `store` in your config, never a repository's), the\n"
       "index is then published to a shared PostgreSQL store: only the files it lacks are sent;\n"
       "if it cannot be reached the local index is still updated, and the exit status is 2.",
       Needs::writable_index,
       [](CLI::App& app, ParsedOptions& o) {
         app.add_option("target", o.index.target, "Path or URL to index (default: current directory)");
         app.add_option("--rev", o.index.revision, "Index the tree of this commit instead of the working tree");
         app.add_option("--max-file-size", o.index.max_file_size,
                        "Skip files larger than this many bytes (default: 1048576, or the index's "
                        "last setting); remembered for later refreshes")
             ->check(positive_byte_count());
         app.add_option("--threads", o.index.threads, "Parser threads (default: one per core)");
         app.add_flag("--rebuild", o.index.rebuild,
                      "Build the index anew, beside the old one, which it replaces when complete");
         app.add_flag("--dry-run", o.index.dry_run,
                      "Show what would be indexed and, for a remote model, sent (files, chunks, "
                      "estimated tokens); write and send nothing");
         app.add_flag("--json", o.index.json, "Print the summary as JSON on stdout");
         app.add_option("--store", o.index.store,
                        "Then publish to this shared PostgreSQL store (a libpq URI or key=value "
                        "string; default: KASAVA_STORE, else `store` in your config)");
         app.add_option("--name", o.index.name,
                        "The repository's name in the store (default: origin's owner/name, else "
                        "the folder's name)");
         app.add_option("--ref", o.index.ref,
                        "The ref's name in the store (default: --rev, else the branch; CI's "
                        "detached checkouts name their branch here)");
       },
       [](ParsedOptions& o, commands::Context& c, commands::Prepared& p) {
         return commands::run_index(o.index, c, p);
       },
       [](ParsedOptions& o) { return commands::index_setup(o.index); }},
      {"ask", "Find the places in the code that answer a question",
       "  kasava ask \"where is auth\"\n"
       "  kasava ask \"retry backoff\" --lang go --path 'internal/**' --limit 5\n"
       "  kasava ask parseConfig --json --min-score 0.5   # exit 1 when nothing matches\n"
       "  kasava ask \"undo the last change\" --mode semantic\n"
       "  kasava ask \"how are retries limited?\" --answer --answer-model anthropic:claude-sonnet-4-5\n"
       "  kasava ask --store postgresql://db/kasava \"validate jwt\" --repo 'org/*' --ref main",
       "Scores are in (0, 1], higher is better, never rise down the list and mean the\n"
       "same for every query, so --min-score can gate a CI job:\n"
       "  lexical   bm25 / (bm25 + 8): 0.5 is a BM25 score of 8\n"
       "  semantic  the cosine of the query's and the chunk's vectors, from 0 at 0.3\n"
       "            (unrelated text: not a result) to 1 at 1 (a clear match: ~0.4-0.6)\n"
       "  hybrid    1 - (1 - lexical)(1 - semantic); the order is a fitted ranker\n"
       "            over both sides' scores (leaning on words for an identifier)\n"
       "            and the file's evidence: its path and name against the query, the\n"
       "            subjects of the commits that changed it, its other matching places,\n"
       "            and its kind (tests, docs, examples, build files and generated files\n"
       "            rank lower unless the query names that kind)\n"
       "Chunks named exactly as an identifier of the query (parseConfig) come first; the\n"
       "first screen shows several files before a second place of one.\n"
       "With --store (or KASAVA_STORE), a shared PostgreSQL store is searched instead, with the\n"
       "same ranking and no repository or index here: every repository's latest published ref\n"
       "(--repo GLOB, repeatable, keeps the repositories it matches; --ref REF takes that ref of\n"
       "each). Results name their repository and ref (JSON: `repository`, `ref`, and `also_in`\n"
       "listing the other repository@ref holding the same file, such as a fork), grouped by\n"
       "repository on a terminal; snippets come from the store.",
       Needs::fresh_index,
       [](CLI::App& app, ParsedOptions& o) {
         app.add_option("query", o.ask.query, "The question, in words or identifiers")
             ->required()
             ->check(not_blank());
         app.add_option("-n,--limit", o.ask.limit, "Number of results")
             ->default_val(o.ask.limit)->check(CLI::Range(1, 10000));
         app.add_option("--lang", o.ask.language, "Only results in this language (e.g. python)");
         app.add_option("--path", o.ask.path_glob, "Only results whose path matches this glob");
         app.add_option("--mode", o.ask.mode,
                        "Ranking: hybrid (words and meaning, blended), semantic (meaning: the "
                        "built-in model) or lexical (words: BM25)")
             ->default_val(o.ask.mode)->check(CLI::IsMember({"hybrid", "semantic", "lexical"}));
         app.add_option("--min-score", o.ask.min_score, "Drop results scoring below this (0-1)")
             ->check(unit_interval());
         CLI::Option* json = app.add_flag("--json", o.ask.json, "Print results as one JSON document");
         CLI::Option* jsonl =
             app.add_flag("--jsonl", o.ask.jsonl, "Print one JSON object per result, one per line")
                 ->excludes(json);
         app.add_flag("--answer", o.ask.answer,
                      "Have a chat model write an answer from the results, streamed, citing "
                      "path:line, then list the places it was given")
             ->excludes(json)
             ->excludes(jsonl);
         app.add_option("--answer-model", o.ask.answer_model,
                        "Chat model for --answer: anthropic:<model> (ANTHROPIC_API_KEY) or "
                        "openai:<model> (OPENAI_API_KEY, KASAVA_OPENAI_BASE_URL); also "
                        "KASAVA_ANSWER_MODEL");
         app.add_flag("--no-refresh", o.ask.no_refresh, "Do not update the index before searching");
         app.add_option("--store", o.ask.store,
                        "Search this shared PostgreSQL store (a libpq URI or key=value string; "
                        "default: KASAVA_STORE, else the local index)");
         // One glob per --repo: otherwise CLI11 lets it take every word up to the next option
         // and eat the `--` that guards a question starting with a dash.
         app.add_option("--repo", o.ask.repositories,
                        "With --store: only repositories whose name matches this glob (repeatable)")
             ->allow_extra_args(false);
         app.add_option("--ref", o.ask.ref,
                        "With --store: this ref of each repository (default: its latest publish)");
       },
       [](ParsedOptions& o, commands::Context& c, commands::Prepared& p) {
         return commands::run_ask(o.ask, c, p);
       },
       [](ParsedOptions& o) { return commands::ask_setup(o.ask); }},
      {"status", "Show what the index holds and whether it is up to date",
       "  kasava status\n"
       "  kasava status --json\n"
       "  kasava status --store postgresql://db/kasava   # the shared store's repositories",
       "",
       Needs::readable_index,
       [](CLI::App& app, ParsedOptions& o) {
         app.add_flag("--json", o.status.json, "Print the status as JSON");
         app.add_option("--store", o.status.store,
                        "Describe this shared PostgreSQL store instead: repositories, refs, blobs "
                        "(default: KASAVA_STORE when set)");
       },
       [](ParsedOptions& o, commands::Context& c, commands::Prepared& p) {
         return commands::run_status(o.status, c, p);
       },
       [](ParsedOptions& o) { return commands::status_setup(o.status); }},
      {"verify", "Check the index for damage and, with --repair, fix it by re-indexing",
       "  kasava verify            # exit 0 sound, 1 damaged\n"
       "  kasava verify --repair   # re-index damaged files, rebuild a damaged index\n"
       "  kasava verify --json\n"
       "  kasava verify --store postgresql://db/kasava --repair   # the shared store",
       "With --store: every snapshot's blobs stored, chunks and vectors as their blob and model\n"
       "say, the statistics as the chunks and file histories give them, and blobs nothing\n"
       "references (not damage).\n"
       "--repair deletes damaged and unreferenced blobs and recomputes the statistics in one\n"
       "transaction; a ref missing blobs is kept and named: publish it again.",
       Needs::index,
       [](CLI::App& app, ParsedOptions& o) {
         app.add_flag("--repair", o.verify.repair,
                      "Re-index what is wrong (rebuild when the file itself is damaged)");
         app.add_flag("--json", o.verify.json, "Print the report as JSON");
         app.add_option("--store", o.verify.store,
                        "Check this shared PostgreSQL store instead (default: KASAVA_STORE when set)");
       },
       [](ParsedOptions& o, commands::Context& c, commands::Prepared& p) {
         return commands::run_verify(o.verify, c, p);
       },
       [](ParsedOptions& o) { return commands::verify_setup(o.verify); }},
      {"unpublish", "Remove a repository, or one of its refs, from the shared store",
       "  kasava unpublish --store postgresql://ci@db/kasava org/app               # every ref\n"
       "  kasava unpublish --store postgresql://ci@db/kasava org/app --ref feature",
       "Blobs that no remaining snapshot references go in the same transaction, with their\n"
       "chunks, texts and statistics. Exit 1 when the repository or ref is not in the store.",
       Needs::index_per_call,
       [](CLI::App& app, ParsedOptions& o) {
         app.add_option("repository", o.unpublish.repository, "The repository's name in the store (org/name)")
             ->required();
         app.add_option("--ref", o.unpublish.ref, "Remove only this ref (default: every ref and the repository)");
         app.add_option("--store", o.unpublish.store,
                        "The shared PostgreSQL store (a libpq URI or key=value string; default: "
                        "KASAVA_STORE, else `store` in your config)");
       },
       [](ParsedOptions& o, commands::Context& c, commands::Prepared&) {
         return commands::run_unpublish(o.unpublish, c);
       }},
      {"mcp", "Serve search to coding agents: a Model Context Protocol server on stdio",
       "  kasava mcp                            # JSON-RPC on stdin/stdout, logs on stderr\n"
       "  claude mcp add kasava -- kasava mcp   # register with Claude Code\n"
       "  kasava --index /srv/app/index.db mcp  # serve an index built elsewhere\n"
       "  kasava mcp --store postgresql://db/kasava   # every repository of a shared store",
       "With --store (or KASAVA_STORE), the tools search and read the shared store's\n"
       "repositories instead: results name their repository and ref, `repository` and `ref`\n"
       "arguments narrow a search or choose the file read_file_range reads.",
       Needs::index_per_call,
       [](CLI::App& app, ParsedOptions& o) {
         app.add_option("--store", o.mcp.store,
                        "Serve this shared PostgreSQL store's repositories (a libpq URI or key=value "
                        "string; default: KASAVA_STORE, else the local index)");
       },
       [](ParsedOptions& o, commands::Context& c, commands::Prepared&) {
         return commands::run_mcp(o.mcp, c);
       }},
      {"watch", "Watch the work tree so that each ask's refresh costs what changed (inotify)",
       "  kasava watch &          # in the repository, after `kasava index`\n"
       "  kasava ask \"retry with backoff\"   # no listing of the tree when nothing changed",
       "Opt-in, in the foreground until Ctrl-C (SIGINT/SIGTERM). While it runs, a refresh asks\n"
       "it whether anything in the work tree (or HEAD, git's index, refs, info/exclude) changed\n"
       "since the last refresh and skips listing the tree when nothing did; any change, a\n"
       "watcher that stopped or lost events means the usual full listing. One inotify watch\n"
       "per folder: a large tree may need a higher sysctl fs.inotify.max_user_watches.",
       Needs::index,
       [](CLI::App&, ParsedOptions&) {},
       [](ParsedOptions&, commands::Context& c, commands::Prepared& p) {
         return commands::run_watch(c, p);
       }},
      {"serve", "Serve the index over HTTP: a JSON API for people, scripts and agents",
       "  kasava serve                                   # http://127.0.0.1:7700/\n"
       "  curl 'http://127.0.0.1:7700/api/search?q=retry+backoff&limit=5'\n"
       "  kasava serve --listen 0.0.0.0:7700 --token-file /etc/kasava/tokens",
       "Endpoints: GET /api/search?q=&limit=&mode=&lang=&path=&repo= (the `ask --json`\n"
       "document), /api/file?path=&start=&end= (lines of an indexed file), /api/status (the\n"
       "`status --json` document), /healthz. Errors are JSON with a status: 400 bad parameter,\n"
       "401/403 token or Host/Origin, 404, 405, 413, 414, 429 (Retry-After), 503.\n"
       "A token file holds one token per line (16 characters or more), each optionally\n"
       "followed by repository globs it is limited to; clients send `Authorization: Bearer`.\n"
       "Loopback needs no token unless a token file is given; any other address needs one\n"
       "(or --insecure-no-auth). SIGINT/SIGTERM: stop accepting, finish requests (5 s), exit.\n"
       "With --store (or KASAVA_STORE), the server serves a shared store's repositories: a\n"
       "search covers those the token may see (repo= narrows it, ref= picks a ref), /api/file\n"
       "needs repo= when several are visible, /api/status lists them.",
       Needs::readable_index,
       [](CLI::App& app, ParsedOptions& o) {
         app.add_option("--listen", o.serve.listen, "Address to listen on, HOST:PORT (port 0: any free one)")
             ->default_val(o.serve.listen);
         app.add_option("--token-file", o.serve.token_file,
                        "Tokens that may use the server, one per line, each optionally followed "
                        "by the repository globs it may see");
         app.add_flag("--insecure-no-auth", o.serve.insecure_no_auth,
                      "Serve a non-loopback address without tokens (anyone who reaches it may search)");
         app.add_flag("--log-queries", o.serve.log_queries,
                      "Log each request's query parameters (by default only method, path, status, time)");
         app.add_option("--store", o.serve.store,
                        "Serve this shared PostgreSQL store's repositories (a libpq URI or key=value "
                        "string; default: KASAVA_STORE, else the local index)");
         app.add_option("--allow-host", o.serve.allowed_hosts,
                        "A name clients reach the server by (the Host header); repeatable. On "
                        "loopback localhost and the address are always accepted; elsewhere any "
                        "name is, unless this is given")
             ->allow_extra_args(false);
         app.add_option("--rate-limit", o.serve.rate_limit,
                        "Requests per second per client address (0: no limit)")
             ->default_val(o.serve.rate_limit)->check(CLI::Range(0.0, 1000000.0));
       },
       [](ParsedOptions& o, commands::Context& c, commands::Prepared& p) {
         return commands::run_serve(o.serve, c, p);
       },
       [](ParsedOptions& o) { return commands::serve_setup(o.serve); }},
  };
  return table;
}

void print_error(const std::string& message) {
  std::fflush(stdout);
  // Errors quote file names, libraries' messages and what was typed (a mistyped option's
  // value may be a connection string): one line, nothing a terminal obeys, no password.
  std::fprintf(stderr, "kasava: error: %s\n",
               util::escape_controls(util::redact_credentials(message)).c_str());
}

// The first word that is neither an option nor an option's value, or "" (the command).
std::string first_positional(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg == "--") return i + 1 < argc ? argv[i + 1] : "";
    if (arg == "-C" || arg == "--index" || arg == "--color" || arg == "--model") {
      ++i;  // skips the option's value
      continue;
    }
    if (!arg.empty() && arg[0] != '-') return std::string(arg);
  }
  return "";
}

// "unknown command 'x'", with the closest command name when one is close enough.
std::optional<std::string> unknown_command_message(const std::string& word) {
  if (word.empty() || word == "generate" || word == "help") return std::nullopt;
  std::string closest;
  std::size_t best = 3;  // suggest only within two edits
  for (const auto& spec : command_table()) {
    if (word == spec.name) return std::nullopt;
    const std::size_t distance = util::edit_distance(word, spec.name);
    if (distance < best) {
      best = distance;
      closest = spec.name;
    }
  }
  std::string message = "unknown command '" + word + "'";
  if (!closest.empty()) message += ": did you mean '" + closest + "'?";
  return message + " (see 'kasava --help')";
}

} // namespace

int run(int argc, char** argv) {
  std::signal(SIGPIPE, SIG_IGN);  // a closed pipe shows up as a write error, handled below
  commands::install_interrupt_handlers();
  // A command line naming a shared store: its client library (~3 ms to load) loads while the
  // rest is parsed and set up rather than after; joined whichever way this returns.
  const std::jthread store_library = commands::load_store_library_early(argc, argv);

  ParsedOptions options;
  CLI::App app{"Semantic code search for git repositories, offline by default", "kasava"};
  app.set_version_flag("-V,--version", std::string("kasava ") + k_version);
  app.require_subcommand(1);
  app.fallthrough();
  app.footer("Examples:\n"
             "  kasava index                        # index the repository you stand in\n"
             "  kasava ask \"where is auth\"          # the best places in the code\n"
             "  kasava ask parseConfig --json --min-score 0.5\n"
             "  kasava -C ~/src/app status          # any command, as if started there\n"
             "  kasava mcp                          # serve search to a coding agent\n\n"
             "Run 'kasava help <command>' for a command's options and examples.");
  std::string color = "auto";
  app.add_option("-C", options.global.directory,
                 "Run as if started in PATH (relative paths in other options are then relative "
                 "to it), or in the clone of URL that `kasava index URL` made")
      ->type_name("PATH|URL");
  app.add_option("--index", options.global.index_path,
                 "Index file to use (default: .kasava/index.db of the repository)")
      ->envname("KASAVA_INDEX");
  // No envname: KASAVA_MODEL is read by the settings (commands/settings.cpp), which know
  // whether a value came from the flag, the environment or a config file.
  app.add_option("--model", options.global.model,
                 "Embedding model: builtin (default), voyage:<model>, openai:<model> or a "
                 ".kmodel file (also KASAVA_MODEL or `model` in a config file)");
  app.add_option("--color", color, "When to use colour: auto, always, never")
      ->check(CLI::IsMember({"auto", "always", "never"}));
  app.add_flag("-q,--quiet", options.global.quiet, "No progress and no warnings on stderr");

  const CommandSpec* selected = nullptr;
  for (const auto& spec : command_table()) {
    CLI::App* sub = app.add_subcommand(spec.name, spec.summary);
    sub->footer(std::string("Examples:\n") + spec.examples +
                (*spec.notes != '\0' ? std::string("\n\n") + spec.notes : std::string()));
    spec.define(*sub, options);
    sub->callback([&selected, &spec] { selected = &spec; });
  }

  // Hidden: regenerates man/kasava.1 and completions/ from this definition.
  std::string generate_format;
  CLI::App* generate = app.add_subcommand("generate", "Print the man page or a completion script");
  generate->group("");
  generate->add_option("format", generate_format, "man, bash, zsh or fish")
      ->required()
      ->check(CLI::IsMember({"man", "bash", "zsh", "fish"}));

  const std::string command_word = first_positional(argc, argv);
  if (command_word == "help") {  // `kasava help [COMMAND]`, as git does
    std::string topic;
    for (int i = 1; i + 1 < argc; ++i) {
      if (std::string_view(argv[i]) == "help") topic = argv[i + 1];
    }
    const CLI::App* about = &app;
    if (!topic.empty()) {
      try {
        about = app.get_subcommand(topic);
      } catch (const CLI::OptionNotFound&) {
        print_error("unknown command '" + topic + "' (see 'kasava --help')");
        return commands::exit_code(ExitStatus::error);
      }
    }
    // A subcommand's usage line names the program too: `Usage: kasava ask [OPTIONS] query`.
    std::fputs((about == &app ? app.help() : about->help("kasava")).c_str(), stdout);
    return 0;
  }
  if (auto message = unknown_command_message(command_word)) {
    print_error(*message);
    return commands::exit_code(ExitStatus::error);
  }

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    print_error(e.what() + std::string(" (see 'kasava --help')"));
    return commands::exit_code(ExitStatus::error);
  }
  options.global.color = color == "always"  ? commands::ColorChoice::always
                         : color == "never" ? commands::ColorChoice::never
                                            : commands::ColorChoice::automatic;

  if (generate->parsed()) {
    std::fputs(generate_document(app, generate_format).value_or("").c_str(), stdout);
    return std::fflush(stdout) == 0 ? 0 : commands::exit_code(ExitStatus::error);
  }

  try {
    const commands::SetupHooks hooks = selected->setup ? selected->setup(options) : commands::SetupHooks{};
    return commands::exit_code(commands::run_command(
        options.global, selected->needs, hooks,
        [&](commands::Context& context, commands::Prepared& prepared) {
          return selected->run(options, context, prepared);
        }));
  } catch (const util::Failure& e) {
    if (commands::interrupted()) {
      // A command that knows what it leaves behind says so; otherwise the index's words.
      print_error(std::string_view(e.what()).starts_with("interrupted: ")
                      ? e.what()
                      : "interrupted: the index keeps every file written so far; run `kasava index` "
                        "again to finish");
      return commands::exit_code(commands::interrupted_status());
    }
    print_error(e.what());
  } catch (const std::exception& e) {
    print_error(std::string("unexpected: ") + e.what());
  }
  return commands::exit_code(ExitStatus::error);
}

} // namespace kasava::cli
