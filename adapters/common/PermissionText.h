#pragma once

#include <string>
#include <string_view>

namespace switchboard::adapters {

// How a permission request reads to the user who answers it, the same for every agent: the description shows a
// shell command exactly as it will run, and the reason says why this request reaches the user at all.

// "Run: <command>", the command verbatim (never re-quoted or split, so what is approved is what runs), then
// " — <detail>" when the agent says more about it (the model's own description of the command, a tool title)
// and that says something the command does not.
inline std::string run_description(std::string_view command, std::string_view detail) {
  std::string text = "Run: ";
  text += command;
  // A title such as "Execute `ls`" repeats the command: it would only make the line longer.
  if (!detail.empty() && detail != command && detail.find(command) == std::string_view::npos) {
    text += " — ";
    text += detail;
  }
  return text;
}

// What a tool does, as the end of "asks before …".
enum class AskedAction { ShellCommand, FileChange, FileRead, WebFetch, Other };

// Why the user is asked when the session's mode decides which of the agent's requests the adapter answers by
// itself (OpenCode, Pi, every ACP agent): "the session's mode 'ask' asks before running a shell command". `tool`
// names the tool for AskedAction::Other.
inline std::string mode_reason(std::string_view mode, AskedAction action, std::string_view tool) {
  std::string text = "the session's mode '";
  text += mode;
  text += "' asks before ";
  switch (action) {
    case AskedAction::ShellCommand: return text + "running a shell command";
    case AskedAction::FileChange: return text + "changing a file";
    case AskedAction::FileRead: return text + "reading a file";
    case AskedAction::WebFetch: return text + "fetching from the web";
    case AskedAction::Other: break;
  }
  text += "using ";
  text += tool.empty() ? std::string_view("a tool") : tool;
  return text;
}

}  // namespace switchboard::adapters
