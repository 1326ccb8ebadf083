#include "acp/AcpPermissions.h"

#include "acp/AcpUpdates.h"
#include "acp/JsonMembers.h"

namespace switchboard::acp {
namespace acp_permissions_detail {


constexpr const char* kAllowOnce = "allow_once";
constexpr const char* kAllowAlways = "allow_always";
constexpr const char* kReject = "reject_once";

}  // namespace acp_permissions_detail

using namespace acp_permissions_detail;

Json permission_request_params(const protocol::PermissionRequest& request, const std::string& tool_call_id) {
  const auto& input = request.input.is_object() ? request.input : Json::object();
  const auto title = request.description.empty() ? tool_title_of(request.tool, input) : request.description;
  return Json{{"sessionId", request.session_id},
              {"toolCall", {{"toolCallId", tool_call_id}, {"title", title}, {"kind", tool_kind_of(request.tool)}, {"status", "pending"}, {"rawInput", input}}},
              {"options", Json::array({Json{{"optionId", kAllowOnce}, {"name", "Allow once"}, {"kind", "allow_once"}},
                                       Json{{"optionId", kAllowAlways}, {"name", "Allow always (this session)"}, {"kind", "allow_always"}},
                                       Json{{"optionId", kReject}, {"name", "Reject"}, {"kind", "reject_once"}}})}};
}

Json permission_respond_params(const protocol::PermissionRequest& request, const Json& result) {
  Json params{{"requestId", request.request_id}};
  const auto& outcome = result.is_object() && result.contains("outcome") ? result["outcome"] : Json::object();
  const auto option = string_member(outcome, "outcome") == "selected" ? string_member(outcome, "optionId") : std::string();
  if (option == kAllowOnce) {
    params["decision"] = "allow_once";
  } else if (option == kAllowAlways) {
    params["decision"] = "allow_session";
    if (const auto& rule = request.suggested_rule) {
      params["rule"] = Json{{"tool", rule->tool}};
      if (rule->pattern) params["rule"]["pattern"] = *rule->pattern;
    }
  } else {
    params["decision"] = "deny";
    params["message"] = option == kReject ? "rejected in the editor" : "the editor did not allow it";
  }
  return params;
}

}  // namespace switchboard::acp
