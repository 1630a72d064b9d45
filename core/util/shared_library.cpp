// util::SharedLibrary (see shared_library.hpp): dlopen and dlsym, with messages that name the
// library and what to install.
#include "core/util/shared_library.hpp"

#include <dlfcn.h>

namespace kasava::util {

SharedLibrary::SharedLibrary(const char* soname, const char* name, const char* why)
    : m_soname(soname), m_name(name) {
  m_handle = ::dlopen(soname, RTLD_NOW | RTLD_LOCAL);
  if (m_handle == nullptr) {
    const char* reason = ::dlerror();
    m_error = std::string("cannot load ") + soname + " (" + (reason != nullptr ? reason : "unknown reason") +
              "): " + why;
  }
}

void* SharedLibrary::find(const char* symbol) {
  if (m_handle == nullptr) return nullptr;
  void* found = ::dlsym(m_handle, symbol);
  if (found == nullptr && m_error.empty()) m_error = m_soname + " has no " + symbol + ": too old a " + m_name;
  return found;
}

} // namespace kasava::util
