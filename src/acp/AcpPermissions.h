#pragma once

#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "switchboard/protocol/generated/Types.h"

namespace switchboard::acp {

// Our permission requests as ACP's session/request_permission, and the editor's choice back as our decision.
// The editor is offered three options: allow once, allow always, reject. "Always" is remembered for the session
// (allow_session with the request's suggested rule): an editor's "always" is about the conversation in front of
// it, and project or global rules are the console's and the config file's to make.

// The params of session/request_permission for our PermissionRequest `request`; `tool_call_id` is the
// tool_call the editor was told of (or the request's own id when the agent announced none).
nlohmann::json permission_request_params(const protocol::PermissionRequest& request, const std::string& tool_call_id);

// The permission.respond params for the editor's answer (a RequestPermissionResponse's result, or null for an
// error answer): a selected option maps to its decision; cancelled, an unknown option or an error deny.
nlohmann::json permission_respond_params(const protocol::PermissionRequest& request, const nlohmann::json& result);

}  // namespace switchboard::acp
