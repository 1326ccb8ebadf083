#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "claude-code/ClaudeControl.h"
#include "claude-code/ClaudeHistory.h"

namespace switchboard::testing {

// Records what the Claude translator and history reader report: each callback as one line of text (for exact
// sequence assertions) and the structured values the line leaves out (costs, whole asks).
class ClaudeRecordingSink : public adapters::HistorySink {
 public:
  std::vector<std::string> lines;
  std::vector<adapters::PermissionAsk> permissions;
  std::vector<adapters::QuestionAsk> questions;
  std::vector<adapters::TurnResult> turns;
  std::vector<adapters::OptionsOffered> options;
  std::vector<adapters::AgentStatus> statuses;
  std::vector<adapters::ToolStarted> tools;  // whole, with their diffs

  void on_provider_session(adapters::ProviderSession event) override { lines.push_back("provider_session " + event.provider_session_id); }
  void on_delta(adapters::TextDelta e) override {
    lines.push_back("delta " + e.message_id + " " + std::string(protocol::to_string(e.kind)) + " " + quoted(e.text) + parent_of(e.parent_tool_call_id));
  }
  void on_message(adapters::MessageCompleted e) override {
    lines.push_back("message " + e.message_id + " " + std::string(protocol::to_string(e.kind)) + " " + quoted(e.text) +
                    parent_of(e.parent_tool_call_id));
  }
  void on_tool_started(adapters::ToolStarted e) override {
    lines.push_back("tool_started " + e.tool_call_id + " " + e.tool + " " + e.input.dump() + parent_of(e.parent_tool_call_id));
    tools.push_back(std::move(e));
  }
  // Claude Code streams no tool output: a call would be a translator bug, recorded so a test sees it.
  void on_tool_output(adapters::ToolOutput e) override { lines.push_back("tool_output " + e.tool_call_id + " " + quoted(e.text)); }
  void on_tool_completed(adapters::ToolCompleted e) override {
    lines.push_back("tool_completed " + e.tool_call_id + (e.is_error ? " error " : " ok ") + quoted(e.output));
  }
  void on_permission_request(adapters::PermissionAsk ask) override {
    lines.push_back("permission " + ask.native_id + " " + ask.tool);
    permissions.push_back(std::move(ask));
  }
  void on_question(adapters::QuestionAsk ask) override {
    lines.push_back("question " + ask.native_id + " " + std::to_string(ask.questions.size()));
    questions.push_back(std::move(ask));
  }
  void on_request_withdrawn(adapters::RequestWithdrawn e) override { lines.push_back("withdrawn " + e.native_id); }
  void on_status(adapters::AgentStatus status) override {
    lines.push_back("status " + std::string(protocol::to_string(status.status)) +
                    (status.message ? " " + quoted(*status.message) : std::string()));
    statuses.push_back(std::move(status));
  }
  void on_turn_end(adapters::TurnResult result) override {
    std::string line = "turn_end " + std::string(protocol::to_string(result.stop_reason));
    if (!result.text.empty()) line += " " + quoted(result.text);
    if (result.error) line += " error=" + quoted(*result.error);
    if (result.usage) {
      const auto count = [](const std::optional<std::int64_t>& n) { return n ? std::to_string(*n) : std::string("-"); };
      line += " in=" + count(result.usage->input_tokens) + " out=" + count(result.usage->output_tokens) +
              " cached=" + count(result.usage->cache_read_tokens);
    }
    lines.push_back(line);
    turns.push_back(std::move(result));
  }
  void on_error(adapters::AgentErrorReport e) override {
    lines.push_back(std::string(e.recoverable ? "error recoverable " : "error fatal ") + quoted(e.message));
  }
  void on_unavailable(adapters::Unavailable e) override { lines.push_back("stopped " + e.reason); }
  // Kept apart from `lines`: the adapter reports its options at every start.
  void on_options(adapters::OptionsOffered e) override { options.push_back(std::move(e)); }
  void on_user_prompt(UserPrompt e) override { lines.push_back("prompt " + e.prompt_id + " " + quoted(e.text) + " at " + e.timestamp); }

  static std::string quoted(const std::string& text) { return nlohmann::json(text).dump(); }

 private:
  static std::string parent_of(const std::optional<std::string>& parent) { return parent ? " parent=" + *parent : std::string(); }
};

// Records what the translator tells the adapter alone.
class ClaudeRecordingControl : public adapters::claude::ClaudeControlSink {
 public:
  std::vector<adapters::claude::ClaudeInit> inits;
  std::vector<std::string> modes;
  std::vector<adapters::claude::ControlResult> results;
  std::vector<std::pair<std::string, std::string>> unanswerable;  // request id, subtype

  void on_init(const adapters::claude::ClaudeInit& init) override { inits.push_back(init); }
  void on_permission_mode(const std::string& mode) override { modes.push_back(mode); }
  void on_control_result(const adapters::claude::ControlResult& result) override { results.push_back(result); }
  void on_unanswerable_request(const std::string& request_id, const std::string& subtype) override {
    unanswerable.emplace_back(request_id, subtype);
  }
};

}  // namespace switchboard::testing
