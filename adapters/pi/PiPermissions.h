#pragma once

#include <array>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "common/PermissionText.h"
#include "switchboard/adapters/AgentAdapter.h"

namespace switchboard::adapters::pi {

// Pi asks nothing on its own; our extension (PiExtension.h) stops every tool call and asks through a dialog. What
// is asked, what is answered, and which calls a session's mode lets through without asking the engine.

// The modes a Pi session takes, the default first: `ask` sends every tool call to the engine; `accept-edits`
// lets Pi's file edits and writes through and asks for the rest; `full-access` lets everything through.
inline constexpr std::array<std::string_view, 3> kModes = {"ask", "accept-edits", "full-access"};
bool is_mode(std::string_view mode);
// Whether a call of `tool` runs without asking the engine in `mode`.
bool mode_allows(std::string_view mode, std::string_view tool);
// What a call of Pi's `tool` does, for the reason a request gives.
AskedAction asked_action(std::string_view tool);

// The engine's request for the call our extension's dialog `id` carries in its placeholder
// ({"toolCallId","toolName","input"}), or none when that is not such a call.
std::optional<PermissionAsk> permission_ask(const std::string& id, std::string_view call);

// The extension_ui_response that answers dialog `id` with `answer` (the extension reads the JSON value).
nlohmann::json permission_answer(const std::string& id, const PermissionAnswer& answer);

}  // namespace switchboard::adapters::pi
