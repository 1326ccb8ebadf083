#include "fake_server_agent/FakeServerAgent.h"

#include <algorithm>
#include <array>
#include <fstream>
#include <memory>
#include <sstream>

#include "common/EnvironmentVariable.h"
#include "common/NativeJson.h"
#include "fake_server_agent/FakeServerRuntime.h"

namespace switchboard::testing::fake_server {

namespace fs = std::filesystem;
using adapters::AdapterError;
using adapters::HistoryOutcome;
using nlohmann::json;

namespace {

const std::array kSettings{
    config::AgentSettingSpec{"agents.fakeserver.bin", "--fakeserver-bin", "SWITCHBOARD_FAKESERVER_BIN", config::Kind::Text,
                             "the fake server agent's executable (tests only)", "fake_server_agent.py"},
};

// Where the server keeps its sessions (fake_server_agent.py, sessions_dir()).
std::optional<fs::path> sessions_dir() {
  if (auto home = adapters::environment_variable("FAKE_SERVER_AGENT_HOME")) return fs::path(*home) / "sessions";
  if (auto home = adapters::environment_variable("HOME")) return fs::path(*home) / ".fake-server-agent" / "sessions";
  return std::nullopt;
}

json read_record(const fs::path& file) {
  std::ifstream in(file);
  std::stringstream text;
  text << in.rdbuf();
  return adapters::native::parse_line(text.str());
}

std::int64_t prompts_of(const json& record) {
  std::int64_t prompts = 0;
  for (const auto& message : record.value("messages", json::array())) {
    if (message.value("role", "") != "user") continue;
    const auto content = message.value("content", json::array());
    if (!content.empty() && content[0].value("type", "") == "text") ++prompts;
  }
  return prompts;
}

HistoryOutcome<adapters::HistoryList> list_sessions(const std::optional<fs::path>& dir, const std::string& cwd) {
  adapters::HistoryList list;
  std::error_code error;
  if (!dir || !fs::is_directory(*dir, error)) return list;
  for (const auto& entry : fs::directory_iterator(*dir, error)) {
    if (entry.path().extension() != ".json") continue;
    const auto record = read_record(entry.path());
    if (!record.is_object()) {
      ++list.skipped_files;
      continue;
    }
    if (record.value("cwd", "") != cwd || prompts_of(record) == 0) continue;
    adapters::HistoryEntry session;
    session.provider_session_id = record.value("id", "");
    session.title = record.value("title", "");
    session.cwd = cwd;
    session.created_at = record.value("created", std::int64_t{0});
    session.updated_at = record.value("updated", std::int64_t{0});
    session.prompts = prompts_of(record);
    session.path = entry.path().string();
    list.sessions.push_back(std::move(session));
  }
  std::sort(list.sessions.begin(), list.sessions.end(),
            [](const auto& a, const auto& b) { return a.updated_at > b.updated_at; });
  return list;
}

// The stored conversation as prompts and their turns' activity.
HistoryOutcome<adapters::HistoryReadStats> read_session(const std::optional<fs::path>& dir, const std::string& cwd,
                                                        const std::string& id, adapters::HistorySink& sink) {
  const auto unknown = AdapterError{protocol::ErrorCode::UnknownHistorySession, "the fake server agent has no session " + id.substr(0, 200)};
  if (!dir || id.rfind("fs_", 0) != 0 || id.find('/') != std::string::npos) return unknown;
  const auto record = read_record(*dir / (id + ".json"));
  if (!record.is_object() || record.value("cwd", "") != cwd) return unknown;
  adapters::HistoryReadStats stats;
  bool in_turn = false;
  std::string last_text;
  const auto end_turn = [&] {
    if (!in_turn) return;
    adapters::TurnResult result;
    result.text = last_text;
    sink.on_turn_end(std::move(result));
    in_turn = false;
  };
  int index = 0;
  for (const auto& message : record.value("messages", json::array())) {
    ++stats.lines;
    const auto content = message.value("content", json::array());
    if (!content.is_array()) {
      ++stats.skipped_lines;
      continue;
    }
    const std::string role = message.value("role", "");
    for (const auto& block : content) {
      const std::string type = block.value("type", "");
      const std::string block_id = id + ":" + std::to_string(index++);
      if (role == "user" && type == "text") {
        end_turn();
        sink.on_user_prompt(adapters::HistorySink::UserPrompt{block_id, block.value("text", ""), ""});
        in_turn = true;
        last_text.clear();
      } else if (role == "user" && type == "tool_result") {
        sink.on_tool_completed(adapters::ToolCompleted{block.value("tool_use_id", ""), block.value("content", ""),
                                                       block.value("is_error", false)});
      } else if (role == "assistant" && type == "text") {
        last_text = block.value("text", "");
        sink.on_message(adapters::MessageCompleted{block_id, protocol::DeltaKind::Text, last_text, std::nullopt});
      } else if (role == "assistant" && type == "tool_use") {
        sink.on_tool_started(adapters::ToolStarted{block.value("id", ""), "shell", block.value("input", json::object()), std::nullopt});
      }
    }
  }
  end_turn();
  return stats;
}

}  // namespace

std::span<const config::AgentSettingSpec> fake_server_settings() { return kSettings; }

adapters::AgentDescriptor fake_server_agent(boost::asio::io_context& io, const config::AgentSettings& settings) {
  FakeServerConfig config;
  if (auto bin = settings.text("agents.fakeserver.bin")) config.executable = *bin;
  auto descriptor = adapters::describe_runtime("fakeserver", std::make_shared<FakeServerRuntime>(io, std::move(config)));
  descriptor.list_history = [dir = sessions_dir()](const std::string& cwd) { return list_sessions(dir, cwd); };
  descriptor.read_history = [dir = sessions_dir()](const std::string& cwd, const std::string& id, adapters::HistorySink& sink) {
    return read_session(dir, cwd, id, sink);
  };
  return descriptor;
}

}  // namespace switchboard::testing::fake_server
