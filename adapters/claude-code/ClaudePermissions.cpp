#include "claude-code/ClaudePermissions.h"

#include <array>

#include "common/NativeJson.h"
#include "common/RulePattern.h"

namespace switchboard::adapters::claude {
namespace {

constexpr std::array kFileTools{std::string_view("Read"), std::string_view("Write"), std::string_view("Edit"),
                                std::string_view("MultiEdit")};

bool is_file_tool(std::string_view tool) {
  for (auto file_tool : kFileTools) {
    if (tool == file_tool) return true;
  }
  return tool == "NotebookEdit";
}

std::string with_detail(std::string action, std::string_view detail) {
  if (!detail.empty() && detail != action) {
    action += " — ";
    action += detail;
  }
  return action;
}

// Claude's `//abs/path`, `/project-relative`, `relative` path patterns (gitignore-like) as one of our globs, or
// none when it cannot be placed without guessing (`~/…`, or no known working directory). Our rules match with
// fnmatch without FNM_PATHNAME, where `*` already crosses `/`, so `**` becomes `*`.
std::optional<std::string> file_rule_pattern(std::string_view content, std::string_view cwd) {
  std::string path;
  if (content.starts_with("//")) {
    path = std::string(content.substr(1));
  } else if (content.starts_with("~")) {
    return std::nullopt;
  } else if (cwd.empty()) {
    return std::nullopt;
  } else {
    path = std::string(cwd);
    if (!path.ends_with('/')) path += '/';
    path += content.starts_with("/") ? content.substr(1) : content;
  }
  std::string pattern;
  for (std::size_t i = 0; i < path.size(); ++i) {
    if (path[i] == '*' && i + 1 < path.size() && path[i + 1] == '*') {
      pattern += '*';
      ++i;
      continue;
    }
    pattern += path[i];
  }
  return pattern;
}

// A Bash rule: `prefix:*` is Claude's prefix rule, another `*` is a wildcard, anything else the exact command.
std::string bash_rule_pattern(std::string_view content) {
  if (content.ends_with(":*")) return native::literal_pattern(content.substr(0, content.size() - 2)) + "*";
  std::string pattern;
  for (char c : content) {
    if (c == '*') {
      pattern += '*';
    } else {
      pattern += native::literal_pattern(std::string_view(&c, 1));
    }
  }
  return pattern;
}

std::optional<std::string> rule_pattern(std::string_view tool, std::string_view content, std::string_view cwd) {
  if (tool == "Bash") return bash_rule_pattern(content);
  if (is_file_tool(tool)) return file_rule_pattern(content, cwd);
  if (tool == "WebFetch" && content.starts_with("domain:")) {
    return "*://" + native::literal_pattern(content.substr(7)) + "/*";
  }
  return native::literal_pattern(content);
}

}  // namespace

ToolRequestKind tool_request_kind(std::string_view tool) {
  if (tool == "AskUserQuestion") return ToolRequestKind::Question;
  if (tool == "ExitPlanMode") return ToolRequestKind::PlanApproval;
  return ToolRequestKind::Permission;
}

std::string permission_subject(std::string_view tool, const nlohmann::json& input) {
  if (tool == "Bash") return native::string_or_empty(input, "command");
  if (tool == "NotebookEdit") return native::string_or_empty(input, "notebook_path");
  if (is_file_tool(tool)) return native::string_or_empty(input, "file_path");
  if (tool == "Glob" || tool == "Grep") return native::string_or_empty(input, "path");
  if (tool == "WebFetch") return native::string_or_empty(input, "url");
  if (tool == "WebSearch") return native::string_or_empty(input, "query");
  return {};
}

std::string describe_tool_use(std::string_view tool, const nlohmann::json& input, std::string_view display_name) {
  const std::string subject = permission_subject(tool, input);
  const std::string detail = native::string_or_empty(input, "description");
  if (tool == "Bash" && !subject.empty()) return with_detail("Run: " + subject, detail);
  if (!subject.empty()) {
    if (tool == "Read") return "Read " + subject;
    if (tool == "Write") return "Write " + subject;
    if (tool == "Edit" || tool == "MultiEdit") return "Edit " + subject;
    if (tool == "NotebookEdit") return "Edit the notebook " + subject;
    if (tool == "WebFetch") return "Fetch " + subject;
    if (tool == "WebSearch") return "Search the web for " + subject;
  }
  if (tool == "Glob" || tool == "Grep") {
    std::string action = (tool == "Glob" ? "Find files matching " : "Search for ") + native::string_or_empty(input, "pattern");
    if (!subject.empty()) action += " in " + subject;
    return action;
  }
  if (tool == "Task" || tool == "Agent") {
    const std::string kind = native::string_or_empty(input, "subagent_type");
    return with_detail(kind.empty() ? "Start a sub-agent" : "Start a sub-agent (" + kind + ")", detail);
  }
  if (tool == "ExitPlanMode") {
    const std::string plan = native::string_or_empty(input, "plan");
    return plan.empty() ? "Leave plan mode and start carrying out the plan"
                        : "Leave plan mode and carry out this plan:\n\n" + plan;
  }
  if (tool == "EnterPlanMode") return "Switch to plan mode (plan first, change nothing)";
  return with_detail("Use " + std::string(display_name.empty() ? tool : display_name), detail);
}

std::optional<protocol::PermissionRule> suggested_rule(std::string_view tool, std::string_view subject,
                                                       const nlohmann::json& permission_suggestions,
                                                       std::string_view cwd) {
  if (tool_request_kind(tool) != ToolRequestKind::Permission) return std::nullopt;
  if (permission_suggestions.is_array()) {
    for (const auto& suggestion : permission_suggestions) {
      if (native::string_or_empty(suggestion, "type") != "addRules") continue;
      if (native::string_or_empty(suggestion, "behavior") != "allow") continue;
      const auto* rules = native::array_at(suggestion, "rules");
      if (rules == nullptr || rules->empty()) continue;
      const auto& rule = rules->front();
      protocol::PermissionRule out;
      out.tool = native::string_at(rule, "toolName").value_or(std::string(tool));
      if (out.tool.empty()) continue;
      const auto content = native::string_at(rule, "ruleContent");
      if (!content || content->empty()) return out;  // the whole tool
      if (auto pattern = rule_pattern(out.tool, *content, cwd)) {
        out.pattern = std::move(pattern);
        return out;
      }
      break;  // a pattern we cannot translate: fall back to the exact subject below
    }
  }
  protocol::PermissionRule out;
  out.tool = std::string(tool);
  if (!subject.empty()) out.pattern = native::literal_pattern(subject);
  return out;
}

PermissionAsk permission_ask(const nlohmann::json& request, std::string_view permission_mode, std::string_view cwd) {
  PermissionAsk ask;
  ask.tool = native::string_or_empty(request, "tool_name");
  if (const auto* input = native::object_at(request, "input")) ask.input = *input;
  ask.subject = permission_subject(ask.tool, ask.input);
  ask.description = describe_tool_use(ask.tool, ask.input, native::string_or_empty(request, "display_name"));
  const auto* suggestions = native::member(request, "permission_suggestions");
  ask.suggested_rule = suggested_rule(ask.tool, ask.subject, suggestions != nullptr ? *suggestions : nlohmann::json(), cwd);
  if (auto reason = native::string_at(request, "decision_reason"); reason && !reason->empty()) {
    ask.reason = *reason;
  } else if (tool_request_kind(ask.tool) == ToolRequestKind::PlanApproval) {
    ask.reason = "the agent has finished planning and needs approval to start making changes";
  } else {
    ask.reason = "Claude Code's " + std::string(permission_mode.empty() ? "default" : permission_mode) +
                 " permission mode asks before using " + ask.tool;
  }
  return ask;
}

std::optional<QuestionAsk> question_ask(const nlohmann::json& input) {
  const auto* questions = native::array_at(input, "questions");
  if (questions == nullptr) return std::nullopt;
  QuestionAsk ask;
  for (const auto& native_question : *questions) {
    protocol::Question question;
    question.question = native::string_or_empty(native_question, "question");
    if (question.question.empty()) continue;
    question.header = native::string_at(native_question, "header");
    if (const auto* options = native::array_at(native_question, "options")) {
      std::vector<std::string> labels;
      for (const auto& option : *options) {
        if (option.is_string()) {
          labels.push_back(option.get<std::string>());
        } else if (auto label = native::string_at(option, "label")) {
          labels.push_back(*label);
        }
      }
      if (!labels.empty()) question.options = std::move(labels);
    }
    if (const auto* multi = native::member(native_question, "multiSelect"); multi != nullptr && multi->is_boolean()) {
      question.multi_select = multi->get<bool>();
    }
    ask.questions.push_back(std::move(question));
  }
  if (ask.questions.empty()) return std::nullopt;
  return ask;
}

}  // namespace switchboard::adapters::claude
