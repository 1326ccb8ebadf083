#include "store/RuleStore.h"

#include <utility>

#include <SQLiteCpp/Database.h>
#include <SQLiteCpp/Statement.h>
#include <sqlite3.h>

#include "store/Database.h"
#include "store/StoreWorker.h"

namespace switchboard::store {
namespace {

constexpr const char* kRuleColumns = "id, scope, cwd, tool, pattern, decision, created_at";

const char* to_sql(RuleScope scope) { return scope == RuleScope::Always ? "always" : "project"; }
const char* to_sql(RuleDecision decision) { return decision == RuleDecision::Deny ? "deny" : "allow"; }

PermissionRule read_rule(const SQLite::Statement& row) {
  PermissionRule rule;
  rule.id = row.getColumn(0).getString();
  // The CHECK constraints admit exactly these two spellings of each.
  rule.scope = row.getColumn(1).getString() == "always" ? RuleScope::Always : RuleScope::Project;
  if (!row.getColumn(2).isNull()) rule.cwd = row.getColumn(2).getString();
  rule.tool = row.getColumn(3).getString();
  if (!row.getColumn(4).isNull()) rule.pattern = row.getColumn(4).getString();
  rule.decision = row.getColumn(5).getString() == "deny" ? RuleDecision::Deny : RuleDecision::Allow;
  rule.created_at = row.getColumn(6).getInt64();
  return rule;
}

}  // namespace

void RuleStore::add_rule(PermissionRule rule, StoreCallback<PermissionRule> done) {
  m_worker.submit(
      "add permission rule",
      [rule = std::move(rule)](Database& db) mutable -> StoreResult<PermissionRule> {
        if (rule.scope == RuleScope::Always) rule.cwd.reset();
        if (rule.scope == RuleScope::Project && !rule.cwd) {
          return StoreError{StoreError::Code::Conflict, "add permission rule: a project rule needs a cwd"};
        }
        SQLite::Statement insert(
            db.sql(), std::string("INSERT INTO permission_rules(") + kRuleColumns + ") VALUES (?, ?, ?, ?, ?, ?, ?)");
        insert.bind(1, rule.id);
        insert.bind(2, to_sql(rule.scope));
        if (rule.cwd)
          insert.bind(3, *rule.cwd);
        else
          insert.bind(3);
        insert.bind(4, rule.tool);
        if (rule.pattern)
          insert.bind(5, *rule.pattern);
        else
          insert.bind(5);
        insert.bind(6, to_sql(rule.decision));
        insert.bind(7, rule.created_at);
        try {
          insert.exec();
        } catch (const SQLite::Exception& e) {
          if (e.getExtendedErrorCode() != SQLITE_CONSTRAINT_PRIMARYKEY) throw;
          return StoreError{StoreError::Code::Conflict, "add permission rule: rule " + rule.id + " exists already"};
        }
        return rule;
      },
      std::move(done));
}

void RuleStore::list_rules(std::optional<std::string> cwd, StoreCallback<std::vector<PermissionRule>> done) {
  m_worker.submit(
      "list permission rules",
      [cwd = std::move(cwd)](Database& db) -> StoreResult<std::vector<PermissionRule>> {
        std::string sql = std::string("SELECT ") + kRuleColumns + " FROM permission_rules";
        if (cwd) sql += " WHERE scope = 'always' OR cwd = ?";
        sql += " ORDER BY created_at, id";
        SQLite::Statement query(db.sql(), sql);
        if (cwd) query.bind(1, *cwd);
        std::vector<PermissionRule> rules;
        while (query.executeStep()) rules.push_back(read_rule(query));
        return rules;
      },
      std::move(done));
}

void RuleStore::remove_rule(std::string id, StoreCallback<void> done) {
  m_worker.submit(
      "remove permission rule",
      [id = std::move(id)](Database& db) -> StoreResult<void> {
        SQLite::Statement statement(db.sql(), "DELETE FROM permission_rules WHERE id = ?");
        statement.bind(1, id);
        if (statement.exec() == 0)
          return StoreError{StoreError::Code::NotFound, "remove permission rule: no rule " + id};
        return {};
      },
      std::move(done));
}

}  // namespace switchboard::store
