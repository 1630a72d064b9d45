// Shared helpers of the core/pgstore unit tests: a store opened for a test (or the test fails)
// and blob ids made from numbers (the store trusts its caller's ids).
#pragma once

#include <catch2/catch.hpp>

#include <memory>
#include <string>

#include "core/pgstore/store.hpp"

namespace kasava::test {

inline std::unique_ptr<pgstore::Store> open_pg_store(const std::string& conninfo) {
  auto opened = pgstore::Store::open(conninfo);
  if (!opened) FAIL("opening the store: " << opened.error().message);
  return std::move(opened).value();
}

/// A blob id of 40 hex digits made from a number.
inline std::string numbered_blob_id(int n) {
  std::string id = std::to_string(n);
  return std::string(40 - id.size(), '0') + id;
}

}  // namespace kasava::test
