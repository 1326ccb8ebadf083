#include <catch2/catch.hpp>

#include <string>

#include "common/PercentEncoding.h"

// Percent-encoding (adapters/common/PercentEncoding.h): Grok Build's history folder names and OpenCode's
// directory query parameter.

namespace percent_encoding_tests {

using switchboard::adapters::percent_encoded;

TEST_CASE("percent encoding: unreserved characters stay, every other byte is %XX in upper case", "[percent-encoding]") {
  CHECK(percent_encoded("a-b_c.d~XYZ09") == "a-b_c.d~XYZ09");
  CHECK(percent_encoded("/tmp/acp/proj") == "%2Ftmp%2Facp%2Fproj");
  CHECK(percent_encoded("/w/my project") == "%2Fw%2Fmy%20project");
  CHECK(percent_encoded("100%?&=#") == "100%25%3F%26%3D%23");
  // UTF-8 is encoded byte by byte.
  CHECK(percent_encoded("/w/caf\xc3\xa9") == "%2Fw%2Fcaf%C3%A9");
  CHECK(percent_encoded(std::string("a\0b", 3)) == "a%00b");
  CHECK(percent_encoded("").empty());
}

TEST_CASE("percent encoding: characters a caller keeps stay as they are", "[percent-encoding]") {
  CHECK(percent_encoded("/w/my project", "/") == "/w/my%20project");
  CHECK(percent_encoded("a/b:c", "/:") == "a/b:c");
}

}  // namespace percent_encoding_tests
