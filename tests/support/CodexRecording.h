#pragma once

#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "switchboard/adapters/AgentAdapter.h"
#include "support/LineRecordingSink.h"
#include "support/SourceTree.h"

namespace switchboard::testing {

// Records what the Codex translator and history reader report (LineRecordingSink), with the session state it
// reports beside a turn's activity.
class CodexRecordingSink : public LineRecordingSink {
 public:
  std::vector<std::pair<std::string, adapters::PermissionAsk>> permissions;  // native id, ask
  std::vector<adapters::ModelsOffered> offers;
  // Session state the translator reports beside the turn's activity; kept out of `lines`.
  std::vector<adapters::PlanUpdate> plans;
  std::vector<std::size_t> plan_lines;  // for each plan, how many lines came before it (where it falls among them)
  std::vector<adapters::UsageUpdate> usages;
  std::vector<adapters::CommandsOffered> commands;
  std::vector<adapters::McpStatusReport> mcp;

  void on_models(adapters::ModelsOffered offer) override { offers.push_back(std::move(offer)); }
  void on_plan(adapters::PlanUpdate e) override {
    plans.push_back(std::move(e));
    plan_lines.push_back(lines.size());
  }
  void on_usage(adapters::UsageUpdate e) override { usages.push_back(std::move(e)); }
  void on_commands(adapters::CommandsOffered e) override { commands.push_back(std::move(e)); }
  void on_mcp_status(adapters::McpStatusReport e) override { mcp.push_back(std::move(e)); }
  void on_permission_request(adapters::PermissionAsk ask) override {
    lines.push_back("permission " + ask.native_id + " " + ask.tool + " " + quoted(ask.subject));
    std::string native_id = ask.native_id;
    permissions.emplace_back(std::move(native_id), std::move(ask));
  }
  void on_question(adapters::QuestionAsk e) override { lines.push_back("question " + e.native_id); }
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
