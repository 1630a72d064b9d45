// The shared store's search for `ask --store` and `mcp --store` (store_search.hpp).
#include "commands/store_search.hpp"

#include <algorithm>

#include "commands/settings.hpp"
#include "core/search/pg_source.hpp"
#include "core/util/glob.hpp"

namespace kasava::commands {

std::string chosen_store(const std::string& option) {
  return !option.empty() ? option : environment("KASAVA_STORE");
}

std::vector<pgstore::RefInfo> choose_refs(pgstore::Reader& reader, const std::vector<std::string>& globs,
                                          const std::string& ref, const std::string& glob_option,
                                          const std::string& ref_option) {
  std::vector<pgstore::RefInfo> chosen;
  for (auto& candidate : reader.refs()) {
    const bool wanted_repository =
        globs.empty() || std::any_of(globs.begin(), globs.end(), [&](const std::string& glob) {
          return util::glob_match(glob, candidate.repository);
        });
    if (!wanted_repository) continue;
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

std::vector<search::SearchHit> search_store(Context& context, pgstore::Reader& reader,
                                            std::vector<pgstore::RefInfo> refs,
                                            const search::SearchOptions& options) {
  const search::StoreSource source(reader, std::move(refs));
  embed::Embedder* embedder = options.mode == search::Mode::lexical ? nullptr : &context.embedder();
  return search::search(source, options, embedder).value_or_throw();
}

} // namespace kasava::commands
