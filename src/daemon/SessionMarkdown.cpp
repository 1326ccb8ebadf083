#include "daemon/SessionMarkdown.h"

#include <algorithm>
#include <ctime>
#include <map>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace switchboard::daemon {
namespace {

using Json = nlohmann::json;

std::string text_of(const Json& object, const char* key) {
  if (!object.is_object()) return {};
  const auto found = object.find(key);
  if (found == object.end() || !found->is_string()) return {};
  return found->get<std::string>();
}

// UTC, to the minute: what a reader needs to place a turn.
std::string format_time(std::int64_t epoch_ms) {
  const std::time_t seconds = static_cast<std::time_t>(epoch_ms / 1000);
  std::tm utc{};
  gmtime_r(&seconds, &utc);
  char buffer[32];
  std::strftime(buffer, sizeof buffer, "%Y-%m-%d %H:%M UTC", &utc);
  return buffer;
}

// A code fence longer than any run of backticks in `text`, so the block cannot end early.
std::string fence_for(const std::string& text) {
  std::size_t longest = 0;
  std::size_t run = 0;
  for (const char c : text) {
    run = c == '`' ? run + 1 : 0;
    longest = std::max(longest, run);
  }
  return std::string(std::max<std::size_t>(3, longest + 1), '`');
}

void code_block(std::string& out, const std::string& text, const char* language = "") {
  const std::string fence = fence_for(text);
  out += fence;
  out += language;
  out += '\n';
  out += text;
  if (text.empty() || text.back() != '\n') out += '\n';
  out += fence;
  out += "\n\n";
}

void quoted(std::string& out, const std::string& text) {
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t end = std::min(text.find('\n', start), text.size());
    out += end > start ? "> " : ">";
    out.append(text, start, end - start);
    out += '\n';
    start = end + 1;
  }
  out += '\n';
}

std::string shortened(const std::string& output) {
  std::size_t lines = 0;
  std::size_t cut = output.size();
  for (std::size_t i = 0; i < output.size(); ++i) {
    if (i >= kOutputBytes) {
      cut = i;
      break;
    }
    if (output[i] == '\n' && ++lines == kOutputLines) {
      cut = i + 1;
      break;
    }
  }
  // Never in the middle of a UTF-8 sequence.
  while (cut < output.size() && cut > 0 && (static_cast<unsigned char>(output[cut]) & 0xC0) == 0x80) --cut;
  if (cut >= output.size()) return output;
  const auto rest_lines = static_cast<std::size_t>(std::count(output.begin() + static_cast<std::ptrdiff_t>(cut), output.end(), '\n'));
  std::string result = output.substr(0, cut);
  if (!result.empty() && result.back() != '\n') result += '\n';
  result += fmt::format("… ({} more bytes, {} more lines)", output.size() - cut, rest_lines);
  return result;
}

std::string diff_text(const Json& diff) {
  std::string text = fmt::format("--- {}\n+++ {}\n", text_of(diff, "path"), text_of(diff, "path"));
  const auto prefixed = [&text](const std::string& body, char mark) {
    std::size_t start = 0;
    while (start < body.size()) {
      const std::size_t end = std::min(body.find('\n', start), body.size());
      text += mark;
      text.append(body, start, end - start);
      text += '\n';
      start = end + 1;
    }
  };
  prefixed(text_of(diff, "oldText"), '-');
  prefixed(text_of(diff, "newText"), '+');
  return text;
}

std::string decision_words(const std::string& decision) {
  if (decision == "allow_once") return "allowed once";
  if (decision == "allow_session") return "allowed for the session";
  if (decision == "allow_project") return "allowed for the project";
  if (decision == "allow_always") return "allowed always";
  if (decision == "deny") return "denied";
  return decision;
}

