#include "codex/CodexMessages.h"

#include <algorithm>
#include <array>
#include <cctype>

#include "common/NativeJson.h"
#include "common/OfferedModels.h"

namespace switchboard::adapters::codex {
namespace {

// turn/start takes the sandbox as a policy object, thread/start and thread/resume as a mode name.
nlohmann::json sandbox_policy(std::string_view sandbox) {
  if (sandbox == "read-only") return {{"type", "readOnly"}};
  if (sandbox == "danger-full-access") return {{"type", "dangerFullAccess"}};
  return {{"type", "workspaceWrite"}};
}

bool is_image(const protocol::Attachment& attachment) {
  if (attachment.mime_type) return attachment.mime_type->starts_with("image/");
  std::string path = attachment.path;
  std::transform(path.begin(), path.end(), path.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  static constexpr std::array kExtensions{std::string_view(".png"), std::string_view(".jpg"), std::string_view(".jpeg"),
                                          std::string_view(".gif"), std::string_view(".webp")};
  return std::any_of(kExtensions.begin(), kExtensions.end(), [&](std::string_view ext) { return path.ends_with(ext); });
}

}  // namespace

std::optional<ThreadPolicy> policy_for_mode(std::string_view mode) {
  if (mode == "read-only") return ThreadPolicy{"on-request", "read-only"};
  if (mode == "auto") return ThreadPolicy{"on-request", "workspace-write"};
  if (mode == "untrusted") return ThreadPolicy{"untrusted", "workspace-write"};
  if (mode == "full-access") return ThreadPolicy{"never", "danger-full-access"};
  return std::nullopt;
}

nlohmann::json thread_params(const ThreadOptions& options) {
  nlohmann::json params = nlohmann::json::object();
  if (!options.cwd.empty()) params["cwd"] = options.cwd;
  params["approvalPolicy"] = options.policy.approval_policy;
  params["sandbox"] = options.policy.sandbox;
  if (options.model) params["model"] = *options.model;
  return params;
}

nlohmann::json model_list_params() { return {{"limit", kModelListPage}}; }

std::vector<protocol::ModelInfo> offered_models(const nlohmann::json& model_list_result) {
  const auto* data = native::array_at(model_list_result, "data");
  if (data == nullptr) return {};
  // `model` is what turn/start takes; `id` names the catalogue entry.
  return native::offered_models(*data, {.id = "model", .name = "displayName", .is_default = "isDefault", .hidden = "hidden"});
}

nlohmann::json initialize_params(std::string_view client_name, std::string_view client_version) {
  return {{"clientInfo", {{"name", client_name}, {"version", client_version}}}, {"capabilities", {{"experimentalApi", false}}}};
}

nlohmann::json reopen_thread_params(std::string_view thread_id, const ThreadOptions& options) {
  nlohmann::json params = thread_params(options);
  params["threadId"] = thread_id;
  params["excludeTurns"] = true;
  return params;
}

nlohmann::json turn_start_params(std::string_view thread_id, std::string_view text,
                                 const std::vector<protocol::Attachment>& attachments,
                                 const std::optional<ThreadPolicy>& policy, const std::optional<std::string>& model) {
  nlohmann::json params = {{"threadId", thread_id}, {"input", turn_input(text, attachments)}};
  if (policy) {
    params["approvalPolicy"] = policy->approval_policy;
    params["sandboxPolicy"] = sandbox_policy(policy->sandbox);
  }
  if (model) params["model"] = *model;
  return params;
}

nlohmann::json turn_interrupt_params(std::string_view thread_id, std::string_view turn_id) {
  return {{"threadId", thread_id}, {"turnId", turn_id}};
}

std::string_view to_string(ApprovalDecision decision) {
  switch (decision) {
    case ApprovalDecision::Accept: return "accept";
    case ApprovalDecision::AcceptForSession: return "acceptForSession";
    case ApprovalDecision::Decline: return "decline";
    case ApprovalDecision::Cancel: return "cancel";
  }
  return "decline";
}

nlohmann::json approval_result(ApprovalDecision decision) { return {{"decision", to_string(decision)}}; }

nlohmann::json turn_input(std::string_view text, const std::vector<protocol::Attachment>& attachments) {
  nlohmann::json input = nlohmann::json::array();
  input.push_back({{"type", "text"}, {"text", text}});
  std::string referenced;
  for (const auto& attachment : attachments) {
    if (is_image(attachment)) {
      input.push_back({{"type", "localImage"}, {"path", attachment.path}});
    } else {
      referenced += "\n- " + attachment.path;
    }
  }
  if (!referenced.empty()) input.push_back({{"type", "text"}, {"text", "Attached files (read them as needed):" + referenced}});
  return input;
}

}  // namespace switchboard::adapters::codex
