// Files ranked by the history field alone (Store::history_search), for history_signal.py:
// reads one query a line on stdin and prints, for each, one line of tab-separated paths, best
// first (at most 50; an empty line when nothing matches). The query's terms are those `ask`
// uses (search::match_expression).
//   history_rank INDEX_DB < queries
#include <cstdio>
#include <iostream>
#include <string>

#include "core/search/query.hpp"
#include "core/store/store.hpp"

int main(int argc, char** argv) {
  using namespace kasava;
  if (argc != 2) {
    std::fprintf(stderr, "usage: history_rank INDEX_DB < queries\n");
    return 2;
  }
  auto store = store::Store::open(argv[1], store::OpenMode::read_only);
  if (!store) {
    std::fprintf(stderr, "history_rank: error: %s\n", store.error().message.c_str());
    return 1;
  }
  std::string line;
  while (std::getline(std::cin, line)) {
    auto hits = (*store)->history_search(search::match_expression(line), 50);
    if (!hits) {
      std::fprintf(stderr, "history_rank: error: %s\n", hits.error().message.c_str());
      return 1;
    }
    std::string out;
    for (const auto& hit : *hits) {
      if (!out.empty()) out += '\t';
      out += hit.path;
    }
    std::cout << out << '\n';
  }
  return 0;
}
