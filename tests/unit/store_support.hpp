// Shared helper of the core/store unit tests: an index opened for a test, or the test fails.
#pragma once

#include <catch2/catch.hpp>

#include <memory>
#include <string>

#include "core/store/store.hpp"

namespace kasava::test {

inline std::unique_ptr<store::Store> open_store(
    const std::string& path, store::OpenMode mode = store::OpenMode::read_write) {
  auto opened = store::Store::open(path, mode);
  if (!opened) FAIL("opening store: " << opened.error().message);
  return std::move(opened).value();
}

}  // namespace kasava::test
