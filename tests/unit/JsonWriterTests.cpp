#include <catch2/catch.hpp>

#include <limits>
#include <string>

#include <nlohmann/json.hpp>

#include "switchboard/json/JsonWriter.h"

using switchboard::json::JsonWriter;

TEST_CASE("JsonWriter emits compact JSON with inferred commas", "[json]") {
  std::string out;
  JsonWriter w(out);
  w.begin_object();
  w.key("a");
  w.integer(-5);
  w.key("b");
  w.begin_array();
  w.boolean(true);
  w.null();
  w.number(1.5);
  w.begin_object();
  w.end_object();
  w.end_array();
  w.key("c");
  w.unsigned_integer(std::numeric_limits<std::uint64_t>::max());
  w.end_object();
  CHECK(out == R"({"a":-5,"b":[true,null,1.5,{}],"c":18446744073709551615})");
  CHECK(nlohmann::json::parse(out)["c"] == std::numeric_limits<std::uint64_t>::max());
}

TEST_CASE("JsonWriter escapes strings so any text round-trips", "[json]") {
  const std::string tricky = std::string("quote\" back\\ nl\n tab\t cr\r nul") + '\0' + "\x01\x1f end \xC3\xA9 \xF0\x9F\x98\x80";
  std::string out;
  JsonWriter(out).string(tricky);
  CHECK(out.find('\n') == std::string::npos);  // never breaks an NDJSON line
  CHECK(nlohmann::json::parse(out).get<std::string>() == tricky);
  CHECK(out.find("\\u0000") != std::string::npos);
}

TEST_CASE("JsonWriter replaces invalid UTF-8 with U+FFFD", "[json]") {
  const std::string bad = "a\xFF" "b\xC3" "c\xED\xA0\x80" "d\xC0\xAF";  // stray, truncated, surrogate, overlong
  std::string out;
  JsonWriter(out).string(bad);
  const auto parsed = nlohmann::json::parse(out);  // would throw on invalid UTF-8
  const std::string text = parsed.get<std::string>();
  CHECK(text.find("a\xEF\xBF\xBD" "b") == 0);
  CHECK(text.find('d') != std::string::npos);
}

TEST_CASE("JsonWriter writes non-finite numbers as null", "[json]") {
  std::string out;
  JsonWriter w(out);
  w.begin_array();
  w.number(std::numeric_limits<double>::infinity());
  w.number(std::numeric_limits<double>::quiet_NaN());
  w.end_array();
  CHECK(out == "[null,null]");
}
