#include <catch2/catch.hpp>

#include <set>
#include <string>

#include "switchboard/support/RandomId.h"

// The random ids and UUIDs every part of the daemon takes its fresh names from (agents' session and prompt ids).

namespace random_id_tests {

bool is_hex(char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); }

TEST_CASE("random_uuid is a version 4 UUID in its canonical form, and no two are alike", "[support]") {
  std::set<std::string> seen;
  std::set<char> variants;
  for (int i = 0; i < 200; ++i) {
    const auto uuid = switchboard::random_uuid();
    REQUIRE(uuid.size() == 36);
    for (std::size_t at = 0; at < uuid.size(); ++at) {
      if (at == 8 || at == 13 || at == 18 || at == 23) {
        REQUIRE(uuid[at] == '-');
      } else {
        REQUIRE(is_hex(uuid[at]));
      }
    }
    CHECK(uuid[14] == '4');  // the version
    CHECK(std::string("89ab").find(uuid[19]) != std::string::npos);  // the variant
    variants.insert(uuid[19]);
    seen.insert(uuid);
  }
  CHECK(seen.size() == 200);
  CHECK(variants.size() > 1);  // the variant's two low bits stay random
}

TEST_CASE("random_id is the prefix and twice as many hex digits as bytes", "[support]") {
  const auto id = switchboard::random_id("q-", 6);
  REQUIRE(id.size() == 2 + 12);
  CHECK(id.rfind("q-", 0) == 0);
  for (std::size_t at = 2; at < id.size(); ++at) CHECK(is_hex(id[at]));
}

}  // namespace random_id_tests
