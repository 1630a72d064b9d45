// Unit tests for core/util/stem.cpp: the Porter stems both sides of a shared store use.
#include <catch2/catch.hpp>

#include <algorithm>

#include "core/util/stem.hpp"

using kasava::util::porter_stem;

TEST_CASE("util::porter_stem gives the original Porter algorithm's stems") {
  CHECK(porter_stem("parsing") == "pars");
  CHECK(porter_stem("parse") == "pars");
  CHECK(porter_stem("connections") == "connect");
  CHECK(porter_stem("caresses") == "caress");
  CHECK(porter_stem("ponies") == "poni");
  CHECK(porter_stem("relational") == "relat");
  CHECK(porter_stem("retries") == "retri");
  CHECK(porter_stem("happy") == "happi");
}

TEST_CASE("util::porter_stem leaves short, long and odd tokens as they are") {
  CHECK(porter_stem("is") == "is");
  CHECK(porter_stem("") == "");
  CHECK(porter_stem("2048") == "2048");
  const std::string long_token(65, 'a');
  CHECK(porter_stem(long_token) == long_token);
  CHECK(porter_stem("http2") == "http2");
}

TEST_CASE("util::StemCache stems as porter_stem does, each token once") {
  kasava::util::StemCache stems;
  for (const char* token : {"parsing", "parse", "parsing", "is", "retries", "http2", "retries"}) {
    INFO(token);
    CHECK(stems.stem(token) == porter_stem(token));
  }
  // A kept stem is the same object the next time.
  const std::string* first = &stems.stem("connections");
  CHECK(&stems.stem(std::string("connections")) == first);
  CHECK(*first == "connect");
}

TEST_CASE("util::StemCache keeps at most k_most_tokens tokens and still stems each as porter_stem does") {
  kasava::util::StemCache stems;
  const std::size_t most = kasava::util::StemCache::k_most_tokens;
  std::size_t largest = 0;
  for (std::size_t i = 0; i < most + most / 2; ++i) {
    const std::string token = "parsing" + std::to_string(i) + "s";
    const std::string& stem = stems.stem(token);
    if (i % 9973 == 0) CHECK(stem == porter_stem(token));
    largest = std::max(largest, stems.size());
  }
  CHECK(largest == most);
  CHECK(stems.size() == most / 2);  // started again when full
  CHECK(stems.stem("connections") == "connect");
}

TEST_CASE("util::StemCache keeps every kept_stem until trim(), which starts again only when full") {
  kasava::util::StemCache stems;
  const std::size_t most = kasava::util::StemCache::k_most_tokens;
  const std::string* first = stems.kept_stem("connections");
  CHECK(*first == "connect");
  CHECK(stems.kept_stem("connections") == first);  // one address a token
  CHECK(stems.kept_stem("connects") != first);     // another token, another address of the same stem
  for (std::size_t i = 0; i < most + 10; ++i) stems.kept_stem("parsing" + std::to_string(i) + "s");
  CHECK(stems.size() == most + 12);  // kept past the bound: nothing dropped between trims
  CHECK(*first == "connect");
  CHECK(stems.kept_stem("connections") == first);
  stems.trim();
  CHECK(stems.size() == 0);
  stems.kept_stem("connections");
  stems.trim();  // not full: kept
  CHECK(stems.size() == 1);
}
