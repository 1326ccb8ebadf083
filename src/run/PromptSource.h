#pragma once

#include <optional>
#include <string>
#include <variant>

namespace switchboard::run {

// Where the prompt of a run comes from: the argument itself, `-` (standard input, read to its end), or
// --prompt-file. Standard input is read only when `-` asks for it, so a CI step with an open stdin never hangs.
struct PromptSource {
  std::optional<std::string> argument;  // "-" means standard input
  std::optional<std::string> file;
};

// The prompt text, or why there is none (no prompt, both given, unreadable file, empty prompt). Reads before
// the run's reactor starts, so blocking here blocks nothing else.
std::variant<std::string, std::string> read_prompt(const PromptSource& source, int stdin_fd);

}  // namespace switchboard::run
