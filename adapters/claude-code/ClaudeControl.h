#pragma once

#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace switchboard::adapters::claude {

// The control side of Claude Code's stdio protocol (`--permission-prompt-tool stdio`): requests flow both ways as
// `control_request` lines and are answered by `control_response` lines carrying the same request id. This header
// holds what the translator, the encoders and the adapter share about it; the normalized events go to the
// AdapterListener instead.

// The requests the adapter sends to the CLI. The translator needs the kind to interpret the answer.
enum class ControlRequestKind {
  Initialize,
  Interrupt,
  SetPermissionMode,
  SetModel,
  GetContextUsage,     // the context's size and the model's window (it makes count_tokens calls)
  McpStatus,           // the MCP servers' states, with the error of a failed one
  ApplyFlagSettings,   // a setting changed for this session (the effort level)
  RewindConversation,  // drops the last prompt and everything after it
};

// What an open `can_use_tool` request from the CLI stands for in our vocabulary.
enum class ToolRequestKind {
  Permission,    // an ordinary tool that needs the user's approval
  Question,      // AskUserQuestion: the answers travel back inside the approval
  PlanApproval,  // ExitPlanMode: approving it lets the agent leave plan mode and start changing things
};

// A `can_use_tool` request the CLI is waiting on. Its answer needs the original input (an approval echoes it as
// `updatedInput`, a question's answers are added to it), so the translator keeps it until the adapter answers.
struct ToolRequest {
  std::string request_id;
  ToolRequestKind kind = ToolRequestKind::Permission;
  std::string tool;
  nlohmann::json input = nlohmann::json::object();
  std::string tool_use_id;
};

// What the CLI says about itself in `system/init`, which it repeats at the start of every turn.
struct ClaudeInit {
  std::string session_id;
  std::string model;
  std::string permission_mode;
  std::string cwd;
  std::string version;
  std::vector<std::string> tools;
  // The MCP servers and their state ("connected", "failed", "pending", "needs-auth", …), as init lists them.
  std::vector<std::pair<std::string, std::string>> mcp_servers;
};

// The CLI's answer to a control request the adapter sent.
struct ControlResult {
  std::string request_id;
  ControlRequestKind kind = ControlRequestKind::Initialize;
  bool ok = false;
  std::string error;                 // set when !ok
  nlohmann::json response = nullptr;  // the success payload, when the CLI sent one (initialize, set_permission_mode)
};

// What the translator reports that only the adapter needs; none of it is a normalized event.
class ClaudeControlSink {
 public:
  virtual ~ClaudeControlSink() = default;
  virtual void on_init(const ClaudeInit& init) = 0;
  // The permission mode changed between two inits: after set_permission_mode, or when the agent left plan mode.
  virtual void on_permission_mode(const std::string& mode) = 0;
  virtual void on_control_result(const ControlResult& result) = 0;
  // The CLI asked something the adapter cannot answer (hook_callback, mcp_message, elicitation, …). The adapter
  // must reply with ClaudeMessages' control_error(), or the CLI waits for the answer forever.
  virtual void on_unanswerable_request(const std::string& request_id, const std::string& subtype) = 0;
  // A compaction the CLI refused or could not do ("Not enough messages to compact."): its turn-less result
  // still says success.
  virtual void on_compact_failed(const std::string& error) { static_cast<void>(error); }
};

}  // namespace switchboard::adapters::claude
