// A shared library loaded (dlopen) on first use rather than linked: libcurl, libmicrohttpd and
// libpq each bring a score of libraries (TLS, Kerberos, LDAP, …) whose loading and relocation
// every kasava process would otherwise pay at start, while only some commands use them.
#pragma once

#include <string>

namespace kasava::util {

class SharedLibrary {
 public:
  /// Loads `soname` (never unloaded: these libraries keep global state). `name` is what the
  /// library is called in messages ("libcurl"); `why` says what needs it and how to install it.
  SharedLibrary(const char* soname, const char* name, const char* why);

  /// Sets `function` to the library's `symbol`, or records that it is missing.
  template <typename Function>
  void resolve(Function& function, const char* symbol) {
    function = reinterpret_cast<Function>(find(symbol));
  }

  /// Why the library is not usable (cannot be loaded, or lacks a resolved symbol); "" when it is.
  const std::string& error() const { return m_error; }

 private:
  void* find(const char* symbol);

  void* m_handle = nullptr;
  std::string m_soname;
  std::string m_name;
  std::string m_error;
};

} // namespace kasava::util
