#pragma once

#include <optional>
#include <string>

namespace switchboard::daemon {

// Routes spdlog to stderr (and optionally a file). Never stdout: stdout carries protocol lines only.
// Returns an error message if the level or file is invalid.
std::optional<std::string> configure_logging(const std::string& level, const std::string& file);

}  // namespace switchboard::daemon
