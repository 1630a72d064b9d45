// Fuzzes the query side of search (core/search, core/store): any question must turn into an
// FTS5 MATCH expression that SQLite accepts — a syntax error would reach the user.
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "core/search/search.hpp"
#include "core/store/store.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static auto store =
      kasava::store::Store::open(":memory:", kasava::store::OpenMode::read_write).value_or_throw();
  const std::string_view query(reinterpret_cast<const char*>(data), size);
  const std::string expression = kasava::search::match_expression(query);
  if (expression.empty()) return 0;
  auto hits = store->lexical_search(expression, {}, 10);
  if (!hits) std::abort();
  return 0;
}
