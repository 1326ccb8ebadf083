#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "switchboard/adapters/AgentAdapter.h"

namespace switchboard::testing {

// Records what an agent's translator and history reader report, the same way for every agent: each callback as one
// line of text (for exact sequence assertions) and the structured values the line leaves out. An agent's own sink
// adds what it records differently (its permission and question lines) or only it reports.
class LineRecordingSink : public adapters::HistorySink {
 public:
  std::vector<std::string> lines;
  std::vector<adapters::TurnResult> turns;
  std::vector<adapters::AgentStatus> statuses;
  std::vector<adapters::ToolStarted> tools;  // whole, with their diffs
  std::vector<adapters::OptionsOffered> options;

  void on_provider_session(adapters::ProviderSession e) override { lines.push_back("provider_session " + e.provider_session_id); }
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
  void on_tool_output(adapters::ToolOutput e) override { lines.push_back("tool_output " + e.tool_call_id + " " + quoted(e.text)); }
  void on_tool_completed(adapters::ToolCompleted e) override {
    lines.push_back("tool_completed " + e.tool_call_id + (e.is_error ? " error " : " ok ") + quoted(e.output));
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
  // Kept apart from `lines`: an adapter reports its options at every start.
  void on_options(adapters::OptionsOffered e) override { options.push_back(std::move(e)); }
  void on_user_prompt(UserPrompt e) override { lines.push_back("prompt " + e.prompt_id + " " + quoted(e.text) + " at " + e.timestamp); }

  static std::string quoted(const std::string& text) { return nlohmann::json(text).dump(); }
  static std::string parent_of(const std::optional<std::string>& parent) { return parent ? " parent=" + *parent : std::string(); }
};

}  // namespace switchboard::testing
