#include "codex/CodexMessages.h"

#include <algorithm>
#include <array>
#include <cctype>

#include "codex/CodexLaunch.h"
#include "common/McpServers.h"
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

nlohmann::json thread_config(const std::vector<protocol::McpServer>& mcp_servers) {
  // Codex 0.171.0 offers update_plan only when configured so (`true` is refused, an empty table leaves it off).
  nlohmann::json config = {{"tools", {{"update_plan", {{"enabled", true}}}}}};
  if (mcp_servers.empty()) return config;
  nlohmann::json servers = nlohmann::json::object();
  for (const auto& server : mcp_servers) {
    nlohmann::json entry = nlohmann::json::object();
    if (server.transport == protocol::McpTransport::Http) {
      entry["url"] = server.url.value_or("");
      if (server.headers && server.headers->is_object() && !server.headers->empty()) entry["http_headers"] = *server.headers;
    } else {
      entry["command"] = server.command.value_or("");
      entry["args"] = server.args.value_or(std::vector<std::string>{});
      // Codex passes a server few of its own variables, but the key we gave it must never be one of them.
      entry["env"] = stdio_server_environment(server, {std::string(kApiKeyVariable)});
    }
    servers[server.name] = std::move(entry);
  }
  config["mcp_servers"] = std::move(servers);
  // A turn waits this long for the session's servers still starting, so that their tools are there from the first
  // turn on (without it, a server slower than the thread's start is missing from the first request).
  config["mcp_optional_startup_grace_ms"] = kMcpStartupGraceMs;
  return config;
}

nlohmann::json thread_params(const ThreadOptions& options) {
  nlohmann::json params = nlohmann::json::object();
  if (!options.cwd.empty()) params["cwd"] = options.cwd;
  params["approvalPolicy"] = options.policy.approval_policy;
  params["sandbox"] = options.policy.sandbox;
  if (options.model) params["model"] = *options.model;
  params["config"] = thread_config(options.mcp_servers);
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

nlohmann::json fork_thread_params(std::string_view thread_id, const ThreadOptions& options,
                                  const std::optional<std::string>& last_turn_id) {
  nlohmann::json params = reopen_thread_params(thread_id, options);
  if (last_turn_id) params["lastTurnId"] = *last_turn_id;
  return params;
}

nlohmann::json turn_start_params(std::string_view thread_id, std::string_view text,
                                 const std::vector<protocol::Attachment>& attachments, const TurnChanges& changes,
                                 const std::optional<SkillRef>& skill) {
  nlohmann::json input = turn_input(text, attachments);
  if (skill) input.push_back({{"type", "skill"}, {"name", skill->name}, {"path", skill->path}});
  nlohmann::json params = {{"threadId", thread_id}, {"input", std::move(input)}};
  if (changes.policy) {
    params["approvalPolicy"] = changes.policy->approval_policy;
    params["sandboxPolicy"] = sandbox_policy(changes.policy->sandbox);
  }
  if (changes.model) params["model"] = *changes.model;
  if (changes.effort) params["effort"] = *changes.effort;
  return params;
}

nlohmann::json turn_interrupt_params(std::string_view thread_id, std::string_view turn_id) {
  return {{"threadId", thread_id}, {"turnId", turn_id}};
}

nlohmann::json thread_revert_params(std::string_view thread_id, std::string_view turn_id) {
  return {{"threadId", thread_id}, {"beforeTurnId", turn_id}};
}

nlohmann::json skills_list_params(std::string_view cwd) {
  nlohmann::json params = nlohmann::json::object();
  if (!cwd.empty()) params["cwds"] = nlohmann::json::array({cwd});
  return params;
}

std::vector<OfferedSkill> offered_skills(const nlohmann::json& skills_list_result) {
  std::vector<OfferedSkill> skills;
  const auto* data = native::array_at(skills_list_result, "data");
  if (data == nullptr) return skills;
  for (const auto& entry : *data) {
    const auto* listed = native::array_at(entry, "skills");
    if (listed == nullptr) continue;
    for (const auto& skill : *listed) {
      const std::string name = native::string_or_empty(skill, "name");
      const std::string path = native::string_or_empty(skill, "path");
      if (name.empty() || path.empty() || !native::bool_or(skill, "enabled", true)) continue;
      // Several working directories may list the same skill: the first is kept.
      if (std::any_of(skills.begin(), skills.end(), [&](const OfferedSkill& known) { return known.command.name == name; })) continue;
      protocol::AgentCommand command;
      command.name = name;
      std::string description = native::string_or_empty(skill, "description");
      if (description.empty()) description = native::string_or_empty(skill, "shortDescription");
      if (!description.empty()) command.description = std::move(description);
      skills.push_back(OfferedSkill{std::move(command), path});
    }
  }
  return skills;
}

std::optional<ReasoningEfforts> reasoning_efforts(const nlohmann::json& model_list_result, const std::optional<std::string>& model) {
  const auto* data = native::array_at(model_list_result, "data");
  if (data == nullptr) return std::nullopt;
  const nlohmann::json* chosen = nullptr;
  for (const auto& entry : *data) {
    if (model && native::string_or_empty(entry, "model") == *model) chosen = &entry;
  }
  if (chosen == nullptr) {
    for (const auto& entry : *data) {
      if (native::bool_or(entry, "isDefault", false)) chosen = &entry;
    }
  }
  if (chosen == nullptr) return std::nullopt;
  ReasoningEfforts efforts;
  if (const auto* supported = native::array_at(*chosen, "supportedReasoningEfforts")) {
    for (const auto& option : *supported) {
      std::string value = native::string_or_empty(option, "reasoningEffort");
      if (value.empty()) continue;
      protocol::SessionOptionValue listed;
      listed.value = std::move(value);
      if (auto description = native::string_at(option, "description"); description && !description->empty()) listed.description = *description;
      efforts.values.push_back(std::move(listed));
    }
  }
  if (efforts.values.empty()) return std::nullopt;
  efforts.default_value = native::string_or_empty(*chosen, "defaultReasoningEffort");
  if (efforts.default_value.empty()) efforts.default_value = efforts.values.front().value;
  return efforts;
}

protocol::SessionOption effort_option(const ReasoningEfforts& efforts, const std::string& current) {
  protocol::SessionOption option;
  option.id = std::string(kEffortOption);
  option.name = "Reasoning effort";
  option.description = "How hard the model thinks before it answers (Codex's reasoning effort)";
  option.kind = protocol::SessionOptionKind::Select;
  option.values = efforts.values;
  option.current_value = current.empty() ? efforts.default_value : current;
  return option;
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
