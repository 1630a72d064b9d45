// Fuzzes the config file parser (core/util/config_file): any bytes must give entries or an
// error without crashing or throwing; every entry must have a valid key and a line number in
// order, and no entry may come from a file over the size limit.
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "core/util/config_file.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const auto parsed = kasava::util::parse_config(text, "fuzz");
  if (!parsed) {
    // Errors are one line (a multi-line message would break `kasava: warning:` output), name
    // the origin first, and never echo a NUL byte.
    const std::string& message = parsed.error().message;
    if (message.rfind("'fuzz'", 0) != 0) std::abort();
    if (message.find('\0') != std::string::npos) std::abort();
    if (message.find('\n') != std::string::npos) std::abort();
    return 0;
  }
  if (size > kasava::util::k_config_max_bytes) std::abort();
  int previous_line = 0;
  for (const auto& entry : *parsed) {
    if (!kasava::util::is_config_key(entry.key)) std::abort();
    if (entry.line <= previous_line) std::abort();  // one entry per line, in file order
    previous_line = entry.line;
    if (entry.value.size() > kasava::util::k_config_max_line_bytes) std::abort();
    if (entry.value.find('\0') != std::string::npos) std::abort();
  }
  // Parsing is a pure function of the text.
  const auto again = kasava::util::parse_config(text, "fuzz");
  if (!again || again->size() != parsed->size()) std::abort();
  return 0;
}
