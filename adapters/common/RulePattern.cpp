#include "common/RulePattern.h"

namespace switchboard::adapters::native {

std::string literal_pattern(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    if (c == '*' || c == '?' || c == '[' || c == ']' || c == '\\') out += '\\';
    out += c;
  }
  return out;
}

std::optional<protocol::PermissionRule> exact_rule(std::string_view tool, std::string_view subject) {
  if (subject.empty()) return std::nullopt;
  return protocol::PermissionRule{std::string(tool), literal_pattern(subject)};
}

}  // namespace switchboard::adapters::native
