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

Json permission_request_params(const Json& request, const std::string& tool_call_id) {
  const auto tool = string_member(request, "tool");
  const auto& input = request.contains("input") && request["input"].is_object() ? request["input"] : Json::object();
  auto title = string_member(request, "description");
  if (title.empty()) title = tool_title_of(tool, input);
  return Json{{"sessionId", string_member(request, "sessionId")},
              {"toolCall", {{"toolCallId", tool_call_id}, {"title", title}, {"kind", tool_kind_of(tool)}, {"status", "pending"}, {"rawInput", input}}},
              {"options", Json::array({Json{{"optionId", kAllowOnce}, {"name", "Allow once"}, {"kind", "allow_once"}},
                                       Json{{"optionId", kAllowAlways}, {"name", "Allow always (this session)"}, {"kind", "allow_always"}},
                                       Json{{"optionId", kReject}, {"name", "Reject"}, {"kind", "reject_once"}}})}};
}

Json permission_respond_params(const Json& request, const Json& result) {
  Json params{{"requestId", string_member(request, "requestId")}};
  const auto& outcome = result.is_object() && result.contains("outcome") ? result["outcome"] : Json::object();
  const auto option = string_member(outcome, "outcome") == "selected" ? string_member(outcome, "optionId") : std::string();
  if (option == kAllowOnce) {
    params["decision"] = "allow_once";
  } else if (option == kAllowAlways) {
    params["decision"] = "allow_session";
    if (request.contains("suggestedRule") && request["suggestedRule"].is_object()) params["rule"] = request["suggestedRule"];
  } else {
    params["decision"] = "deny";
    params["message"] = option == kReject ? "rejected in the editor" : "the editor did not allow it";
  }
  return params;
}

}  // namespace switchboard::acp
