#include "codex/CodexMessages.h"

#include <algorithm>
#include <array>
#include <cctype>

#include "common/NativeJson.h"

namespace switchboard::adapters::codex {
namespace {

// turn/start takes the sandbox as a policy object, thread/start and thread/resume as a mode name.
nlohmann::json sandbox_policy(std::string_view sandbox) {
  if (sandbox == "read-only") return {{"type", "readOnly"}};
  if (sandbox == "danger-full-access") return {{"type", "dangerFullAccess"}};
  return {{"type", "workspaceWrite"}};
}

nlohmann::json thread_params(const ThreadOptions& options) {
  nlohmann::json params = nlohmann::json::object();
  if (!options.cwd.empty()) params["cwd"] = options.cwd;
  params["approvalPolicy"] = options.policy.approval_policy;
  params["sandbox"] = options.policy.sandbox;
  if (options.model) params["model"] = *options.model;
  return params;
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

OutgoingRequest CodexRequests::request(RequestKind kind, std::string_view method, nlohmann::json params) {
  OutgoingRequest out;
  out.id = m_next++;
  out.kind = kind;
  out.message = {{"method", method}, {"id", out.id}, {"params", std::move(params)}};
  return out;
}

OutgoingRequest CodexRequests::initialize(std::string_view client_name, std::string_view client_version) {
  return request(RequestKind::Initialize, "initialize",
                 {{"clientInfo", {{"name", client_name}, {"version", client_version}}},
                  {"capabilities", {{"experimentalApi", false}}}});
}

OutgoingRequest CodexRequests::thread_start(const ThreadOptions& options) {
  return request(RequestKind::ThreadStart, "thread/start", thread_params(options));
}

OutgoingRequest CodexRequests::thread_resume(std::string_view thread_id, const ThreadOptions& options) {
  nlohmann::json params = thread_params(options);
  params["threadId"] = thread_id;
  params["excludeTurns"] = true;
  return request(RequestKind::ThreadResume, "thread/resume", std::move(params));
}

OutgoingRequest CodexRequests::thread_fork(std::string_view thread_id, const ThreadOptions& options) {
  nlohmann::json params = thread_params(options);
  params["threadId"] = thread_id;
  params["excludeTurns"] = true;
  return request(RequestKind::ThreadFork, "thread/fork", std::move(params));
}

OutgoingRequest CodexRequests::turn_start(std::string_view thread_id, std::string_view text,
                                          const std::vector<protocol::Attachment>& attachments,
                                          const std::optional<ThreadPolicy>& policy,
                                          const std::optional<std::string>& model) {
  nlohmann::json params = {{"threadId", thread_id}, {"input", turn_input(text, attachments)}};
  if (policy) {
    params["approvalPolicy"] = policy->approval_policy;
    params["sandboxPolicy"] = sandbox_policy(policy->sandbox);
  }
  if (model) params["model"] = *model;
  return request(RequestKind::TurnStart, "turn/start", std::move(params));
}

OutgoingRequest CodexRequests::turn_interrupt(std::string_view thread_id, std::string_view turn_id) {
  return request(RequestKind::TurnInterrupt, "turn/interrupt", {{"threadId", thread_id}, {"turnId", turn_id}});
}

nlohmann::json initialized_notification() { return {{"method", "initialized"}, {"params", nlohmann::json::object()}}; }

std::string_view to_string(ApprovalDecision decision) {
  switch (decision) {
    case ApprovalDecision::Accept: return "accept";
    case ApprovalDecision::AcceptForSession: return "acceptForSession";
    case ApprovalDecision::Decline: return "decline";
    case ApprovalDecision::Cancel: return "cancel";
  }
  return "decline";
}

nlohmann::json approval_response(const nlohmann::json& request_id, ApprovalDecision decision) {
  return {{"id", request_id}, {"result", {{"decision", to_string(decision)}}}};
}

nlohmann::json error_response(const nlohmann::json& request_id, int code, std::string_view message) {
  return {{"id", request_id}, {"error", {{"code", code}, {"message", message}}}};
}

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

std::string to_line(const nlohmann::json& message) { return native::dump(message) + '\n'; }

}  // namespace switchboard::adapters::codex
