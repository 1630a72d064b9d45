// bench/list_files ROOT [RUNS]: times repo::open_source() + Source::list() in one process, as
// every `kasava index` and `ask` does them once (but without process start and libgit2's
// one-time initialisation, which the first, untimed open pays), with the untracked cache the
// first listing learnt, so the listing's own cost can be compared across builds. Prints JSON:
// files, wall and CPU milliseconds per run (median, min).
#include <sys/resource.h>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "core/repo/source.hpp"

namespace {

double cpu_ms() {
  rusage usage{};
  ::getrusage(RUSAGE_SELF, &usage);
  const auto ms = [](const timeval& t) { return t.tv_sec * 1e3 + t.tv_usec / 1e3; };
  return ms(usage.ru_utime) + ms(usage.ru_stime);
}

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return values[values.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: list_files ROOT [RUNS]\n");
    return 2;
  }
  const int runs = argc > 2 ? std::max(1, std::atoi(argv[2])) : 20;
  using Clock = std::chrono::steady_clock;
  // The untimed first listing also learns the untracked cache, which every timed one is
  // given, as the index gives it to every refresh.
  std::string untracked_cache;
  if (auto warm = kasava::repo::open_source(argv[1], {}); !warm) {
    std::fprintf(stderr, "list_files: %s\n", warm.error().message.c_str());
    return 2;
  } else if ((*warm)->list()) {
    untracked_cache = (*warm)->untracked_cache();
  }
  std::vector<double> wall, cpu;
  std::size_t files = 0;
  for (int i = 0; i < runs; ++i) {
    const double cpu_before = cpu_ms();
    const auto started = Clock::now();
    auto source = kasava::repo::open_source(argv[1], {});
    if (!source) return 2;
    (*source)->use_untracked_cache(untracked_cache);
    auto listed = (*source)->list();
    wall.push_back(std::chrono::duration<double, std::milli>(Clock::now() - started).count());
    cpu.push_back(cpu_ms() - cpu_before);
    if (!listed) {
      std::fprintf(stderr, "list_files: %s\n", listed.error().message.c_str());
      return 2;
    }
    files = listed->size();
  }
  std::printf(
      "{\"files\": %zu, \"wall_ms_median\": %.2f, \"wall_ms_min\": %.2f, "
      "\"cpu_ms_median\": %.2f, \"cpu_ms_min\": %.2f}\n",
      files, median(wall), *std::min_element(wall.begin(), wall.end()), median(cpu),
      *std::min_element(cpu.begin(), cpu.end()));
  return 0;
}
