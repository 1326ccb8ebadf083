#pragma once

#include <string>
#include <string_view>

namespace switchboard::adapters {

// TOML basic-string quoting for the config files adapters write for their agents (a private CODEX_HOME or
// GROK_HOME): "…" with \\, \" and control characters escaped.
std::string toml_string(std::string_view text);

}  // namespace switchboard::adapters
