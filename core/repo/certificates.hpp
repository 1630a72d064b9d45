// Private to core/repo: the CA bundle that libgit2's initialisation is made to skip (see
// git_handles.cpp, "Deferred CA certificates") and that is loaded before network use. Includes
// no git2.h, so unit tests can use it.
#pragma once

#include <string>

namespace kasava::repo::detail {

/// The CA bundle libgit2 asked for when it was initialised (ensure_libgit2()), "" when it asked
/// for none (a libgit2 built without mbedTLS, or initialised before ours).
std::string deferred_certificates();

/// Loads that bundle into libgit2, once; call before cloning or fetching. False (with
/// libgit2's error set) when it cannot be read.
bool load_default_certificates();

}  // namespace kasava::repo::detail
