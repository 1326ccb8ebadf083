#pragma once

#include <filesystem>
#include <string>
#include <string_view>
#include <variant>

namespace switchboard::adapters::pi {

// Our permission extension for Pi, shipped inside the daemon's binary: Pi loads an extension from a file
// (`-e <path>`), so the adapter writes it into agents.pi.extension_dir (default: pi in the data directory, private
// to the user) before it starts Pi. What it does: docs/agents/pi.md, "Permissions".
std::string_view permission_extension_source();

// Writes the extension into `dir` (created if missing) unless the file there already holds it, and returns its
// path, or why it could not be written. A few KiB, once per Pi start: not worth a trip off the reactor.
std::variant<std::filesystem::path, std::string> install_permission_extension(const std::filesystem::path& dir);

}  // namespace switchboard::adapters::pi
