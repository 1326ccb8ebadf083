#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace switchboard::http {

// The localhost-daemon checklist as pure functions, so each refusal is unit-testable without sockets.
//
// A local HTTP agent host is a remote-code-execution endpoint for any web page the user visits unless it
// checks, on every request: the Host header (DNS rebinding), the Origin header (cross-site requests; note that
// "Origin equals Host" proves nothing under rebinding, so it is never used as a shortcut), and a random token.
struct SecurityPolicy {
  std::string token;                         // ≥128 bits from the CSPRNG, hex
  std::vector<std::string> allowed_hosts;    // exact Host header values, e.g. "127.0.0.1:7337"
  // Names the user reaches the daemon by through a tunnel (SSH forward, Tailscale serve, a TLS proxy): each one
  // is accepted with any port or none, in the Host header and as the host of an Origin (http or https), since a
  // tunnel sends its own port (or none, for 443) rather than ours. Never a wildcard (allowed_name_problem).
  std::vector<std::string> allowed_names;
  std::vector<std::string> own_origins;      // the daemon's own origins, e.g. "http://127.0.0.1:7337"
  std::vector<std::string> cors_origins;     // other origins a user allowed explicitly
  bool require_token = true;
};

// Host header values for the loopback names on `port`.
std::vector<std::string> loopback_hosts(unsigned short port);
std::vector<std::string> loopback_origins(unsigned short port);

// Why `name` cannot be an allowed name, or nullopt: it must be one host name or IP literal ("devbox",
// "devbox.tailnet.ts.net", "192.168.1.5", "[fd00::1]"), with no port, scheme, path or wildcard.
std::optional<std::string> allowed_name_problem(std::string_view name);

bool host_allowed(const SecurityPolicy& policy, std::string_view host);

// Header names and values such as Host, "Bearer" and media types compare without regard to ASCII case (RFC 9110),
// whatever the process locale is. Inline, with no call into the C library per character: it runs on every request.
inline bool equals_ignoring_ascii_case(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    const auto x = static_cast<unsigned char>(a[i]);
    const auto y = static_cast<unsigned char>(b[i]);
    if (x == y) continue;
    const auto lower_x = x >= 'A' && x <= 'Z' ? x + ('a' - 'A') : x;
    const auto lower_y = y >= 'A' && y <= 'Z' ? y + ('a' - 'A') : y;
    if (lower_x != lower_y) return false;
  }
  return true;
}

enum class OriginVerdict {
  NoOrigin,    // not a browser cross-origin request (curl, a native client): allowed
  SameDaemon,  // one of our own origins: allowed, no CORS headers needed
  CorsAllowed, // on the user's allow-list: allowed, answer with CORS headers for exactly this origin
  Refused,     // anything else, including "null": 403
};
OriginVerdict check_origin(const SecurityPolicy& policy, std::optional<std::string_view> origin);

// Compares in time independent of where the strings differ (the length is not secret: tokens have one length).
bool constant_time_equals(std::string_view a, std::string_view b);

// Where a request may carry the token: the Authorization header, or ?token= (EventSource cannot set headers).
// Never a cookie: a browser sends a host's cookies to every port of that host, so a cookie would hand the token
// to any other web server on 127.0.0.1, and it would ride along on cross-site requests.
struct PresentedCredentials {
  std::optional<std::string_view> authorization;  // the Authorization header
  std::optional<std::string_view> query_token;    // ?token=
};
bool token_accepted(const SecurityPolicy& policy, const PresentedCredentials& credentials);

// The value of query parameter `name` in `target` ("/events?a=1&token=x"), percent-decoding not needed for our
// hex tokens and integer ids; nullopt if absent.
std::optional<std::string_view> query_parameter(std::string_view target, std::string_view name);
std::string_view target_path(std::string_view target);
// `target` with the value of any token parameter replaced, for logs.
std::string redact_target(std::string_view target);

}  // namespace switchboard::http