std::string usage_words(const Json& usage) {
  std::vector<std::string> parts;
  if (usage.is_object()) {
    if (usage.contains("inputTokens")) parts.push_back(fmt::format("{} input tokens", usage["inputTokens"].dump()));
    if (usage.contains("outputTokens")) parts.push_back(fmt::format("{} output tokens", usage["outputTokens"].dump()));
    if (usage.contains("cacheReadTokens")) parts.push_back(fmt::format("{} read from cache", usage["cacheReadTokens"].dump()));
    if (usage.contains("costUsd") && usage["costUsd"].is_number()) parts.push_back(fmt::format("${:.4f}", usage["costUsd"].get<double>()));
  }
  std::string words;
  for (const auto& part : parts) words += (words.empty() ? "" : ", ") + part;
  return words;
}

// Renders event by event; remembers the tool names of calls, so a permission or a result can name its tool.
class MarkdownWriter {
 public:
  explicit MarkdownWriter(std::string& out) : m_out(out) {}

  void event(const protocol::EventEnvelope& event) {
    const Json& data = event.data;
    const std::string& type = event.type;
    if (type == "turn.started") return turn_started(event);
    if (type == "message.completed") return message(data);
    if (type == "tool.started") return tool_started(data);
    if (type == "tool.completed") return tool_completed(data);
    if (type == "permission.requested") return permission_requested(data);
    if (type == "permission.resolved") return permission_resolved(data);
    if (type == "question.requested") return question_requested(data);
    if (type == "question.resolved") return question_resolved(data);
    if (type == "turn.stopped") return turn_stopped(data);
    if (type == "session.rewound") return rewound(data);
    if (type == "agent.error") {
      m_out += fmt::format("**Agent error:** {}\n\n", text_of(data, "message"));
    }
  }

 private:
  void turn_started(const protocol::EventEnvelope& event) {
    ++m_turns;
    m_last_answer.clear();
    m_out += fmt::format("## Turn {} · {}\n\n", m_turns, format_time(event.ts));
    m_out += "**Prompt**\n\n";
    quoted(m_out, text_of(event.data, "text"));
    if (const auto attachments = event.data.find("attachments"); attachments != event.data.end() && attachments->is_array()) {
      for (const auto& attachment : *attachments) m_out += fmt::format("- attached: `{}`\n", text_of(attachment, "path"));
      if (!attachments->empty()) m_out += '\n';
    }
  }

  void message(const Json& data) {
    const std::string text = text_of(data, "text");
    if (text.empty()) return;
    const std::string role = text_of(data, "role");
    const std::string kind = text_of(data, "kind");
    if (role == "user") {
      m_out += "**User**\n\n";
      quoted(m_out, text);
    } else if (kind == "thinking") {
      m_out += "*Thinking*\n\n";
      quoted(m_out, text);
    } else {
      m_out += text;
      m_out += "\n\n";
      m_last_answer = text;
    }
  }

  void tool_started(const Json& data) {
    const std::string tool = text_of(data, "tool");
    m_tools[text_of(data, "toolCallId")] = tool;
    m_out += fmt::format("**Tool call: {}**\n\n", tool);
    if (const auto input = data.find("input"); input != data.end() && !(input->is_object() && input->empty())) {
      code_block(m_out, input->dump(2, ' ', false, Json::error_handler_t::replace), "json");
    }
    if (const auto diffs = data.find("diffs"); diffs != data.end() && diffs->is_array()) {
      for (const auto& diff : *diffs) code_block(m_out, diff_text(diff), "diff");
    }
  }

  void tool_completed(const Json& data) {
    const bool failed = data.value("isError", false);
    const std::string output = text_of(data, "output");
    m_out += fmt::format("{} of {}:\n\n", failed ? "Error" : "Output", tool_name(text_of(data, "toolCallId")));
    code_block(m_out, shortened(output));
  }

  void permission_requested(const Json& data) {
    const Json request = data.value("request", Json::object());
    m_requests[text_of(request, "requestId")] = text_of(request, "tool");
    std::string line = fmt::format("**Permission asked** for {}", text_of(request, "tool"));
    if (const std::string description = text_of(request, "description"); !description.empty()) line += ": " + description;
    m_out += line + "\n\n";
  }

