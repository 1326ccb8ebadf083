#pragma once

#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "codex/CodexProtocol.h"
#include "switchboard/adapters/AgentAdapter.h"

namespace switchboard::testing {

// Records what the Codex translator and history reader report: each callback as one line of text (for exact
// sequence assertions) and the structured values the line leaves out.
class CodexRecordingSink : public adapters::HistorySink {
 public:
  std::vector<std::string> lines;
  std::vector<std::pair<std::string, adapters::PermissionAsk>> permissions;  // native id, ask
  std::vector<adapters::TurnResult> turns;
  std::vector<adapters::AgentStatus> statuses;

  void on_provider_session(std::string id) override { lines.push_back("provider_session " + id); }
  void on_delta(const std::string& id, protocol::DeltaKind kind, std::string text, std::optional<std::string>) override {
    lines.push_back("delta " + id + " " + std::string(protocol::to_string(kind)) + " " + quoted(text));
  }
  void on_message(const std::string& id, protocol::DeltaKind kind, std::string text, std::optional<std::string>) override {
    lines.push_back("message " + id + " " + std::string(protocol::to_string(kind)) + " " + quoted(text));
  }
  void on_tool_started(std::string id, std::string tool, nlohmann::json input, std::optional<std::string>) override {
    lines.push_back("tool_started " + id + " " + tool + " " + input.dump());
  }
  void on_tool_output(const std::string& id, std::string text) override { lines.push_back("tool_output " + id + " " + quoted(text)); }
  void on_tool_completed(std::string id, std::string output, bool is_error) override {
    lines.push_back("tool_completed " + id + (is_error ? " error " : " ok ") + quoted(output));
  }
  void on_permission_request(std::string native_id, adapters::PermissionAsk ask) override {
    lines.push_back("permission " + native_id + " " + ask.tool + " " + quoted(ask.subject));
    permissions.emplace_back(std::move(native_id), std::move(ask));
  }
  void on_question(std::string native_id, adapters::QuestionAsk) override { lines.push_back("question " + native_id); }
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
};

// Records what the translator tells the adapter alone.
class CodexRecordingControl : public adapters::codex::CodexControlSink {
 public:
  std::vector<adapters::codex::CodexResponse> responses;
  std::vector<std::pair<nlohmann::json, std::string>> unanswerable;  // id, method

  void on_response(const adapters::codex::CodexResponse& response) override { responses.push_back(response); }
  void on_unanswerable_request(const nlohmann::json& id, const std::string& method) override {
    unanswerable.emplace_back(id, method);
  }
};

// Recorded `codex app-server` lines under tests/fixtures/codex/ (see its README).
inline std::vector<std::string> codex_fixture_lines(const std::string& name) {
  std::ifstream in(std::string(SWITCHBOARD_SOURCE_DIR) + "/tests/fixtures/codex/" + name);
  REQUIRE(in.good());
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) {
    if (!line.empty()) lines.push_back(line);
  }
  return lines;
}

}  // namespace switchboard::testing
