#pragma once

#include <string>
#include <string_view>
#include <variant>

#include "switchboard/protocol/generated/Types.h"

namespace switchboard::run {

// The command-line spelling of a permission rule: `Tool` (every use of the tool) or `Tool(glob)` (uses whose
// subject — the command, the path — matches the glob, as the engine's rule book matches it). Returns the rule,
// or why the text is not one.
std::variant<protocol::PermissionRule, std::string> parse_rule(std::string_view text);

}  // namespace switchboard::run
