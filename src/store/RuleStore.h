#pragma once

#include <optional>
#include <string>
#include <vector>

#include "store/StoreError.h"
#include "store/StoreRecords.h"

namespace switchboard::store {

class StoreWorker;

// Asynchronous access to the remembered permission rules, like SessionStore: jobs on the StoreWorker,
// results on the reactor thread. Owned by Store.
class RuleStore {
 public:
  explicit RuleStore(StoreWorker& worker) : m_worker(worker) {}

  // Conflict if the id exists; Conflict too for a Project rule without a cwd. Gets the stored rule.
  void add_rule(PermissionRule rule, StoreCallback<PermissionRule> done);
  // Without a cwd: every rule. With one: the rules that apply there, i.e. its Project rules and every Always
  // rule. Oldest first (the order they were answered in).
  void list_rules(std::optional<std::string> cwd, StoreCallback<std::vector<PermissionRule>> done);
  // NotFound if there is no such rule.
  void remove_rule(std::string id, StoreCallback<void> done);

 private:
  StoreWorker& m_worker;
};

}  // namespace switchboard::store
