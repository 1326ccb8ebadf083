#include "http/HttpSecurity.h"

#include <algorithm>

namespace switchboard::http {

std::vector<std::string> loopback_hosts(unsigned short port) {
  // Built by insertion: GCC 12 at -O3 reports a false -Wrestrict for ":" + std::to_string(port).
  std::string suffix = std::to_string(port);
  suffix.insert(0, 1, ':');
  return {"localhost" + suffix, "127.0.0.1" + suffix, "[::1]" + suffix};
}

std::vector<std::string> loopback_origins(unsigned short port) {
  // Built by insertion: GCC 12 at -O3 reports a false -Wrestrict for ":" + std::to_string(port).
  std::string suffix = std::to_string(port);
  suffix.insert(0, 1, ':');
  return {"http://localhost" + suffix, "http://127.0.0.1" + suffix, "http://[::1]" + suffix};
}

namespace {

bool listed(const std::vector<std::string>& list, std::string_view value) {
  return std::any_of(list.begin(), list.end(), [&](const std::string& entry) { return equals_ignoring_ascii_case(entry, value); });
}

std::string_view trim(std::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t')) text.remove_suffix(1);
  return text;
}

bool all_digits(std::string_view text) {
  return !text.empty() && std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// The name part of "name", "name:port", "[v6]" or "[v6]:port"; nullopt when what follows the name is not a
// port (so "devbox:evil" or "devbox:" never reduce to "devbox").
std::optional<std::string_view> name_without_port(std::string_view authority) {
  std::size_t name_end = 0;
  if (!authority.empty() && authority.front() == '[') {
    const auto close = authority.find(']');
    if (close == std::string_view::npos) return std::nullopt;
    name_end = close + 1;
  } else {
    name_end = std::min(authority.find(':'), authority.size());
  }
  const auto rest = authority.substr(name_end);
  if (!rest.empty() && !(rest.front() == ':' && all_digits(rest.substr(1)))) return std::nullopt;
  return authority.substr(0, name_end);
}

bool name_allowed(const SecurityPolicy& policy, std::string_view authority) {
  if (policy.allowed_names.empty()) return false;
  const auto name = name_without_port(authority);
  return name && !name->empty() && listed(policy.allowed_names, *name);
}

// "https://name" or "http://name:port" whose name is an allowed one. Anything after the authority (a path) means
// it is no origin a browser sends.
bool origin_of_allowed_name(const SecurityPolicy& policy, std::string_view origin) {
  for (const std::string_view scheme : {"https://", "http://"}) {
    if (origin.size() > scheme.size() && equals_ignoring_ascii_case(origin.substr(0, scheme.size()), scheme)) {
      return name_allowed(policy, origin.substr(scheme.size()));
    }
  }
  return false;
}

}  // namespace

std::optional<std::string> allowed_name_problem(std::string_view name) {
  const std::string quoted = "\"" + std::string(name) + "\"";
  if (name.empty()) return std::string("an allowed host name is empty");
  if (name.find('*') != std::string_view::npos) return quoted + ": wildcards are refused; list each name";
  if (name.find("://") != std::string_view::npos || name.find('/') != std::string_view::npos) {
    return quoted + ": give the host name alone, without a scheme or path";
  }
  if (name.front() == '[') {
    const bool v6 = name.back() == ']' && name.size() > 2 &&
                    std::all_of(name.begin() + 1, name.end() - 1, [](char c) {
                      return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F') || c == ':' || c == '.';
                    });
    if (!v6) return quoted + ": an IPv6 address is written [address], with no port";
    return std::nullopt;
  }
  if (name.find(':') != std::string_view::npos) {
    return quoted + ": give the name without a port; it is accepted with any port or none";
  }
  const bool plain = std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '-' || c == '.' || c == '_';
  });
  if (!plain) return quoted + ": not a host name (letters, digits, '-', '_' and '.' only)";
  return std::nullopt;
}

bool host_allowed(const SecurityPolicy& policy, std::string_view host) {
  const auto value = trim(host);
  return listed(policy.allowed_hosts, value) || name_allowed(policy, value);
}

OriginVerdict check_origin(const SecurityPolicy& policy, std::optional<std::string_view> origin) {
  if (!origin) return OriginVerdict::NoOrigin;
  const auto value = trim(*origin);
  if (listed(policy.own_origins, value)) return OriginVerdict::SameDaemon;
  // The console served through a tunnel: its page's origin is the tunnel's name. Same daemon, so no CORS.
  if (origin_of_allowed_name(policy, value)) return OriginVerdict::SameDaemon;
  if (listed(policy.cors_origins, value)) return OriginVerdict::CorsAllowed;
  return OriginVerdict::Refused;  // includes "null" (sandboxed frames, file://) and every other site
}

bool constant_time_equals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  unsigned char difference = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    difference |= static_cast<unsigned char>(a[i] ^ b[i]);
  }
  return difference == 0;
}

bool token_accepted(const SecurityPolicy& policy, const PresentedCredentials& credentials) {
  if (!policy.require_token) return true;
  bool accepted = false;
  // Check every presented form (no early exit on the first match) to keep timing flat.
  if (credentials.authorization) {
    auto value = trim(*credentials.authorization);
    constexpr std::string_view kBearer = "Bearer ";
    if (value.size() > kBearer.size() && equals_ignoring_ascii_case(value.substr(0, kBearer.size()), kBearer)) {
      accepted |= constant_time_equals(trim(value.substr(kBearer.size())), policy.token);
    }
  }
  if (credentials.query_token) accepted |= constant_time_equals(*credentials.query_token, policy.token);
  return accepted;
}

std::string_view target_path(std::string_view target) { return target.substr(0, target.find('?')); }

std::optional<std::string_view> query_parameter(std::string_view target, std::string_view name) {
  const auto question = target.find('?');
  if (question == std::string_view::npos) return std::nullopt;
  std::string_view query = target.substr(question + 1);
  const auto hash = query.find('#');
  if (hash != std::string_view::npos) query = query.substr(0, hash);
  while (!query.empty()) {
    const auto end = query.find('&');
    const auto pair = query.substr(0, end);
    query = end == std::string_view::npos ? std::string_view() : query.substr(end + 1);
    const auto eq = pair.find('=');
    if (pair.substr(0, eq) == name) return eq == std::string_view::npos ? std::string_view() : pair.substr(eq + 1);
  }
  return std::nullopt;
}

std::string redact_target(std::string_view target) {
  std::string out(target);
  std::size_t at = 0;
  while ((at = out.find("token=", at)) != std::string::npos) {
    if (at > 0 && out[at - 1] != '?' && out[at - 1] != '&') {
      at += 6;
      continue;
    }
    const auto value_start = at + 6;
    const auto value_end = out.find_first_of("&#", value_start);
    out.replace(value_start, (value_end == std::string::npos ? out.size() : value_end) - value_start, "REDACTED");
    at = value_start;
  }
  return out;
}

}  // namespace switchboard::http
