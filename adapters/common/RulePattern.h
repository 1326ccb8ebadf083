#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "switchboard/protocol/generated/Types.h"

namespace switchboard::adapters::native {

// The engine matches a rule's pattern against a request's subject with fnmatch. These make a pattern that matches
// one subject and nothing else, for the rule an adapter suggests with a permission request ("allow this command
// from now on").

// `text` with fnmatch's special characters escaped, so that it matches itself only.
std::string literal_pattern(std::string_view text);

// The rule that allows exactly this tool on exactly this subject; none for an empty subject (a rule without a
// pattern would allow the tool on everything).
std::optional<protocol::PermissionRule> exact_rule(std::string_view tool, std::string_view subject);

}  // namespace switchboard::adapters::native
