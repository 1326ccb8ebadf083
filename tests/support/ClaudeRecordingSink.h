#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "claude-code/ClaudeControl.h"
#include "claude-code/ClaudeHistory.h"

namespace switchboard::testing {

// Records what the Claude translator and history reader report: each callback as one line of text (for exact
// sequence assertions) and the structured values the line leaves out (costs, whole asks).
class ClaudeRecordingSink : public adapters::claude::HistorySink {
 public:
  std::vector<std::string> lines;
  std::vector<adapters::PermissionAsk> permissions;
  std::vector<adapters::QuestionAsk> questions;
  std::vector<adapters::TurnResult> turns;
  std::vector<adapters::AgentStatus> statuses;

  void on_provider_session(std::string id) override { lines.push_back("provider_session " + id); }
  void on_delta(const std::string& id, protocol::DeltaKind kind, std::string text,
                std::optional<std::string> parent) override {
    lines.push_back("delta " + id + " " + std::string(protocol::to_string(kind)) + " " + quoted(text) + parent_of(parent));
  }
  void on_message(const std::string& id, protocol::DeltaKind kind, std::string text,
                  std::optional<std::string> parent) override {
    lines.push_back("message " + id + " " + std::string(protocol::to_string(kind)) + " " + quoted(text) + parent_of(parent));
  }
  void on_tool_started(std::string id, std::string tool, nlohmann::json input, std::optional<std::string> parent) override {
    lines.push_back("tool_started " + id + " " + tool + " " + input.dump() + parent_of(parent));
  }
  void on_tool_completed(std::string id, std::string output, bool is_error) override {
    lines.push_back("tool_completed " + id + (is_error ? " error " : " ok ") + quoted(output));
  }
  void on_permission_request(std::string native_id, adapters::PermissionAsk ask) override {
    lines.push_back("permission " + native_id + " " + ask.tool);
    permissions.push_back(std::move(ask));
  }
  void on_question(std::string native_id, adapters::QuestionAsk ask) override {
    lines.push_back("question " + native_id + " " + std::to_string(ask.questions.size()));
    questions.push_back(std::move(ask));
  }
  void on_request_withdrawn(const std::string& native_id) override { lines.push_back("withdrawn " + native_id); }
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
  void on_error(std::string message, bool recoverable) override {
    lines.push_back(std::string(recoverable ? "error recoverable " : "error fatal ") + quoted(message));
  }
  void on_stopped(std::string reason) override { lines.push_back("stopped " + reason); }
  void on_user_prompt(std::string prompt_id, std::string text, std::string timestamp) override {
    lines.push_back("prompt " + prompt_id + " " + quoted(text) + " at " + timestamp);
  }

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
