#pragma once

#include <string>
#include <utility>
#include <vector>

#include "claude-code/ClaudeControl.h"
#include "claude-code/ClaudeHistory.h"
#include "support/LineRecordingSink.h"

namespace switchboard::testing {

// Records what the Claude translator and history reader report (LineRecordingSink), with the whole asks.
class ClaudeRecordingSink : public LineRecordingSink {
 public:
  std::vector<adapters::PermissionAsk> permissions;
  std::vector<adapters::QuestionAsk> questions;

  void on_permission_request(adapters::PermissionAsk ask) override {
    lines.push_back("permission " + ask.native_id + " " + ask.tool);
    permissions.push_back(std::move(ask));
  }
  void on_question(adapters::QuestionAsk ask) override {
    lines.push_back("question " + ask.native_id + " " + std::to_string(ask.questions.size()));
    questions.push_back(std::move(ask));
  }
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
