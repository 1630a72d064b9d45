// An expected-style result for low-level code: a value or an Error carrying a one-line,
// lower-case, context-first message. Command code turns errors into exceptions (see cli/).
#pragma once

#include <stdexcept>
#include <string>
#include <utility>
#include <variant>

namespace kasava::util {

/// A failure with a message fit for `kasava: error: <message>`.
struct Error {
  std::string message;
};

/// Thrown by command code; caught once in cli/ and printed with the `kasava: error:` prefix.
class Failure : public std::runtime_error {
public:
  explicit Failure(const std::string& message) : std::runtime_error(message) {}
  explicit Failure(const Error& error) : std::runtime_error(error.message) {}
};

/// Either a T or an Error (a small std::expected for C++20).
template <typename T>
class Result {
public:
  Result(T value) : m_state(std::move(value)) {}
  Result(Error error) : m_state(std::move(error)) {}

  bool ok() const { return m_state.index() == 0; }
  explicit operator bool() const { return ok(); }

  T& value() & { return std::get<0>(m_state); }
  const T& value() const& { return std::get<0>(m_state); }
  T&& value() && { return std::get<0>(std::move(m_state)); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

  const Error& error() const { return std::get<1>(m_state); }

  /// The value, or throws Failure with the error's message.
  T& value_or_throw() & {
    if (!ok()) throw Failure(error());
    return value();
  }
  T&& value_or_throw() && {
    if (!ok()) throw Failure(error());
    return std::move(*this).value();
  }

private:
  std::variant<T, Error> m_state;
};

/// Result of an operation that yields nothing on success.
struct Unit {};
using Status = Result<Unit>;
inline Status ok_status() { return Unit{}; }

} // namespace kasava::util
