// bench/secret_scan ROOT [RUNS]: runs util::secret_rule over every file `kasava index` would
// read under ROOT (same listing, size limit and binary probe as the indexer), prints each file
// it flags as "rule<TAB>path", then one JSON line: files, bytes, flagged, flagged by rule, and
// the scan's own milliseconds (median of RUNS over the files already in memory, one thread).
// It is how the false positives of the secret rules are measured on real code.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

#include "core/repo/source.hpp"
#include "core/util/secrets.hpp"

namespace {

constexpr std::uint64_t k_max_file_size = 1024 * 1024;  // kasava index's default
constexpr std::size_t k_binary_probe_bytes = 8000;      // as the indexer's probe

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: secret_scan ROOT [RUNS]\n");
    return 2;
  }
  const int runs = argc > 2 ? std::max(1, std::atoi(argv[2])) : 5;
  auto source = kasava::repo::open_source(argv[1], {});
  if (!source) {
    std::fprintf(stderr, "secret_scan: %s\n", source.error().message.c_str());
    return 2;
  }
  auto listed = (*source)->list();
  if (!listed) {
    std::fprintf(stderr, "secret_scan: %s\n", listed.error().message.c_str());
    return 2;
  }
  std::vector<std::pair<std::string, std::string>> files;  // path, content
  std::size_t bytes = 0;
  for (kasava::repo::SourceEntry& entry : *listed) {
    if (entry.kind != kasava::repo::EntryKind::regular || entry.size > k_max_file_size) continue;
    auto content = (*source)->read(entry);
    if (!content) continue;
    if (content->substr(0, k_binary_probe_bytes).find('\0') != std::string::npos) continue;
    bytes += content->size();
    files.emplace_back(entry.path, std::move(*content));
  }
  std::map<std::string, std::size_t> by_rule;
  std::size_t flagged = 0;
  for (const auto& [path, content] : files) {
    const std::string_view rule = kasava::util::secret_rule(path, content);
    if (rule.empty()) continue;
    ++flagged;
    ++by_rule[std::string(rule)];
    std::printf("%.*s\t%s\n", static_cast<int>(rule.size()), rule.data(), path.c_str());
  }
  std::vector<double> times;
  for (int run = 0; run < runs; ++run) {
    std::size_t count = 0;
    const auto started = std::chrono::steady_clock::now();
    for (const auto& [path, content] : files)
      count += kasava::util::looks_like_secret(path, content) ? 1 : 0;
    times.push_back(
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started)
            .count());
    if (count != flagged) return 3;  // the rules are deterministic
  }
  std::sort(times.begin(), times.end());
  std::printf("{\"files\": %zu, \"bytes\": %zu, \"flagged\": %zu, \"by_rule\": {", files.size(),
              bytes, flagged);
  const char* separator = "";
  for (const auto& [rule, count] : by_rule) {
    std::printf("%s\"%s\": %zu", separator, rule.c_str(), count);
    separator = ", ";
  }
  const double median = times[times.size() / 2];
  std::printf("}, \"scan_ms\": %.1f, \"scan_mb_per_s\": %.0f}\n", median,
              median > 0 ? bytes / 1e6 / (median / 1e3) : 0.0);
  return 0;
}
