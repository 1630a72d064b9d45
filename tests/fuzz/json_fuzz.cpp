// Fuzzes the JSON reader (core/util/json_value: nlohmann-json and our handler) that reads
// responses of remote providers and MCP requests: any bytes must give a value or an error,
// and a value must round-trip.
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "core/util/json_value.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto parsed = kasava::util::parse_json(text);
  if (!parsed) return 0;
  const std::string dumped = parsed->dump();
  auto again = kasava::util::parse_json(dumped);
  if (!again) std::abort();  // what we print we must be able to read back
  if (again->dump() != dumped) std::abort();
  return 0;
}
