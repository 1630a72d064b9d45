// The shared store's search for `ask --store` and `mcp --store` (store_search.hpp).
#include "commands/store_search.hpp"

#include <algorithm>
#include <atomic>
#include <future>
#include <string_view>
#include <system_error>

#include "commands/settings.hpp"
#include "core/pgstore/connection.hpp"
#include "core/search/pg_source.hpp"
#include "core/util/glob.hpp"

namespace kasava::commands {

std::string chosen_store(const std::string& option) {
  return !option.empty() ? option : environment("KASAVA_STORE");
}

std::vector<pgstore::RefInfo> choose_refs(pgstore::Reader& reader, const std::vector<std::string>& globs,
                                          const std::string& ref, const std::string& glob_option,
                                          const std::string& ref_option, const Visible& visible) {
  std::vector<pgstore::RefInfo> chosen;
  for (auto& candidate : reader.refs()) {
    const bool wanted_repository =
        globs.empty() || std::any_of(globs.begin(), globs.end(), [&](const std::string& glob) {
          return util::glob_match(glob, candidate.repository);
        });
    if (!wanted_repository || (visible && !visible(candidate.repository))) continue;
    if (!ref.empty() ? candidate.ref != ref
                     : !chosen.empty() && chosen.back().repository == candidate.repository) {
      continue;  // refs come by repository, latest publish first
    }
    chosen.push_back(std::move(candidate));
  }
  if (chosen.empty()) {
    std::string asked;
    for (const auto& glob : globs) asked += (asked.empty() ? "" : ", ") + ("'" + glob + "'");
    throw util::Failure("store at " + reader.where() + ": no published ref" +
                        (asked.empty() ? std::string() : " of a repository matching " + glob_option + " " + asked) +
                        (ref.empty() ? std::string() : " named '" + ref + "'") +
                        " (`kasava status --store` lists what it holds)");
  }
  for (const auto& each : chosen) {
    if (each.model != chosen.front().model) {
      throw util::Failure("store at " + reader.where() + ": the refs asked were published with different models ('" +
                          chosen.front().model + "' for " + chosen.front().repository + "@" + chosen.front().ref +
                          ", '" + each.model + "' for " + each.repository + "@" + each.ref +
                          "): choose refs of one model with " + glob_option + " or " + ref_option);
    }
  }
  return chosen;
}

pgstore::RefInfo choose_file_ref(pgstore::Reader& reader, const std::string& repository, const std::string& ref,
                                 const Visible& visible) {
  std::vector<pgstore::RefInfo> refs;  // by repository, latest publish first
  std::vector<std::string> repositories;
  for (auto& each : reader.refs()) {
    if ((!repository.empty() && each.repository != repository) || (visible && !visible(each.repository))) continue;
    if (repositories.empty() || repositories.back() != each.repository) repositories.push_back(each.repository);
    refs.push_back(std::move(each));
  }
  if (refs.empty()) {
    throw util::Failure(repository.empty()
                            ? "the store at " + reader.where() + " holds no published repository"
                            : "the store at " + reader.where() + " holds no repository named '" + repository + "'");
  }
  if (repositories.size() > 1) {
    throw util::Failure("the store holds " + std::to_string(repositories.size()) +
                        " repositories: name one with `repository` (e.g. '" + repositories.front() +
                        "', as search results give it)");
  }
  if (ref.empty()) return refs.front();
  const auto named = std::find_if(refs.begin(), refs.end(), [&](const auto& each) { return each.ref == ref; });
  if (named == refs.end()) {
    std::string names;
    for (const auto& each : refs) names += (names.empty() ? "'" : ", '") + each.ref + "'";
    throw util::Failure("'" + refs.front().repository + "' has no published ref '" + ref + "' (it has " + names + ")");
  }
  return *named;
}

util::JsonValue store_status_document(pgstore::Reader& reader, const Visible& visible) {
  std::int64_t repositories = 0;
  std::string previous;
  util::JsonValue::Array refs;
  for (const pgstore::RefInfo& ref : reader.refs()) {
    if (visible && !visible(ref.repository)) continue;
    if (refs.empty() || previous != ref.repository) ++repositories;
    previous = ref.repository;
    refs.emplace_back(util::JsonValue::Object{{"repository", ref.repository},
                                              {"ref", ref.ref},
                                              {"model", ref.model},
                                              {"published_at", ref.published_at}});
  }
  return util::JsonValue::Object{
      {"store", reader.where()}, {"repositories", repositories}, {"refs", util::JsonValue(std::move(refs))}};
}

std::jthread load_store_library_early(int argc, char** argv) {
  bool named = !environment("KASAVA_STORE").empty();
  for (int i = 1; i < argc && !named; ++i) {
    const std::string_view word = argv[i];
    named = word == "--store" || word.rfind("--store=", 0) == 0;
  }
  if (!named) return {};
  try {
    return std::jthread(pgstore::load_client_library);
  } catch (const std::system_error&) {
    return {};  // loaded when the store is opened
  }
}

search::StoreSource::OpenReader another_reader(const std::string& conninfo) {
  const auto open = [conninfo]() -> std::shared_ptr<pgstore::Reader> {
    auto opened = pgstore::Reader::open(conninfo);
    if (!opened) return nullptr;
    return std::move(opened).value();
  };
  struct Opening {
    std::future<std::shared_ptr<pgstore::Reader>> reader;
    std::atomic<bool> taken{false};
  };
  auto opening = std::make_shared<Opening>();
  try {
    opening->reader = std::async(std::launch::async, open);
  } catch (const std::system_error&) {
    return open;  // no thread to be had: connected when asked for
  }
  return [opening]() -> std::shared_ptr<pgstore::Reader> {
    if (opening->taken.exchange(true)) return nullptr;
    return opening->reader.get();
  };
}

search::StoreSource::OpenReader pooled_reader(pgstore::ReaderPool& pool, bool may_connect) {
  return [&pool, may_connect]() -> std::shared_ptr<pgstore::Reader> {
    std::optional<pgstore::ReaderPool::Lease> lease = pool.acquire_idle();
    if (!lease && may_connect) {
      if (auto opened = pool.acquire()) lease.emplace(std::move(opened).value());
    }
    if (!lease) return nullptr;
    auto kept = std::make_shared<pgstore::ReaderPool::Lease>(std::move(*lease));
    return std::shared_ptr<pgstore::Reader>(kept, &**kept);
  };
}

std::vector<search::SearchHit> search_store(Context& context, pgstore::Reader& reader,
                                            std::vector<pgstore::RefInfo> refs,
                                            const search::SearchOptions& options,
                                            search::StoreSource::OpenReader another) {
  const search::StoreSource source(reader, std::move(refs), std::move(another));
  embed::Embedder* embedder = options.mode == search::Mode::lexical ? nullptr : &context.embedder();
  return search::search(source, options, embedder).value_or_throw();
}

} // namespace kasava::commands
