// Reading a tool's arguments (a JSON object) into typed values, with one readable message for
// the first problem, which the model sees as a tool error and can correct.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/util/json_value.hpp"

namespace kasava::mcp {

/// Typed access to the arguments of one tools/call. Each getter returns the value, or the
/// fallback after recording a problem; check ok() once all are read.
class Arguments {
public:
  explicit Arguments(const util::JsonValue& arguments) : m_arguments(arguments) {}

  /// A string that must be present and not blank.
  std::string required_string(std::string_view name);
  /// A string, or `fallback` when absent or null; one holding a NUL character is a problem.
  std::string string(std::string_view name, std::string fallback = "");
  /// A string out of `allowed`, or `fallback` when absent.
  std::string choice(std::string_view name, const std::vector<std::string>& allowed,
                     std::string fallback);
  /// An integer in [min, max] (a numeric string is accepted too), or `fallback` when absent.
  std::int64_t integer(std::string_view name, std::int64_t fallback, std::int64_t min,
                       std::int64_t max);
  /// A number in [min, max], or `fallback` when absent.
  double number(std::string_view name, double fallback, double min, double max);
  /// Whether `name` is present and not null.
  bool has(std::string_view name) const;

  bool ok() const { return m_error.empty(); }
  /// The first problem: `invalid argument 'limit': expected an integer from 1 to 100`.
  const std::string& error() const { return m_error; }

private:
  void fail(std::string_view name, const std::string& problem);
  const util::JsonValue& m_arguments;
  std::string m_error;
};

} // namespace kasava::mcp
