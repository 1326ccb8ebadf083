#include "claude-code/ClaudeMessages.h"

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

nlohmann::json user_message(std::string_view text, const std::vector<PreparedAttachment>& attachments) {
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
  return {{"type", "user"},
          {"session_id", ""},
          {"parent_tool_use_id", nullptr},
          {"message", {{"role", "user"}, {"content", std::move(content)}}}};
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
