#include <limits>

#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include "switchboard/json/Decoders.h"
#include "switchboard/protocol/generated/Types.h"
#include "switchboard/rpc/RpcError.h"

namespace decode_tests {

using nlohmann::json;
using switchboard::json::DecodeContext;
using switchboard::protocol::InitializeParams;

// Decodes `text` as InitializeParams and returns the -32602 message (empty on success).
std::string decode_error(const std::string& text) {
  InitializeParams params{};
  DecodeContext context;
  if (decode(json::parse(text), params, context)) return {};
  return switchboard::rpc::RpcError::invalid_params("initialize", context.error()).message;
}

TEST_CASE("generated decoder accepts valid params", "[decode]") {
  InitializeParams params{};
  DecodeContext context;
  REQUIRE(decode(json::parse(R"({"protocolVersion":1,"clientInfo":{"name":"tui","version":"2"},
                                 "capabilities":{"answersPermissions":true}})"),
                 params, context));
  CHECK(params.protocol_version == 1);
  CHECK(params.client_info.name == "tui");
  CHECK(params.client_info.version == std::optional<std::string>("2"));
  REQUIRE(params.capabilities);
  CHECK(params.capabilities->answers_permissions == std::optional<bool>(true));
}

TEST_CASE("decode errors name the JSON pointer and what was expected", "[decode]") {
  CHECK(decode_error(R"({"protocolVersion":"1","clientInfo":{"name":"x"}})") ==
        "invalid params for initialize: /protocolVersion: expected integer, got string");
  CHECK(decode_error(R"({"clientInfo":{"name":"x"}})") ==
        "invalid params for initialize: /protocolVersion: expected integer, got missing");
  CHECK(decode_error(R"({"protocolVersion":1,"clientInfo":{"name":7}})") ==
        "invalid params for initialize: /clientInfo/name: expected string, got integer");
  CHECK(decode_error(R"({"protocolVersion":1,"clientInfo":{"name":""}})") ==
        "invalid params for initialize: /clientInfo/name: expected non-empty string, got string of 0 bytes");
  CHECK(decode_error(R"({"protocolVersion":0,"clientInfo":{"name":"x"}})") ==
        "invalid params for initialize: /protocolVersion: expected integer >= 1, got 0");
  CHECK(decode_error(R"({"protocolVersion":1,"clientInfo":{"name":"x"},"extra":1})") ==
        "invalid params for initialize: /extra: unexpected field");
  CHECK(decode_error(R"({"protocolVersion":1.5,"clientInfo":{"name":"x"}})") ==
        "invalid params for initialize: /protocolVersion: expected integer, got number");
  CHECK(decode_error(R"([1])") == "invalid params for initialize: params: expected object, got array");
}

TEST_CASE("JSON pointer segments are escaped", "[decode]") {
  CHECK(decode_error(R"({"protocolVersion":1,"clientInfo":{"name":"x"},"a/b~c":1})") ==
        "invalid params for initialize: /a~1b~0c: unexpected field");
}

TEST_CASE("explicit null for an optional field means absent", "[decode]") {
  InitializeParams params{};
  DecodeContext context;
  REQUIRE(decode(json::parse(R"({"protocolVersion":1,"clientInfo":{"name":"x","version":null}})"), params, context));
  CHECK_FALSE(params.client_info.version.has_value());
}

TEST_CASE("integers outside int64 are refused, integral floats accepted", "[decode]") {
  std::int64_t value = 0;
  DecodeContext big;
  CHECK_FALSE(switchboard::json::decode(json::parse("18446744073709551615"), value, big));
  CHECK(big.error().expected == "integer within 64-bit signed range");
  DecodeContext integral;
  CHECK(switchboard::json::decode(json::parse("3.0"), value, integral));
  CHECK(value == 3);
}

// Every float outside int64's range is refused without being converted first (the conversion itself would be
// undefined behaviour; the sanitizer preset traps it with -fsanitize=float-cast-overflow).
TEST_CASE("floats are range-checked before they become integers", "[decode]") {
  for (const char* text : {"1e19", "-1e19", "9.3e18", "-9.3e18", "9223372036854775808.0", "1e308", "-1e308",
                           "-9223372036854777856.0"}) {
    INFO(text);
    std::int64_t value = 7;
    DecodeContext context;
    CHECK_FALSE(switchboard::json::decode(json::parse(text), value, context));
    CHECK(context.error().expected == "integer");
    CHECK(value == 7);
  }
  // The exact ends of the range that a double can hold are integers.
  std::int64_t value = 0;
  DecodeContext lowest;
  CHECK(switchboard::json::decode(json::parse("-9223372036854775808.0"), value, lowest));
  CHECK(value == std::numeric_limits<std::int64_t>::min());
  DecodeContext high;
  CHECK(switchboard::json::decode(json::parse("9.2233720368547748e18"), value, high));
  CHECK(value == 9223372036854774784);
  DecodeContext fraction;
  CHECK_FALSE(switchboard::json::decode(json::parse("-2.5"), value, fraction));
}

TEST_CASE("errors inside arrays carry the index", "[decode]") {
  std::vector<std::string> values;
  DecodeContext context;
  context.push("list");
  CHECK_FALSE(switchboard::json::decode(json::parse(R"(["a","b",3])"), values, context));
  CHECK(context.error().pointer == "/list/2");
  CHECK(context.error().expected == "string");
}

TEST_CASE("enum decoding lists the allowed values", "[decode]") {
  switchboard::protocol::DeltaKind kind{};
  DecodeContext context;
  CHECK_FALSE(decode(json::parse(R"("loud")"), kind, context));
  CHECK(context.error().expected == R"(one of "text", "thinking")");
  DecodeContext ok;
  CHECK(decode(json::parse(R"("thinking")"), kind, ok));
  CHECK(kind == switchboard::protocol::DeltaKind::Thinking);
}

}  // namespace decode_tests
