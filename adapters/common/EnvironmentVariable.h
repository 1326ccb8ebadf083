#pragma once

#include <optional>
#include <string>

namespace switchboard::adapters {

// The daemon's own environment, read the one way every adapter reads it: a variable set to the empty string
// counts as unset (shells make "unset" and "empty" hard to tell apart, and `HOME= switchboard` means "no
// HOME"), as in the configuration's environment layer (src/config/Configuration.h).
std::optional<std::string> environment_variable(const char* name);

// $PATH for looking up an agent's executable; the system default when it is unset or empty.
std::string executable_search_path();

}  // namespace switchboard::adapters
