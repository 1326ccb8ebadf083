#include "engine/RuleBook.h"

#include <fnmatch.h>

#include <algorithm>

#include "switchboard/support/Clock.h"
#include "switchboard/support/RandomId.h"

namespace switchboard::engine {

bool rule_matches(const protocol::PermissionRule& rule, const std::string& tool, const std::string& subject) {
  if (rule.tool != tool) return false;
  if (!rule.pattern) return true;
  return ::fnmatch(rule.pattern->c_str(), subject.c_str(), 0) == 0;
}

std::optional<RuleBook::Match> RuleBook::find(const std::string& session_id, const std::string& cwd,
                                              const std::string& tool, const std::string& subject) const {
  std::optional<Match> allow;
  for (const auto& remembered : m_rules) {
    const bool applies = remembered.scope == protocol::RuleScope::Always ||
                         (remembered.scope == protocol::RuleScope::Project && remembered.cwd == cwd) ||
                         (remembered.scope == protocol::RuleScope::Session && remembered.session_id == session_id);
    if (!applies || !rule_matches(remembered.rule, tool, subject)) continue;
    if (remembered.decision == protocol::RememberedRuleDecision::Deny) return Match{remembered, false};
    if (!allow) allow = Match{remembered, true};
  }
  return allow;
}

protocol::RememberedRule RuleBook::add(protocol::RuleScope scope, const std::string& session_id, const std::string& cwd,
                                       protocol::PermissionRule rule, bool allow) {
  protocol::RememberedRule remembered;
  remembered.rule_id = random_id("rule-", 6);
  remembered.scope = scope;
  if (scope == protocol::RuleScope::Session) remembered.session_id = session_id;
  if (scope == protocol::RuleScope::Project) remembered.cwd = cwd;
  remembered.rule = std::move(rule);
  remembered.decision = allow ? protocol::RememberedRuleDecision::Allow : protocol::RememberedRuleDecision::Deny;
  remembered.created_at = unix_millis_now();
  m_rules.push_back(remembered);
  return remembered;
}

const protocol::RememberedRule* RuleBook::get(const std::string& rule_id) const {
  const auto it = std::find_if(m_rules.begin(), m_rules.end(), [&](const auto& r) { return r.rule_id == rule_id; });
  return it == m_rules.end() ? nullptr : &*it;
}

bool RuleBook::remove(const std::string& rule_id) {
  return std::erase_if(m_rules, [&](const auto& r) { return r.rule_id == rule_id; }) > 0;
}

void RuleBook::forget_session(const std::string& session_id) {
  std::erase_if(m_rules, [&](const auto& r) { return r.scope == protocol::RuleScope::Session && r.session_id == session_id; });
}

std::vector<protocol::RememberedRule> RuleBook::list(const std::optional<std::string>& session_id,
                                                     const std::optional<std::string>& cwd) const {
  std::vector<protocol::RememberedRule> out;
  for (const auto& r : m_rules) {
    if (session_id && r.scope == protocol::RuleScope::Session && r.session_id != session_id) continue;
    if (cwd && r.scope == protocol::RuleScope::Project && r.cwd != cwd) continue;
    out.push_back(r);
  }
  return out;
}

}  // namespace switchboard::engine
