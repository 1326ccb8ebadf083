#include "http/HttpSecurity.h"

#include <algorithm>

namespace switchboard::http {

std::vector<std::string> loopback_hosts(unsigned short port, const std::vector<std::string>& extra_names) {
  // Built by insertion: GCC 12 at -O3 reports a false -Wrestrict for ":" + std::to_string(port).
  std::string suffix = std::to_string(port);
  suffix.insert(0, 1, ':');
  std::vector<std::string> hosts{"localhost" + suffix, "127.0.0.1" + suffix, "[::1]" + suffix};
  for (const auto& name : extra_names) {
    // A name without a port means "on our port"; "[v6]" is a bare IPv6 literal, "name:port" is taken as given.
    const bool bare_v6 = !name.empty() && name.front() == '[' && name.back() == ']';
    const bool has_port = !bare_v6 && name.find(':') != std::string::npos;
    hosts.push_back(has_port ? name : name + suffix);
  }
  return hosts;
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

}  // namespace

bool host_allowed(const SecurityPolicy& policy, std::string_view host) { return listed(policy.allowed_hosts, trim(host)); }

OriginVerdict check_origin(const SecurityPolicy& policy, std::optional<std::string_view> origin) {
  if (!origin) return OriginVerdict::NoOrigin;
  const auto value = trim(*origin);
  if (listed(policy.own_origins, value)) return OriginVerdict::SameDaemon;
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
