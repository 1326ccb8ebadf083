// The fuzz oracles parse responses with the OpenRPC document replaced by a small stand-in (tests/fuzz/
// DocumentStandIn.h). That is only sound if the replacement never changes whether the text is valid JSON:
// these cases put the document where a value goes and where it cannot go, and compare with a full parse.

#include <catch2/catch.hpp>

#include <string>

#include <nlohmann/json.hpp>

#include "fuzz/DocumentStandIn.h"
#include "switchboard/protocol/generated/OpenRpcDocument.h"

namespace fuzz_document_stand_in_tests {

using switchboard::fuzz::kDocumentStandIn;
using switchboard::fuzz::parse_with_document_elided;
using Json = nlohmann::ordered_json;

const std::string& document() {
  static const std::string text(switchboard::protocol::openrpc_document_text());
  return text;
}

bool fully_valid(const std::string& text) { return !Json::parse(text, nullptr, false).is_discarded(); }
bool valid_when_elided(const std::string& text) { return !parse_with_document_elided(text).is_discarded(); }

TEST_CASE("the document served by rpc.discover is one JSON object", "[fuzz-oracle]") {
  CHECK(switchboard::fuzz::document_is_valid_json());
}

TEST_CASE("eliding the OpenRPC document never changes whether a response is valid JSON", "[fuzz-oracle]") {
  const std::string head = R"({"jsonrpc":"2.0","id":1,"result":)";
  const std::string& doc = document();
  struct Case {
    const char* where;
    std::string text;
    bool valid;
  };
  const Case cases[] = {
      {"as the result", head + doc + "}", true},
      {"twice in a batch", "[" + head + doc + "}," + head + doc + "}]", true},
      {"unterminated response", head + doc, false},
      {"inside a string", head + "\"" + doc + "\"}", false},
      {"after a backslash in a string", R"({"jsonrpc":"2.0","id":"\)" + doc + "\"}", false},
      {"two values in a row", head + doc + doc + "}", false},
      {"as an object key", R"({"jsonrpc":"2.0","id":1,)" + doc + ":1}", false},
  };
  for (const auto& c : cases) {
    INFO(c.where);
    CHECK(fully_valid(c.text) == c.valid);
    CHECK(valid_when_elided(c.text) == c.valid);
  }
}

TEST_CASE("each copy of the document is replaced by the stand-in, and nothing else changes", "[fuzz-oracle]") {
  const std::string text = R"([{"jsonrpc":"2.0","id":"a","result":)" + document() +
                           R"(},{"jsonrpc":"2.0","id":2,"result":)" + document() + "}]";
  const Json parsed = parse_with_document_elided(text);
  REQUIRE(parsed.is_array());
  REQUIRE(parsed.size() == 2);
  CHECK(parsed[0]["id"] == "a");
  CHECK(parsed[1]["id"] == 2);
  CHECK(parsed[0]["result"] == Json::parse(kDocumentStandIn));
  CHECK(parsed[1]["result"] == Json::parse(kDocumentStandIn));
  // Without the document, the text is parsed as it is.
  CHECK(parse_with_document_elided(R"({"jsonrpc":"2.0","id":1,"result":{"a":[1,2]}})")["result"] ==
        Json::parse(R"({"a":[1,2]})"));
}

}  // namespace fuzz_document_stand_in_tests
