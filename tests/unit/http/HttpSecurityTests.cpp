#include <catch2/catch.hpp>

#include "http/HttpSecurity.h"

namespace http_security_tests {

using namespace switchboard::http;

SecurityPolicy policy() {
  SecurityPolicy p;
  p.token = std::string(32, 'a') + std::string(32, 'b');
  p.allowed_hosts = loopback_hosts(7337, {"devbox"});
  p.own_origins = loopback_origins(7337);
  p.cors_origins = {"http://localhost:5173"};
  return p;
}

TEST_CASE("Host allow-list: loopback names on our port and configured names only", "[http][security]") {
  const auto p = policy();
  CHECK(host_allowed(p, "127.0.0.1:7337"));
  CHECK(host_allowed(p, "localhost:7337"));
  CHECK(host_allowed(p, "LOCALHOST:7337"));
  CHECK(host_allowed(p, "[::1]:7337"));
  CHECK(host_allowed(p, "devbox:7337"));
  CHECK_FALSE(host_allowed(p, "evil.example:7337"));  // DNS rebinding: the attacker's name
  CHECK_FALSE(host_allowed(p, "127.0.0.1:8080"));
  CHECK_FALSE(host_allowed(p, "127.0.0.1"));
  CHECK_FALSE(host_allowed(p, ""));
}

TEST_CASE("Origin check: own origins and the allow-list, null and others refused", "[http][security]") {
  const auto p = policy();
  CHECK(check_origin(p, std::nullopt) == OriginVerdict::NoOrigin);
  CHECK(check_origin(p, "http://127.0.0.1:7337") == OriginVerdict::SameDaemon);
  CHECK(check_origin(p, "http://localhost:5173") == OriginVerdict::CorsAllowed);
  CHECK(check_origin(p, "null") == OriginVerdict::Refused);
  CHECK(check_origin(p, "http://evil.example:7337") == OriginVerdict::Refused);
  CHECK(check_origin(p, "https://127.0.0.1:7337") == OriginVerdict::Refused);
  CHECK(check_origin(p, "http://127.0.0.1:7337.evil.example") == OriginVerdict::Refused);
}

TEST_CASE("token: bearer header or query parameter, nothing else", "[http][security]") {
  const auto p = policy();
  const std::string bearer = "Bearer " + p.token;
  CHECK(token_accepted(p, {bearer, std::nullopt}));
  CHECK(token_accepted(p, {std::nullopt, std::string_view(p.token)}));
  CHECK_FALSE(token_accepted(p, {}));
  CHECK_FALSE(token_accepted(p, {"Bearer wrong", std::nullopt}));
  CHECK_FALSE(token_accepted(p, {"Basic " + p.token, std::nullopt}));
  const std::string prefix = p.token.substr(0, 63);
  CHECK_FALSE(token_accepted(p, {std::nullopt, std::string_view(prefix)}));
}

TEST_CASE("constant-time comparison is a correct comparison", "[http][security]") {
  CHECK(constant_time_equals("abc", "abc"));
  CHECK_FALSE(constant_time_equals("abc", "abd"));
  CHECK_FALSE(constant_time_equals("abc", "ab"));
  CHECK(constant_time_equals("", ""));
}

TEST_CASE("query parsing and log redaction", "[http][security]") {
  CHECK(query_parameter("/events?token=abc&lastEventId=5", "token") == std::optional<std::string_view>("abc"));
  CHECK(query_parameter("/events?token=abc&lastEventId=5", "lastEventId") == std::optional<std::string_view>("5"));
  CHECK_FALSE(query_parameter("/events", "token").has_value());
  CHECK_FALSE(query_parameter("/events?mytoken=abc", "token").has_value());
  CHECK(target_path("/events?token=abc") == "/events");
  CHECK(redact_target("/events?token=secret&x=1") == "/events?token=REDACTED&x=1");
  CHECK(redact_target("/events?a=1&token=secret") == "/events?a=1&token=REDACTED");
  CHECK(redact_target("/events?mytoken=keep") == "/events?mytoken=keep");
}

TEST_CASE("http header comparison ignores ASCII case and nothing else, for every pair of bytes", "[http][security]") {
  // The rule, byte by byte: equal after folding A-Z to a-z. Bytes outside ASCII letters compare as they are.
  auto fold = [](int c) { return c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c; };
  int mismatches = 0;
  for (int a = 0; a < 256; ++a) {
    for (int b = 0; b < 256; ++b) {
      const char x = static_cast<char>(a);
      const char y = static_cast<char>(b);
      if (equals_ignoring_ascii_case(std::string_view(&x, 1), std::string_view(&y, 1)) != (fold(a) == fold(b))) ++mismatches;
    }
  }
  CHECK(mismatches == 0);
  CHECK(equals_ignoring_ascii_case("Application/JSON", "application/json"));
  CHECK(equals_ignoring_ascii_case("", ""));
  CHECK_FALSE(equals_ignoring_ascii_case("application/json", "application/jso"));
  CHECK_FALSE(equals_ignoring_ascii_case("bearer ", "bearer_"));
  CHECK_FALSE(equals_ignoring_ascii_case("\xC4", "\xE4"));  // Latin-1 Ä and ä: not ASCII, not folded
}

}  // namespace http_security_tests
