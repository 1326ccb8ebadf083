#pragma once

#include <optional>
#include <string>
#include <vector>

#include "switchboard/protocol/generated/Types.h"

namespace switchboard::engine {

// Remembered permission decisions: for a session, for a project (working directory) or always. The engine asks
// the book before asking anyone, so a tool the user allowed "for this project" is not asked about again.
// Deny rules win over allow rules when both match. Persistence of project/always rules is the store's job; the
// book holds what is in force.
class RuleBook {
 public:
  struct Match {
    protocol::RememberedRule rule;
    bool allow;
  };

  // The rule that decides `tool` with `subject` in session `session_id` working in `cwd`, if any.
  std::optional<Match> find(const std::string& session_id, const std::string& cwd, const std::string& tool,
                            const std::string& subject) const;

  protocol::RememberedRule add(protocol::RuleScope scope, const std::string& session_id, const std::string& cwd,
                               protocol::PermissionRule rule, bool allow);
  // Puts back a rule remembered by an earlier run of the daemon (from the store), id and all.
  void restore(protocol::RememberedRule rule) { m_rules.push_back(std::move(rule)); }
  const protocol::RememberedRule* get(const std::string& rule_id) const;
  bool remove(const std::string& rule_id);
  void forget_session(const std::string& session_id);
  std::vector<protocol::RememberedRule> list(const std::optional<std::string>& session_id,
                                             const std::optional<std::string>& cwd) const;

 private:
  std::vector<protocol::RememberedRule> m_rules;
};

// Glob match (`*` any run, `?` one character) of a rule pattern against a subject; a rule without a pattern
// matches every subject.
bool rule_matches(const protocol::PermissionRule& rule, const std::string& tool, const std::string& subject);

}  // namespace switchboard::engine