  void permission_resolved(const Json& data) {
    const std::string decision = text_of(data, "decision");
    const std::string by = text_of(data, "resolvedBy");
    std::string line = "**Permission** for " + request_tool(text_of(data, "requestId")) + ": ";
    line += decision.empty() ? text_of(data, "outcome") : decision_words(decision);
    if (!by.empty()) line += " (by " + by + ")";
    m_out += line + "\n\n";
  }

  void question_requested(const Json& data) {
    const Json request = data.value("request", Json::object());
    m_out += "**Question asked**\n\n";
    if (const auto questions = request.find("questions"); questions != request.end() && questions->is_array()) {
      for (const auto& question : *questions) m_out += "- " + text_of(question, "question") + "\n";
      m_out += '\n';
    }
  }

  void question_resolved(const Json& data) {
    std::string line = "**Answer** (" + text_of(data, "outcome") + "):";
    if (const auto answers = data.find("answers"); answers != data.end() && answers->is_array()) {
      for (const auto& answer : *answers) {
        if (answer.is_string()) line += " " + answer.get<std::string>() + ";";
      }
    }
    m_out += line + "\n\n";
  }

  void turn_stopped(const Json& data) {
    // The final text, unless an answer of the turn already said it (some agents report it only here).
    if (const std::string text = text_of(data, "text"); !text.empty() && text != m_last_answer) {
      m_out += text;
      m_out += "\n\n";
    }
    std::string line = "*Turn ended: " + text_of(data, "stopReason");
    if (const std::string error = text_of(data, "error"); !error.empty()) line += " (" + error + ")";
    if (const auto usage = data.find("usage"); usage != data.end()) {
      if (const std::string words = usage_words(*usage); !words.empty()) line += "; " + words;
    }
    m_out += line + "*\n\n";
  }

  void rewound(const Json& data) {
    std::string line = "*Rewound to turn " + text_of(data, "turnId") + ": undone";
    if (const auto turns = data.find("rewoundTurnIds"); turns != data.end() && turns->is_array()) {
      for (const auto& turn : *turns) {
        if (turn.is_string()) line += " " + turn.get<std::string>();
      }
    }
    m_out += line + "*\n\n";
  }

  std::string tool_name(const std::string& call_id) const {
    const auto found = m_tools.find(call_id);
    return found == m_tools.end() || found->second.empty() ? "the tool" : found->second;
  }
  std::string request_tool(const std::string& request_id) const {
    const auto found = m_requests.find(request_id);
    return found == m_requests.end() || found->second.empty() ? "a tool" : found->second;
  }

  std::string& m_out;
  std::size_t m_turns = 0;
  std::string m_last_answer;  // the current turn's last answer text
  std::map<std::string, std::string> m_tools;     // tool call id → tool
  std::map<std::string, std::string> m_requests;  // permission request id → tool
};

}  // namespace

std::string render_session_markdown(const protocol::SessionInfo& session, const std::vector<protocol::EventEnvelope>& events) {
  std::string out;
  out += "# " + session.title.value_or("Session " + session.session_id) + "\n\n";
  out += fmt::format("- Session: `{}`\n- Agent: {}\n- Directory: `{}`\n", session.session_id, session.agent, session.cwd);
  if (session.model) out += fmt::format("- Model: {}\n", *session.model);
  out += fmt::format("- Created: {}\n", format_time(session.created_at));
  if (session.usage) {
    std::string line = fmt::format("- Context: {} tokens used", session.usage->used_tokens);
    if (session.usage->cost_usd) line += fmt::format(", ${:.4f} in all", *session.usage->cost_usd);
    out += line + "\n";
  }
  out += '\n';
  MarkdownWriter writer(out);
  for (const auto& event : events) writer.event(event);
  return out;
}

}  // namespace switchboard::daemon
