#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace switchboard::config {

// A key may hold a segment the user names: "acp_agents.<name>.bin" stands for acp_agents.gemini.bin,
// acp_agents.my-agent.bin, ... (agents a user adds by name). Such a key is set in the config file only: it has
// neither a flag nor a variable (their names would have to be made up from the user's).
inline constexpr std::string_view kNamedSegment = "<name>";
bool is_named_key(std::string_view key);
// A name that may stand for <name>: a lowercase letter or digit, then lowercase letters, digits, '-' and '_'
// (it becomes an agent's name in the protocol and on command lines).
bool is_valid_name(std::string_view name);
// Whether `key` is one that `pattern` stands for (a plain pattern: only itself). `key` may also be a table
// that leads to such keys when `as_table` ("acp_agents", "acp_agents.gemini").
bool key_matches(std::string_view pattern, std::string_view key, bool as_table = false);
// Whether `key` would be one `pattern` stands for (or a table leading to one) but for a name that breaks the
// rule ("acp_agents.My Agent.bin", "acp_agents.Gemini").
bool has_invalid_name(std::string_view pattern, std::string_view key);
// Whether `key` ends where `pattern` has its <name>: the table of one named thing ("acp_agents.gemini").
bool names_one(std::string_view pattern, std::string_view key);
// What an invalid name is told (the rule of is_valid_name).
inline constexpr std::string_view kNameRule =
    "not a valid name: use at most 64 lowercase letters, digits, '-' and '_', starting with a letter or digit";

// The name a key gives for the <name> of `pattern` ("gemini" of acp_agents.gemini.bin); none if it gives none.
std::optional<std::string> named_segment(std::string_view pattern, std::string_view key);

}  // namespace switchboard::config
