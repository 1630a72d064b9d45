// Recall of the code lists (core/store/code_lists.hpp) against the exhaustive Hamming scan, as
// `ask` uses them: the semantic side's 300 nearest codes rescored by cosine, top 100 and top 10.
//
// usage: code_lists_recall INDEX [--build] [--share S]... [--queries FILE]
//   --build    builds the lists first (Store::update_code_lists; the index must be writable)
//   --share S  the share of the codes the scan reads (several: one line each; default: built-in)
//   --queries  one query per line (default: 40 natural-language and name queries)
// Prints per share: mean and lowest recall@100, share of queries with the same top 10, and the
// median milliseconds of one nearest_codes call with and without the lists.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include "core/embed/model.hpp"
#include "core/store/store.hpp"
#include "core/store/vectors.hpp"

namespace {

using namespace kasava;

const std::vector<std::string> k_queries = {
    "how does the scheduler pick the next task", "allocate pages in the buddy allocator",
    "copy data from user space", "register a character device", "handle a page fault",
    "spinlock with interrupts disabled", "read a file from the page cache",
    "parse kernel command line parameters", "send a packet through a network device",
    "rcu read side critical section", "create a kernel thread", "ext4 journal commit",
    "map a dma buffer", "handle an interrupt request", "usb device probe",
    "timer expiry callback", "open a file descriptor", "mount a filesystem",
    "out of memory killer chooses a victim", "load a kernel module",
    "read a csv file into a dict", "parse http request headers", "open a socket and listen",
    "compress data with gzip", "json encode object to string", "walk a directory tree recursively",
    "format a date as iso string", "retry on connection error", "email address validation regex",
    "thread pool executor submit", "sqlite cursor execute query", "url quote and unquote",
    "ZipFile", "urlopen", "hashlib sha256 digest", "temporary file that is deleted on close",
    "base64 decode", "parse command line arguments", "decimal rounding mode",
    "logging handler rotate file",
};

constexpr int k_scan = 300;  // search.cpp's k_rescore_candidates

double now_ms() {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// The rescored order of `hits`, best first (ties by chunk id), as search.cpp ranks them.
std::vector<std::int64_t> rescored(const store::Store& store, const std::vector<float>& query,
                                   const std::vector<store::CodeHit>& hits) {
  std::vector<std::int64_t> ids;
  for (const auto& hit : hits) ids.push_back(hit.chunk_id);
  std::vector<std::pair<double, std::int64_t>> scored;
  for (const auto& vector : store.vectors_by_id(ids, static_cast<int>(query.size()))) {
    scored.emplace_back(store::int8_cosine(query, vector.values), vector.chunk_id);
  }
  std::sort(scored.begin(), scored.end(), [](const auto& a, const auto& b) {
    return a.first != b.first ? a.first > b.first : a.second < b.second;
  });
  std::vector<std::int64_t> order;
  for (const auto& [score, id] : scored) order.push_back(id);
  return order;
}

double median(std::vector<double> values) {
  if (values.empty()) return 0.0;
  std::sort(values.begin(), values.end());
  return values[values.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: code_lists_recall INDEX [--build] [--share S]... [--queries FILE]\n");
    return 2;
  }
  const std::string path = argv[1];
  bool build = false;
  std::vector<double> shares;
  std::vector<std::string> queries = k_queries;
  for (int i = 2; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--build") {
      build = true;
    } else if (arg == "--share" && i + 1 < argc) {
      shares.push_back(std::stod(argv[++i]));
    } else if (arg == "--queries" && i + 1 < argc) {
      std::ifstream in(argv[++i]);
      queries.clear();
      for (std::string line; std::getline(in, line);) {
        if (!line.empty()) queries.push_back(line);
      }
    } else {
      std::fprintf(stderr, "code_lists_recall: unknown argument '%s'\n", arg.c_str());
      return 2;
    }
  }
  if (build) {
    auto writable = store::Store::open(path, store::OpenMode::read_write);
    if (!writable) {
      std::fprintf(stderr, "%s\n", writable.error().message.c_str());
      return 1;
    }
    const double start = now_ms();
    const bool built = (*writable)->update_code_lists();
    std::printf("update_code_lists: %s in %.0f ms\n", built ? "built" : "nothing to do", now_ms() - start);
  }
  auto opened = store::Store::open(path, store::OpenMode::read_only);
  if (!opened) {
    std::fprintf(stderr, "%s\n", opened.error().message.c_str());
    return 1;
  }
  store::Store& index = **opened;
  std::printf("code_lists: %s\n", index.meta("code_lists").value_or("(none)").c_str());
  const auto model = embed::builtin_model();
  if (shares.empty()) shares.push_back(-1.0);
  const store::FileFilter every = [](std::string_view, std::string_view) { return true; };
  std::vector<std::vector<float>> vectors;
  std::vector<std::vector<std::int64_t>> exact;
  std::vector<double> exact_ms;
  for (const auto& query : queries) {
    vectors.push_back(model->encode(query, embed::InputKind::query));
    const auto code = store::binary_code(vectors.back());
    const double start = now_ms();
    const auto hits = index.nearest_codes(code, k_scan, every);
    exact_ms.push_back(now_ms() - start);
    exact.push_back(rescored(index, vectors.back(), hits));
  }
  std::printf("%-8s %10s %10s %8s %9s %9s\n", "share", "recall100", "lowest", "top10=", "lists ms",
              "exact ms");
  for (const double share : shares) {
    if (share >= 0) index.set_code_lists_probe(share);
    double sum = 0.0, lowest = 1.0;
    int same_top10 = 0;
    std::vector<double> ms;
    for (std::size_t q = 0; q < queries.size(); ++q) {
      const auto code = store::binary_code(vectors[q]);
      const double start = now_ms();
      const auto hits = index.nearest_codes(code, k_scan);
      ms.push_back(now_ms() - start);
      const auto order = rescored(index, vectors[q], hits);
      const std::size_t depth = std::min<std::size_t>(100, exact[q].size());
      const std::set<std::int64_t> truth(exact[q].begin(), exact[q].begin() + static_cast<std::ptrdiff_t>(depth));
      std::size_t found = 0;
      for (std::size_t i = 0; i < std::min(depth, order.size()); ++i) found += truth.count(order[i]);
      const double recall = depth == 0 ? 1.0 : static_cast<double>(found) / static_cast<double>(depth);
      sum += recall;
      lowest = std::min(lowest, recall);
      const std::size_t ten = std::min<std::size_t>(10, exact[q].size());
      same_top10 += order.size() >= ten && std::equal(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(ten),
                                                      exact[q].begin());
    }
    std::printf("%-8.3f %10.4f %10.4f %7d/%zu %9.2f %9.2f\n", share, sum / static_cast<double>(queries.size()),
                lowest, same_top10, queries.size(), median(ms), median(exact_ms));
  }
  return 0;
}
