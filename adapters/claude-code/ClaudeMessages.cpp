#include "claude-code/ClaudeMessages.h"

#include <algorithm>
#include <array>

#include "common/NativeJson.h"
#include "common/OfferedModels.h"

namespace switchboard::adapters::claude {
namespace {

nlohmann::json control_request(std::string_view request_id, nlohmann::json request) {
  return {{"type", "control_request"}, {"request_id", request_id}, {"request", std::move(request)}};
}

nlohmann::json control_success(std::string_view request_id, nlohmann::json response) {
  return {{"type", "control_response"},
          {"response", {{"subtype", "success"}, {"request_id", request_id}, {"response", std::move(response)}}}};
}

// The CLI runs the tool with `updatedInput` (an allow without it fails the tool), so it is always sent: the
// input the CLI asked about, or for a question that input with the answers added.
nlohmann::json allow(const ToolRequest& request, const nlohmann::json& input) {
  return control_success(request.request_id, {{"behavior", "allow"}, {"updatedInput", input.is_object() ? input : request.input}});
}

nlohmann::json deny(const ToolRequest& request, std::string message) {
  return control_success(request.request_id, {{"behavior", "deny"}, {"message", std::move(message)}});
}

}  // namespace

nlohmann::json user_message(std::string_view text, const std::vector<PreparedAttachment>& attachments, std::string_view uuid) {
  nlohmann::json content = nlohmann::json::array();
  std::string referenced;
  for (const auto& attachment : attachments) {
    if (attachment.media_type) {
      content.push_back({{"type", "image"},
                         {"source", {{"type", "base64"}, {"media_type", *attachment.media_type}, {"data", attachment.base64_data}}}});
      continue;
    }
    referenced += "\n- " + attachment.path;
    if (attachment.note) referenced += " (" + *attachment.note + ")";
  }
  // The API refuses empty text blocks.
  if (!text.empty()) content.push_back({{"type", "text"}, {"text", text}});
  if (!referenced.empty()) content.push_back({{"type", "text"}, {"text", "Attached files (read them as needed):" + referenced}});
  if (content.empty()) content.push_back({{"type", "text"}, {"text", " "}});
  nlohmann::json message{{"type", "user"},
                         {"session_id", ""},
                         {"parent_tool_use_id", nullptr},
                         {"message", {{"role", "user"}, {"content", std::move(content)}}}};
  if (!uuid.empty()) message["uuid"] = uuid;
  return message;
}

nlohmann::json permission_response(const ToolRequest& request, const PermissionAnswer& answer) {
  if (answer.allow) return allow(request, request.input);
  if (answer.message && !answer.message->empty()) return deny(request, *answer.message);
  if (request.kind == ToolRequestKind::PlanApproval) {
    return deny(request, "The user did not approve the plan. Stay in plan mode and revise it.");
  }
  return deny(request, "The user denied permission to use " + request.tool + ".");
}

nlohmann::json question_response(const ToolRequest& request, const QuestionAnswer& answer) {
  if (answer.rejected) return deny(request, "The user declined to answer.");
  nlohmann::json input = request.input.is_object() ? request.input : nlohmann::json::object();
  nlohmann::json answers = nlohmann::json::object();
  if (const auto* questions = native::array_at(input, "questions")) {
    std::size_t next_answer = 0;
    for (const auto& question : *questions) {
      // question_ask() skipped questions without text, so answers count only the questions that have one.
      const auto text = native::string_at(question, "question");
      if (!text || text->empty()) continue;
      if (next_answer >= answer.answers.size()) break;
      answers[*text] = answer.answers[next_answer++];
    }
  }
  input["answers"] = std::move(answers);
  return allow(request, input);
}

nlohmann::json control_error(std::string_view request_id, std::string_view message) {
  return {{"type", "control_response"}, {"response", {{"subtype", "error"}, {"request_id", request_id}, {"error", message}}}};
}

nlohmann::json initialize_request(std::string_view request_id) {
  return control_request(request_id, {{"subtype", "initialize"}});
}

nlohmann::json interrupt_request(std::string_view request_id) {
  return control_request(request_id, {{"subtype", "interrupt"}});
}

nlohmann::json set_permission_mode_request(std::string_view request_id, std::string_view mode) {
  return control_request(request_id, {{"subtype", "set_permission_mode"}, {"mode", mode}});
}

nlohmann::json set_model_request(std::string_view request_id, std::string_view model) {
  return control_request(request_id, {{"subtype", "set_model"}, {"model", model}});
}

nlohmann::json get_context_usage_request(std::string_view request_id) {
  return control_request(request_id, {{"subtype", "get_context_usage"}});
}

nlohmann::json mcp_status_request(std::string_view request_id) { return control_request(request_id, {{"subtype", "mcp_status"}}); }

nlohmann::json set_effort_request(std::string_view request_id, std::string_view effort) {
  return control_request(request_id, {{"subtype", "apply_flag_settings"}, {"settings", {{"effortLevel", effort}}}});
}

nlohmann::json rewind_conversation_request(std::string_view request_id, std::string_view prompt_uuid) {
  return control_request(request_id, {{"subtype", "rewind_conversation"}, {"target_message_uuid", prompt_uuid}});
}

namespace {
// clear starts another conversation under the session (its turns could no longer be forked or rewound; a new
// session does this); heapdump writes the CLI's own memory to disk for its developers.
constexpr std::array kLeftOutCommands{std::string_view("clear"), std::string_view("heapdump")};
constexpr std::array kEffortLevels{std::string_view("low"), std::string_view("medium"), std::string_view("high"),
                                   std::string_view("xhigh"), std::string_view("max")};
}  // namespace

std::vector<protocol::AgentCommand> offered_commands(const nlohmann::json& list) {
  std::vector<protocol::AgentCommand> commands;
  if (!list.is_array()) return commands;
  for (const auto& entry : list) {
    auto name = native::string_or_empty(entry, "name");
    if (name.empty() || std::find(kLeftOutCommands.begin(), kLeftOutCommands.end(), name) != kLeftOutCommands.end()) continue;
    protocol::AgentCommand command;
    command.name = std::move(name);
    if (auto description = native::string_at(entry, "description"); description && !description->empty()) command.description = std::move(*description);
    if (auto hint = native::string_at(entry, "argumentHint"); hint && !hint->empty()) command.argument_hint = std::move(*hint);
    commands.push_back(std::move(command));
  }
  return commands;
}

std::vector<std::string> effort_levels() { return {kEffortLevels.begin(), kEffortLevels.end()}; }

bool is_effort_level(std::string_view effort) {
  return std::find(kEffortLevels.begin(), kEffortLevels.end(), effort) != kEffortLevels.end();
}

std::vector<protocol::SessionOption> session_options(std::string_view current_effort) {
  protocol::SessionOption effort;
  effort.id = "effort";
  effort.name = "Effort";
  effort.description = "How much the model thinks and works before it answers (Claude Code's effort level)";
  effort.kind = protocol::SessionOptionKind::Select;
  for (const auto level : kEffortLevels) effort.values.push_back(protocol::SessionOptionValue{std::string(level), std::nullopt, std::nullopt});
  effort.current_value = std::string(current_effort);
  return {std::move(effort)};
}

namespace {
constexpr std::array kPermissionModes{std::string_view("default"), std::string_view("acceptEdits"), std::string_view("plan"),
                                      std::string_view("bypassPermissions"), std::string_view("dontAsk")};
}  // namespace

std::vector<std::string> permission_modes() { return {kPermissionModes.begin(), kPermissionModes.end()}; }

bool is_permission_mode(std::string_view mode) {
  for (auto known : kPermissionModes) {
    if (known == mode) return true;
  }
  return false;
}

std::vector<protocol::ModelInfo> offered_models(const nlohmann::json& initialize_response) {
  const auto* list = native::array_at(initialize_response, "models");
  if (list == nullptr) return {};
  auto models = native::offered_models(*list, {.id = "value", .name = "displayName"});
  for (auto& model : models) {
    if (model.id == "default") model.is_default = true;
  }
  return models;
}

std::string to_line(const nlohmann::json& message) { return native::dump(message) + '\n'; }

}  // namespace switchboard::adapters::claude
