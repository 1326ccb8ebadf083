#include "pi/PiPermissions.h"

#include "common/NativeJson.h"
#include "common/RulePattern.h"

namespace switchboard::adapters::pi {
namespace {

using nlohmann::json;

bool is_file_edit(std::string_view tool) { return tool == "edit" || tool == "write"; }

// What a rule pattern is matched against: the command line of Pi's shell tool, the path of its file tools.
std::string subject_of(std::string_view tool, const json& input) {
  if (tool == "bash") return native::string_or_empty(input, "command");
  return native::string_or_empty(input, "path");
}

std::string description_of(std::string_view tool, const std::string& subject) {
  if (subject.empty()) return "Use " + std::string(tool);
  if (tool == "bash") return "Run: " + subject;
  if (tool == "read") return "Read " + subject;
  if (tool == "write") return "Write " + subject;
  if (tool == "edit") return "Edit " + subject;
  return "Use " + std::string(tool) + " on " + subject;
}

}  // namespace

bool is_mode(std::string_view mode) {
  for (const auto known : kModes) {
    if (known == mode) return true;
  }
  return false;
}

bool mode_allows(std::string_view mode, std::string_view tool) {
  if (mode == "full-access") return true;
  return mode == "accept-edits" && is_file_edit(tool);
}

AskedAction asked_action(std::string_view tool) {
  if (tool == "bash") return AskedAction::ShellCommand;
  if (is_file_edit(tool)) return AskedAction::FileChange;
  if (tool == "read") return AskedAction::FileRead;
  return AskedAction::Other;
}

std::optional<PermissionAsk> permission_ask(const std::string& id, std::string_view call) {
  const json parsed = native::parse_line(call);
  const auto tool = native::string_at(parsed, "toolName");
  if (parsed.is_discarded() || !tool || tool->empty()) return std::nullopt;
  PermissionAsk ask;
  ask.native_id = id;
  ask.tool = *tool;
  if (const auto* input = native::object_at(parsed, "input")) ask.input = *input;
  ask.subject = subject_of(ask.tool, ask.input);
  ask.description = description_of(ask.tool, ask.subject);
  ask.suggested_rule = native::exact_rule(ask.tool, ask.subject);
  return ask;
}

json permission_answer(const std::string& id, const PermissionAnswer& answer) {
  json decision{{"allow", answer.allow}};
  if (!answer.allow && answer.message && !answer.message->empty()) decision["message"] = *answer.message;
  return json{{"type", "extension_ui_response"}, {"id", id}, {"value", native::dump(decision)}};
}

}  // namespace switchboard::adapters::pi
