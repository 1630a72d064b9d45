// Tests of batch planning (core/remote/batching.cpp).
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "core/remote/batching.hpp"

using namespace kasava;

TEST_CASE("remote::estimate_tokens is bytes over 4, rounded up") {
  CHECK(remote::estimate_tokens("") == 0);
  CHECK(remote::estimate_tokens("a") == 1);
  CHECK(remote::estimate_tokens("abcd") == 1);
  CHECK(remote::estimate_tokens("abcde") == 2);
}

TEST_CASE("remote::plan_batches caps inputs per batch") {
  std::vector<std::string> texts(300, "int x;");
  std::vector<std::string_view> inputs(texts.begin(), texts.end());
  const auto batches = remote::plan_batches(inputs, 128, 120000);
  REQUIRE(batches.size() == 3);
  CHECK(batches[0].begin == 0);
  CHECK(batches[0].size() == 128);
  CHECK(batches[1].begin == 128);
  CHECK(batches[1].size() == 128);
  CHECK(batches[2].size() == 44);
  CHECK(batches[2].end == 300);
}

TEST_CASE("remote::plan_batches caps estimated tokens per batch") {
  // 40 inputs of 10,000 bytes = 2,500 tokens each: 48 fit in 120k, so 40 fit in one batch;
  // with a budget of 10k tokens, 4 per batch.
  std::vector<std::string> texts(40, std::string(10000, 'x'));
  std::vector<std::string_view> inputs(texts.begin(), texts.end());
  CHECK(remote::plan_batches(inputs, 128, 120000).size() == 1);
  const auto batches = remote::plan_batches(inputs, 128, 10000);
  REQUIRE(batches.size() == 10);
  for (const auto& b : batches) {
    CHECK(b.size() == 4);
    CHECK(b.tokens == 10000);
  }
}

TEST_CASE("remote::plan_batches gives an oversized input a batch of its own") {
  std::vector<std::string> texts = {"a", std::string(1000, 'x'), "b", "c"};
  std::vector<std::string_view> inputs(texts.begin(), texts.end());
  const auto batches = remote::plan_batches(inputs, 128, 100);
  REQUIRE(batches.size() == 3);
  CHECK(batches[0].size() == 1);
  CHECK(batches[1].begin == 1);
  CHECK(batches[1].size() == 1);
  CHECK(batches[2].size() == 2);
}

TEST_CASE("remote::plan_batches covers every input once, in order") {
  std::vector<std::string> texts;
  for (int i = 0; i < 1000; ++i)
    texts.push_back(std::string(static_cast<std::size_t>(i * 37 % 900), 'y'));
  std::vector<std::string_view> inputs(texts.begin(), texts.end());
  const auto batches = remote::plan_batches(inputs, 50, 3000);
  std::size_t next = 0;
  for (const auto& b : batches) {
    CHECK(b.begin == next);
    CHECK(b.size() >= 1);
    CHECK(b.size() <= 50);
    CHECK((b.tokens <= 3000 || b.size() == 1));
    next = b.end;
  }
  CHECK(next == inputs.size());
  CHECK(remote::plan_batches({}, 128, 1000).empty());
}
