#include "run/RuleText.h"

namespace switchboard::run {

std::variant<protocol::PermissionRule, std::string> parse_rule(std::string_view text) {
  const auto open = text.find('(');
  protocol::PermissionRule rule;
  if (open == std::string_view::npos) {
    if (text.empty()) return std::string("a rule names a tool: Tool or Tool(glob)");
    if (text.find(')') != std::string_view::npos) return "unbalanced ')' in rule " + std::string(text);
    rule.tool = std::string(text);
    return rule;
  }
  if (open == 0) return "a rule names a tool before its '(': " + std::string(text);
  if (text.back() != ')') return "a rule's glob ends with ')': " + std::string(text);
  rule.tool = std::string(text.substr(0, open));
  if (rule.tool.find(')') != std::string::npos) return "unbalanced ')' in rule " + std::string(text);
  const auto glob = text.substr(open + 1, text.size() - open - 2);
  if (glob.empty()) return "empty glob in rule " + std::string(text) + " (write the tool alone for every use)";
  rule.pattern = std::string(glob);
  return rule;
}

}  // namespace switchboard::run
