#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace switchboard::store {

// The rows of the session-side tables, as plain values. Times are Unix epoch milliseconds (as on the wire).
// Text fields without a value are empty strings (the columns are NOT NULL DEFAULT '').

struct SessionRecord {
  std::string id;
  std::string agent;
  std::string cwd;
  std::string title;
  std::string model;
  std::string mode;
  bool archived = false;
  std::string state;
  std::int64_t created_at = 0;
  std::int64_t updated_at = 0;
  // The seq of the session's newest stored event; the event log raises it with each commit.
  std::uint64_t last_seq = 0;
  // JSON written and read by the caller ('' = none): the MCP servers given at creation, the option values
  // chosen (an object), the fork origin, the agent's latest plan and context usage.
  std::string mcp_servers;
  std::string option_values;
  std::string forked_from;
  std::string plan;
  std::string context_usage;
  // The session's own git worktree (JSON, '' = none): where it is, its branch, its base, its repository.
  std::string worktree;
};

// The fields update_session may change; absent fields keep their value. updated_at defaults to now.
struct SessionUpdate {
  std::optional<std::string> title;
  std::optional<std::string> model;
  std::optional<std::string> mode;
  std::optional<std::string> state;
  std::optional<bool> archived;
  std::optional<std::int64_t> updated_at;
  std::optional<std::string> option_values;
  std::optional<std::string> plan;
  std::optional<std::string> context_usage;
  std::optional<std::string> worktree;
};

// Where a page of the newest-first session list ended. Sessions are ordered by (created_at, id) descending:
// creation time never changes, so paging is stable while sessions are updated (ordering by updated_at would
// move sessions between pages as they are used). encode() gives an opaque token for the wire.
struct SessionCursor {
  std::int64_t created_at = 0;
  std::string id;

  std::string encode() const;
  static std::optional<SessionCursor> decode(std::string_view token);
};

struct SessionQuery {
  std::optional<std::string> agent;
  std::optional<std::string> cwd;
  std::optional<bool> archived;
  // In the title or the directory, ASCII letters matching either case (session.list's text filter).
  std::optional<std::string> text;
  std::size_t limit = 50;              // clamped to [1, 1000]
  std::optional<SessionCursor> after;  // the previous page's `next`
};

struct SessionPage {
  std::vector<SessionRecord> sessions;
  std::optional<SessionCursor> next;  // absent on the last page
};

// One run of an agent process for a session: binds our session id to the provider's own session id (what
// the agent CLI needs to resume).
struct RunRecord {
  std::int64_t id = 0;
  std::string session_id;
  std::string provider_session_id;
  std::int64_t started_at = 0;
  std::optional<std::int64_t> ended_at;
  // The session is to continue a fork of provider_session_id, made at its agent's next start (an imported
  // conversation another session continues, or a session.fork); the fork's own id then becomes a newer run.
  bool fork = false;
  // With fork: the agent's reference of the last turn the fork keeps (absent: all of the conversation).
  std::optional<std::string> fork_through;
};

// One ended turn of a session, in the session's order.
struct TurnRow {
  std::string turn_id;
  std::optional<std::string> native_ref;  // the agent's own handle on the turn, if it named one
  bool rewound = false;
};

// A turn cut short by a daemon exit or crash, kept so it can be offered for resumption. At most one per session.
struct InterruptedTurn {
  std::string session_id;
  std::string turn_id;
  std::string prompt_json;
  std::int64_t interrupted_at = 0;
};

enum class RuleScope { Project, Always };
enum class RuleDecision { Allow, Deny };

// A remembered answer to a permission prompt. A Project rule applies in its cwd only (cwd is required); an
// Always rule applies everywhere (cwd is ignored and stored as NULL). pattern narrows the rule to matching
// tool inputs; absent means every use of the tool.
struct PermissionRule {
  std::string id;
  RuleScope scope = RuleScope::Project;
  std::optional<std::string> cwd;
  std::string tool;
  std::optional<std::string> pattern;
  RuleDecision decision = RuleDecision::Allow;
  std::int64_t created_at = 0;
};

}  // namespace switchboard::store
