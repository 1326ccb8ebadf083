#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "config/SettingTable.h"

namespace switchboard::config {

// The config file's layer: TOML text in, the settings it gives out, each with the line it was written on.
// Strict, because a typo that is silently ignored leaves the user wondering why their setting has no effect:
// a syntax error, an unknown key, a value of the wrong type or out of range is an error naming the file, the
// line and the key. Paths in the file must be absolute or start with ~/ (expanded with `home`): a relative
// path would depend on where the daemon happens to be started.

struct FileValue {
  const SettingSpec* spec;
  std::string key;  // the spec's, or for a named spec the key written (acp_agents.gemini.bin)
  Value value;
  std::uint32_t line;
};

// `path` is only used in messages ("<path>:<line>: <key>: <what>"); the keys are `table`'s.
std::variant<std::vector<FileValue>, std::string> parse_config_text(const SettingTable& table, std::string_view text,
                                                                    const std::string& path,
                                                                    const std::optional<std::string>& home);

}  // namespace switchboard::config
