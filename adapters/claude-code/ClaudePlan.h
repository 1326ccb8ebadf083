#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "switchboard/protocol/generated/Types.h"

namespace switchboard::adapters::claude {

// Claude Code's plan, rebuilt from its task tools as the stream shows them. Claude Code 2.1 keeps a task list the
// model edits one task at a time (TaskCreate → "Task #1 created", TaskUpdate {taskId, status, subject}); older
// versions, and sessions with the task tools off, write the whole list at once (TodoWrite {todos}). A call counts
// once its result says it succeeded, so a refused or failed call never shows in the plan.
//
// Fed by the live translator and the history reader alike; it does no I/O.
class ClaudePlan {
 public:
  // An assistant tool_use block: remembered when it is one of the plan tools.
  void tool_called(const std::string& tool_use_id, const std::string& tool, const nlohmann::json& input);
  // The result of a call (`structured`: the line's tool_use_result / toolUseResult, if any). True when the plan
  // changed; entries() then holds the whole new plan.
  bool tool_finished(const std::string& tool_use_id, bool is_error, const nlohmann::json& structured);

  std::vector<protocol::PlanEntry> entries() const;

 private:
  struct Task {
    std::string subject;
    protocol::PlanEntryStatus status = protocol::PlanEntryStatus::Pending;
  };
  struct Call {
    std::string tool;
    nlohmann::json input;
  };

  bool apply_update(const nlohmann::json& input);

  std::map<std::string, Call> m_calls;  // by tool_use_id, until their result
  // TaskCreate's ids are numbers as text ("1", "2", …); ordered by that number, the list reads as created.
  std::map<long long, Task> m_numbered;
  std::map<std::string, Task> m_named;  // ids that are not numbers, after the numbered ones
  std::optional<std::vector<protocol::PlanEntry>> m_todos;  // the last TodoWrite list, when that tool is used
};

}  // namespace switchboard::adapters::claude
