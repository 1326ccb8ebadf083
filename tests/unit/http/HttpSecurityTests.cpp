#include <catch2/catch.hpp>

#include "http/HttpSecurity.h"

namespace http_security_tests {

using namespace switchboard::http;

SecurityPolicy policy() {
  SecurityPolicy p;
  p.token = std::string(32, 'a') + std::string(32, 'b');
  p.allowed_hosts = loopback_hosts(7337);
  p.allowed_names = {"devbox", "box.tailnet.ts.net", "[fd00::1]"};
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

TEST_CASE("Host allow-list: a configured name matches with any port or none, and only as a whole name", "[http][security]") {
  const auto p = policy();
  // What tunnels send: the name bare (Tailscale serve, a TLS proxy on 443) or with their own port (ssh -L).
  CHECK(host_allowed(p, "devbox"));
  CHECK(host_allowed(p, "devbox:443"));
  CHECK(host_allowed(p, "devbox:8080"));
  CHECK(host_allowed(p, "DevBox:8080"));
  CHECK(host_allowed(p, "box.tailnet.ts.net"));
  CHECK(host_allowed(p, "[fd00::1]"));
  CHECK(host_allowed(p, "[fd00::1]:9000"));
  // Not the name, or not a port after it.
  CHECK_FALSE(host_allowed(p, "devbox.evil.example"));
  CHECK_FALSE(host_allowed(p, "evil-devbox"));
  CHECK_FALSE(host_allowed(p, "tailnet.ts.net"));
  CHECK_FALSE(host_allowed(p, "devbox:"));
  CHECK_FALSE(host_allowed(p, "devbox:80x"));
  CHECK_FALSE(host_allowed(p, "devbox:80:80"));
  CHECK_FALSE(host_allowed(p, "[fd00::2]:9000"));
  CHECK_FALSE(host_allowed(p, "[fd00::1]x"));
  CHECK_FALSE(host_allowed(p, ":443"));
  // Nothing extra by default: the loopback names only, and only on our port.
  SecurityPolicy bare;
  bare.allowed_hosts = loopback_hosts(7337);
  CHECK_FALSE(host_allowed(bare, "devbox"));
  CHECK_FALSE(host_allowed(bare, "localhost"));
  CHECK_FALSE(host_allowed(bare, "localhost:443"));
}

TEST_CASE("Origin check: a configured name's http and https origins are the daemon's own, with any port", "[http][security]") {
  const auto p = policy();
  CHECK(check_origin(p, "https://devbox") == OriginVerdict::SameDaemon);
  CHECK(check_origin(p, "https://box.tailnet.ts.net") == OriginVerdict::SameDaemon);
  CHECK(check_origin(p, "http://devbox:8080") == OriginVerdict::SameDaemon);
  CHECK(check_origin(p, "HTTPS://DEVBOX:443") == OriginVerdict::SameDaemon);
  CHECK(check_origin(p, "https://[fd00::1]:8443") == OriginVerdict::SameDaemon);
  CHECK(check_origin(p, "https://devbox.evil.example") == OriginVerdict::Refused);
  CHECK(check_origin(p, "https://devbox/path") == OriginVerdict::Refused);
  CHECK(check_origin(p, "ftp://devbox") == OriginVerdict::Refused);
  CHECK(check_origin(p, "devbox") == OriginVerdict::Refused);
  CHECK(check_origin(p, "https://") == OriginVerdict::Refused);
  CHECK(check_origin(p, "https://evil.example") == OriginVerdict::Refused);
  SecurityPolicy bare;
  bare.own_origins = loopback_origins(7337);
  CHECK(check_origin(bare, "https://devbox") == OriginVerdict::Refused);
}

TEST_CASE("allowed names: one host name or IP literal, with wildcards, ports, schemes and paths refused", "[http][security]") {
  for (const std::string_view good : {"devbox", "box.tailnet.ts.net", "192.168.1.5", "[fd00::1]", "my_host"}) {
    CAPTURE(good);
    CHECK_FALSE(allowed_name_problem(good).has_value());
  }
  const auto problem = [](std::string_view name) { return allowed_name_problem(name).value_or(""); };
  CHECK(problem("*").find("wildcards are refused") != std::string::npos);
  CHECK(problem("*.ts.net").find("wildcards are refused") != std::string::npos);
  CHECK(problem("devbox:7337").find("without a port") != std::string::npos);
  CHECK(problem("https://devbox").find("without a scheme") != std::string::npos);
  CHECK(problem("devbox/console").find("without a scheme") != std::string::npos);
  CHECK(problem("[fd00::1]:80").find("IPv6") != std::string::npos);
  CHECK(problem("dev box").find("not a host name") != std::string::npos);
  CHECK(problem("").find("empty") != std::string::npos);
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
