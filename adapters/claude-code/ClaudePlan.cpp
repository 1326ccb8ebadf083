#include "claude-code/ClaudePlan.h"

#include <charconv>

#include "common/NativeJson.h"

namespace switchboard::adapters::claude {
namespace {

std::optional<protocol::PlanEntryStatus> status_from(std::string_view status) {
  if (status == "pending") return protocol::PlanEntryStatus::Pending;
  if (status == "in_progress") return protocol::PlanEntryStatus::InProgress;
  if (status == "completed") return protocol::PlanEntryStatus::Completed;
  return std::nullopt;
}

std::optional<long long> number_of(const std::string& id) {
  long long value = 0;
  const auto* end = id.data() + id.size();
  const auto [ptr, error] = std::from_chars(id.data(), end, value);
  if (error != std::errc() || ptr != end || id.empty()) return std::nullopt;
  return value;
}

// A task id as the tools give it: a string, or a number in some inputs.
std::optional<std::string> id_at(const nlohmann::json& object, std::string_view key) {
  const auto* value = native::member(object, key);
  if (value == nullptr) return std::nullopt;
  if (value->is_string()) return value->get<std::string>();
  if (value->is_number_integer()) return std::to_string(value->get<long long>());
  return std::nullopt;
}

}  // namespace

void ClaudePlan::tool_called(const std::string& tool_use_id, const std::string& tool, const nlohmann::json& input) {
  if (tool != "TaskCreate" && tool != "TaskUpdate" && tool != "TodoWrite") return;
  if (tool_use_id.empty() || !input.is_object()) return;
  m_calls[tool_use_id] = Call{tool, input};
}

bool ClaudePlan::tool_finished(const std::string& tool_use_id, bool is_error, const nlohmann::json& structured) {
  const auto it = m_calls.find(tool_use_id);
  if (it == m_calls.end()) return false;
  const Call call = std::move(it->second);
  m_calls.erase(it);
  if (is_error) return false;

  if (call.tool == "TodoWrite") {
    const auto* todos = native::array_at(call.input, "todos");
    if (todos == nullptr) return false;
    std::vector<protocol::PlanEntry> entries;
    for (const auto& todo : *todos) {
      if (!todo.is_object()) continue;
      const auto status = status_from(native::string_or_empty(todo, "status"));
      const auto content = native::string_or_empty(todo, "content");
      if (!status || content.empty()) continue;
      entries.push_back(protocol::PlanEntry{content, *status, std::nullopt});
    }
    m_todos = std::move(entries);
    return true;
  }
  if (call.tool == "TaskCreate") {
    // The new task's id is only in the result: {"task": {"id": "1", "subject": "…"}}.
    const auto* task = native::object_at(structured, "task");
    const auto id = task != nullptr ? id_at(*task, "id") : std::nullopt;
    const auto subject = native::string_or_empty(call.input, "subject");
    if (!id || subject.empty()) return false;
    Task created{subject, protocol::PlanEntryStatus::Pending};
    if (const auto number = number_of(*id)) {
      m_numbered[*number] = std::move(created);
    } else {
      m_named[*id] = std::move(created);
    }
    return true;
  }
  // TaskUpdate: {"success": false} is a failed update even when the tool result is no error.
  if (structured.is_object() && !native::bool_or(structured, "success", true)) return false;
  return apply_update(call.input);
}

bool ClaudePlan::apply_update(const nlohmann::json& input) {
  const auto id = id_at(input, "taskId");
  if (!id) return false;
  const auto number = number_of(*id);
  const std::string status = native::string_or_empty(input, "status");
  if (status == "deleted") return number ? m_numbered.erase(*number) > 0 : m_named.erase(*id) > 0;
  // A task created before this process started (a resumed conversation) is known from its first update on.
  Task& task = number ? m_numbered[*number] : m_named[*id];
  if (auto subject = native::string_at(input, "subject"); subject && !subject->empty()) task.subject = *subject;
  if (task.subject.empty()) task.subject = "Task #" + *id;
  if (const auto parsed = status_from(status)) task.status = *parsed;
  return true;
}

std::vector<protocol::PlanEntry> ClaudePlan::entries() const {
  std::vector<protocol::PlanEntry> entries;
  if (m_todos) entries = *m_todos;
  for (const auto& [number, task] : m_numbered) entries.push_back(protocol::PlanEntry{task.subject, task.status, std::nullopt});
  for (const auto& [id, task] : m_named) entries.push_back(protocol::PlanEntry{task.subject, task.status, std::nullopt});
  return entries;
}

}  // namespace switchboard::adapters::claude
