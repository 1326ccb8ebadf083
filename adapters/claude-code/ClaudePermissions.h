#pragma once

#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "claude-code/ClaudeControl.h"
#include "switchboard/adapters/AgentAdapter.h"

namespace switchboard::adapters::claude {

// How a `can_use_tool` request from Claude Code becomes a permission or question in our vocabulary. Pure
// functions of the request, the permission mode and the working directory the CLI reported.

// Which of our request kinds a tool's approval stands for (AskUserQuestion is a question, ExitPlanMode a plan).
ToolRequestKind tool_request_kind(std::string_view tool);

// What a rule is matched against: the command line for Bash, the file path for file tools, the URL or query
// for web tools; empty for tools without a natural subject.
std::string permission_subject(std::string_view tool, const nlohmann::json& input);

// One line a person can judge, built from the tool and its input, e.g. "Run: make test — Run the unit tests".
std::string describe_tool_use(std::string_view tool, const nlohmann::json& input, std::string_view display_name);

// The rule to offer with "allow for the session/project/always": Claude's first `addRules` allow suggestion,
// translated into our glob patterns (see docs/agents/claude-code.md); else the exact subject; else the whole tool.
// None for plans and questions, which should be judged each time.
std::optional<protocol::PermissionRule> suggested_rule(std::string_view tool, std::string_view subject,
                                                       const nlohmann::json& permission_suggestions,
                                                       std::string_view cwd);

// The whole permission ask for the request object of a can_use_tool control_request.
PermissionAsk permission_ask(const nlohmann::json& request, std::string_view permission_mode, std::string_view cwd);

// The questions of an AskUserQuestion input; none when it holds no usable question.
std::optional<QuestionAsk> question_ask(const nlohmann::json& input);


}  // namespace switchboard::adapters::claude
