#pragma once

#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "switchboard/adapters/AgentAdapter.h"
#include "support/SourceTree.h"

namespace switchboard::testing {

// Records what the Codex translator and history reader report: each callback as one line of text (for exact
// sequence assertions) and the structured values the line leaves out.
class CodexRecordingSink : public adapters::HistorySink {
 public:
  std::vector<std::string> lines;
  std::vector<std::pair<std::string, adapters::PermissionAsk>> permissions;  // native id, ask
  std::vector<adapters::TurnResult> turns;
  std::vector<adapters::AgentStatus> statuses;
  std::vector<adapters::ToolStarted> tools;  // whole, with their diffs
  std::vector<adapters::ModelsOffered> offers;
  // Session state the translator reports beside the turn's activity; kept out of `lines`.
  std::vector<adapters::PlanUpdate> plans;
  std::vector<std::size_t> plan_lines;  // for each plan, how many lines came before it (where it falls among them)
  std::vector<adapters::UsageUpdate> usages;
  std::vector<adapters::CommandsOffered> commands;
  std::vector<adapters::OptionsOffered> options;
  std::vector<adapters::McpStatusReport> mcp;

  void on_models(adapters::ModelsOffered offer) override { offers.push_back(std::move(offer)); }
  void on_plan(adapters::PlanUpdate e) override {
    plans.push_back(std::move(e));
    plan_lines.push_back(lines.size());
  }
  void on_usage(adapters::UsageUpdate e) override { usages.push_back(std::move(e)); }
  void on_commands(adapters::CommandsOffered e) override { commands.push_back(std::move(e)); }
  void on_options(adapters::OptionsOffered e) override { options.push_back(std::move(e)); }
  void on_mcp_status(adapters::McpStatusReport e) override { mcp.push_back(std::move(e)); }

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
  void on_permission_request(adapters::PermissionAsk ask) override {
    lines.push_back("permission " + ask.native_id + " " + ask.tool + " " + quoted(ask.subject));
    std::string native_id = ask.native_id;
    permissions.emplace_back(std::move(native_id), std::move(ask));
  }
  void on_question(adapters::QuestionAsk e) override { lines.push_back("question " + e.native_id); }
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
  void on_user_prompt(UserPrompt e) override { lines.push_back("prompt " + e.prompt_id + " " + quoted(e.text) + " at " + e.timestamp); }

  static std::string quoted(const std::string& text) { return nlohmann::json(text).dump(); }
  static std::string parent_of(const std::optional<std::string>& parent) { return parent ? " parent=" + *parent : std::string(); }
};

// Recorded `codex app-server` lines under tests/fixtures/codex/ (see its README).
inline std::vector<std::string> codex_fixture_lines(const std::string& name) {
  std::ifstream in(source_path("tests/fixtures/codex/") + name);
  REQUIRE(in.good());
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) {
    if (!line.empty()) lines.push_back(line);
  }
  return lines;
}

}  // namespace switchboard::testing
