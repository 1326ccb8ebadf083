#include "controls_agent/ControlsAgent.h"

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>

namespace switchboard::testing::controls {

namespace fs = std::filesystem;
namespace p = protocol;
using adapters::AdapterError;
using adapters::Completion;

// How a prompt scripts the turn (words anywhere in it, combined freely):
//   `plan`             the plan (three entries, one of each status), then the same plan with the second done;
//   `write NAME TEXT`  writes TEXT (one word) to NAME in the working directory, as a tool call with its diff;
//   `slow`             the answer takes 3 s (long enough to try what a running turn refuses);
//   `listing`          a tool call whose output is 40 numbered lines (long output, shown collapsed);
//   `code`             the answer ends with a fenced Python code block;
//   `flood`            before the answer, a message of 4,000 deltas ("w0 w1 … w3999 "), 20 every 10 ms;
//   `/NAME ARGS`       an offered command (the engine passes it parsed): the answer says it ran.
// Every answer says which turn of the conversation it is and the effort in force, so a rewind, a fork or an
// option change shows in the next answer; every turn reports context usage growing by 1,200 tokens a turn.
namespace {

constexpr std::int64_t kWindowTokens = 200000;
constexpr std::int64_t kTokensPerTurn = 1200;
constexpr double kCostPerTurn = 0.0125;
constexpr int kFloodDeltas = 4000;
constexpr int kFloodBatch = 20;  // per 10 ms tick: 2,000 deltas a second at most

// The agent's own conversations, by its id for them, in the test daemon's memory: each a list of turns (their
// native refs). Shared by every session of the agent, as a CLI's history files would be.
struct Conversations {
  std::map<std::string, std::vector<std::string>> turns;
  int next_id = 0;
};

Conversations& conversations() {
  static Conversations instance;
  return instance;
}

std::vector<p::AgentCommand> offered_commands() {
  return {p::AgentCommand{"review", "Review the changes so far", "<path>"},
          p::AgentCommand{"release-notes", "Write release notes for the last tag", std::nullopt},
          p::AgentCommand{"explain", "Explain a file", "<file>"}};
}

p::SessionOption effort_option(const std::string& current) {
  p::SessionOption option;
  option.id = "effort";
  option.name = "Reasoning effort";
  option.kind = p::SessionOptionKind::Select;
  option.values = {p::SessionOptionValue{"low", "Low", std::nullopt}, p::SessionOptionValue{"medium", "Medium", std::nullopt},
                   p::SessionOptionValue{"high", "High", std::nullopt}};
  option.current_value = current;
  return option;
}

p::PlanEntry entry(std::string content, p::PlanEntryStatus status, std::optional<p::PlanEntryPriority> priority = std::nullopt) {
  return p::PlanEntry{std::move(content), status, priority};
}

bool has_word(const std::string& text, const std::string& word) {
  std::size_t at = 0;
  while ((at = text.find(word, at)) != std::string::npos) {
    const bool starts = at == 0 || text[at - 1] == ' ' || text[at - 1] == '\n';
    const auto end = at + word.size();
    if (starts && (end == text.size() || text[end] == ' ' || text[end] == '\n')) return true;
    at = end;
  }
  return false;
}

// The two words after `write`, if the prompt has them.
std::optional<std::pair<std::string, std::string>> write_request(const std::string& text) {
  std::vector<std::string> words;
  std::string word;
  for (const char c : text + " ") {
    if (c == ' ' || c == '\n') {
      if (!word.empty()) words.push_back(std::move(word));
      word.clear();
    } else {
      word += c;
    }
  }
  for (std::size_t i = 0; i + 2 < words.size(); ++i) {
    if (words[i] == "write" && words[i + 1].find('/') == std::string::npos && words[i + 1] != "..") {
      return std::pair{words[i + 1], words[i + 2]};
    }
  }
  return std::nullopt;
}

p::AgentCapabilities capabilities_of(bool full) {
  p::AgentCapabilities c;
  c.streaming = true;
  c.resume = true;
  c.fork = full;
  c.plans = full;
  c.context_usage = full;
  c.commands = full;
  c.options = full;
  c.mcp = full;
  c.rewind = full;
  c.compact = full;
  return c;
}

class ControlsAdapter final : public adapters::AgentAdapter {
 public:
  ControlsAdapter(boost::asio::io_context& io, adapters::AdapterListener& listener, bool full)
      : m_io(io), m_listener(listener), m_full(full), m_turn_timer(io), m_alive(std::make_shared<bool>(true)) {}
  ~ControlsAdapter() override {
    *m_alive = false;
    m_turn_timer.cancel();
  }

  p::AgentCapabilities capabilities() const override { return capabilities_of(m_full); }

  void start(const adapters::StartOptions& options, Completion done) override {
    m_cwd = options.cwd;
    auto& all = conversations();
    if (options.resume_provider_session_id && !options.fork) {
      m_conversation = *options.resume_provider_session_id;
      all.turns[m_conversation];  // unknown: an empty one under that id
    } else {
      m_conversation = "ctl-" + std::to_string(++all.next_id);
      auto& turns = all.turns[m_conversation];
      if (options.resume_provider_session_id) {  // a fork: a copy, up to the turn named
        turns = all.turns[*options.resume_provider_session_id];
        if (options.fork_through_turn_ref) {
          const auto it = std::find(turns.begin(), turns.end(), *options.fork_through_turn_ref);
          if (it != turns.end()) turns.erase(it + 1, turns.end());
        }
      }
    }
    for (const auto& [id, value] : options.options) {
      if (id == "effort") m_effort = value;
    }
    for (const auto& server : options.mcp_servers) {
      p::McpServerState state{server.name, server.transport, p::McpServerStatusKind::Connected, std::nullopt, 1};
      if (server.name.find("broken") != std::string::npos) {
        state.status = p::McpServerStatusKind::Failed;
        state.error = "the server exited before it answered initialize";
        state.tools.reset();
      }
      m_mcp.push_back(std::move(state));
    }
    later([this, done = std::move(done)] {
      m_listener.on_provider_session(adapters::ProviderSession{m_conversation});
      if (m_full) {
        m_listener.on_commands(adapters::CommandsOffered{offered_commands()});
        m_listener.on_options(adapters::OptionsOffered{{effort_option(m_effort)}});
        if (!m_mcp.empty()) m_listener.on_mcp_status(adapters::McpStatusReport{m_mcp});
      }
      done(std::nullopt);
    });
  }

  void send(adapters::TurnInput input) override {
    m_turn = std::move(input);
    later([this] { run_turn(); });
  }

  void cancel() override {
    if (!m_turn) return;
    m_turn_timer.cancel();
    m_turn.reset();
    later([this] {
      adapters::TurnResult result;
      result.stop_reason = p::StopReason::Cancelled;
      m_listener.on_turn_end(std::move(result));
    });
  }

  void answer_permission(const std::string&, adapters::PermissionAnswer, Completion done) override {
    done(AdapterError{p::ErrorCode::Unsupported, "the controls agent asks for no permission"});
  }
  void answer_question(const std::string&, adapters::QuestionAnswer, Completion done) override {
    done(AdapterError{p::ErrorCode::Unsupported, "the controls agent asks no question"});
  }
  void set_model(const std::string&, Completion done) override {
    done(AdapterError{p::ErrorCode::Unsupported, "the controls agent has one model"});
  }
  void set_mode(const std::string&, Completion done) override {
    done(AdapterError{p::ErrorCode::Unsupported, "the controls agent has no modes"});
  }

  void set_option(const std::string& option_id, const std::string& value, Completion done) override {
    if (!m_full) return adapters::AgentAdapter::set_option(option_id, value, std::move(done));
    m_effort = value;
    later([this, done = std::move(done)] {
      done(std::nullopt);
      m_listener.on_options(adapters::OptionsOffered{{effort_option(m_effort)}});
    });
  }

  void rewind(const std::string& native_turn_ref, Completion done) override {
    if (!m_full) return adapters::AgentAdapter::rewind(native_turn_ref, std::move(done));
    auto& turns = conversations().turns[m_conversation];
    const auto it = std::find(turns.begin(), turns.end(), native_turn_ref);
    if (it == turns.end()) return done(AdapterError{p::ErrorCode::UnknownTurn, "no such turn in the conversation"});
    turns.erase(it, turns.end());
    later([done = std::move(done)] { done(std::nullopt); });
  }

  void compact(Completion done) override {
    if (!m_full) return adapters::AgentAdapter::compact(std::move(done));
    later([this, done = std::move(done)] {
      m_listener.on_status(adapters::AgentStatus{p::AgentStatusKind::Compacting, "summarizing", std::nullopt, std::nullopt, std::nullopt});
      m_listener.on_status(adapters::AgentStatus{p::AgentStatusKind::Compacted, std::nullopt, std::nullopt, std::nullopt, std::nullopt});
      done(std::nullopt);
    });
  }

  void stop() override {
    m_turn_timer.cancel();
    later([this] { m_listener.on_unavailable(adapters::Unavailable{"stopped"}); });
  }

 private:
  // Runs `step` on the reactor after the current call returns, unless the adapter is gone by then.
  template <class Step>
  void later(Step step) {
    boost::asio::post(m_io, [alive = m_alive, step = std::move(step)]() mutable {
      if (*alive) step();
    });
  }

  void run_turn() {
    if (!m_turn) return;
    const auto& text = m_turn->text;
    if (m_full && has_word(text, "plan")) {
      m_listener.on_plan(adapters::PlanUpdate{{entry("Read the code", p::PlanEntryStatus::Completed, p::PlanEntryPriority::High),
                                                entry("Write the fix", p::PlanEntryStatus::InProgress),
                                                entry("Run the tests", p::PlanEntryStatus::Pending, p::PlanEntryPriority::Low)}});
    }
    if (const auto write = write_request(text)) {
      const auto tool_id = m_turn->turn_id + "-write";
      const auto path = fs::path(m_cwd) / write->first;
      adapters::ToolStarted started{tool_id, "write", {{"path", path.string()}, {"text", write->second}}, std::nullopt};
      started.diffs.push_back(p::FileDiff{path.string(), std::nullopt, write->second + "\n"});
      m_listener.on_tool_started(std::move(started));
      std::ofstream(path) << write->second << "\n";
      m_listener.on_tool_completed(adapters::ToolCompleted{tool_id, "wrote " + write->first, false});
    }
    if (has_word(text, "listing")) {
      const auto tool_id = m_turn->turn_id + "-listing";
      m_listener.on_tool_started(adapters::ToolStarted{tool_id, "list", {{"lines", 40}}, std::nullopt});
      std::string output;
      for (int line = 1; line <= 40; ++line) output += "line " + std::to_string(line) + (line < 40 ? "\n" : "");
      m_listener.on_tool_completed(adapters::ToolCompleted{tool_id, output, false});
    }
    if (has_word(text, "flood")) {
      m_flood_sent = 0;
      m_flood_text.clear();
      return flood_tick();
    }
    const auto delay = has_word(text, "slow") ? std::chrono::milliseconds(3000) : std::chrono::milliseconds(50);
    m_turn_timer.expires_after(delay);
    m_turn_timer.async_wait([this, alive = m_alive](const boost::system::error_code& error) {
      if (!error && *alive) finish_turn();
    });
  }

  void flood_tick() {
    if (!m_turn) return;
    const auto message_id = m_turn->turn_id + "-flood";
    for (int i = 0; i < kFloodBatch && m_flood_sent < kFloodDeltas; ++i, ++m_flood_sent) {
      std::string piece = "w" + std::to_string(m_flood_sent) + " ";
      m_flood_text += piece;
      m_listener.on_delta(adapters::TextDelta{message_id, p::DeltaKind::Text, std::move(piece), std::nullopt});
    }
    if (m_flood_sent >= kFloodDeltas) {
      m_listener.on_message(adapters::MessageCompleted{message_id, p::DeltaKind::Text, m_flood_text, std::nullopt});
      return finish_turn();
    }
    m_turn_timer.expires_after(std::chrono::milliseconds(10));
    m_turn_timer.async_wait([this, alive = m_alive](const boost::system::error_code& error) {
      if (!error && *alive) flood_tick();
    });
  }

  void finish_turn() {
    if (!m_turn) return;
    auto turn = std::move(*m_turn);
    m_turn.reset();
    auto& turns = conversations().turns[m_conversation];
    const auto ref = m_conversation + ":" + turn.turn_id;
    turns.push_back(ref);
    const auto count = static_cast<std::int64_t>(turns.size());
    std::string answer;
    if (turn.command) {
      answer = "Ran /" + turn.command->name + (turn.command->arguments.empty() ? "" : " with " + turn.command->arguments) + ".";
    } else {
      answer = "Answer " + std::to_string(count) + " of this conversation.";
    }
    if (m_full) answer += " Effort: " + m_effort + ".";
    if (has_word(turn.text, "code")) answer += "\n\n```python\nprint(\"hello\")\n```\n";
    const auto message_id = turn.turn_id + "-answer";
    m_listener.on_delta(adapters::TextDelta{message_id, p::DeltaKind::Text, answer, std::nullopt});
    m_listener.on_message(adapters::MessageCompleted{message_id, p::DeltaKind::Text, answer, std::nullopt});
    if (m_full && has_word(turn.text, "plan")) {
      m_listener.on_plan(adapters::PlanUpdate{{entry("Read the code", p::PlanEntryStatus::Completed, p::PlanEntryPriority::High),
                                                entry("Write the fix", p::PlanEntryStatus::Completed),
                                                entry("Run the tests", p::PlanEntryStatus::InProgress, p::PlanEntryPriority::Low)}});
    }
    if (m_full) {
      p::ContextUsage usage;
      usage.used_tokens = kTokensPerTurn * count;
      usage.window_tokens = kWindowTokens;
      usage.cost_usd = kCostPerTurn * static_cast<double>(count);
      m_listener.on_usage(adapters::UsageUpdate{usage});
    }
    adapters::TurnResult result;
    result.text = answer;
    result.usage = p::Usage{kTokensPerTurn, 20, std::nullopt, kCostPerTurn};
    result.native_turn_ref = ref;
    m_listener.on_turn_end(std::move(result));
  }

  boost::asio::io_context& m_io;
  adapters::AdapterListener& m_listener;
  bool m_full;
  boost::asio::steady_timer m_turn_timer;
  std::shared_ptr<bool> m_alive;
  std::string m_cwd;
  std::string m_conversation;
  std::string m_effort = "medium";
  std::vector<p::McpServerState> m_mcp;
  std::optional<adapters::TurnInput> m_turn;
  int m_flood_sent = 0;
  std::string m_flood_text;
};

adapters::AgentDescriptor describe(boost::asio::io_context& io, std::string name, bool full) {
  adapters::AgentDescriptor descriptor;
  descriptor.name = name;
  descriptor.discover = [name, full] {
    p::AgentInfo info;
    info.agent = name;
    info.installed = true;
    info.version = "1.0 (test)";
    info.capabilities = capabilities_of(full);
    return info;
  };
  descriptor.create = [&io, full](adapters::AdapterListener& listener) -> std::unique_ptr<adapters::AgentAdapter> {
    return std::make_unique<ControlsAdapter>(io, listener, full);
  };
  return descriptor;
}

}  // namespace

adapters::AgentDescriptor controls_agent(boost::asio::io_context& io) { return describe(io, "controls", true); }
adapters::AgentDescriptor bare_controls_agent(boost::asio::io_context& io) { return describe(io, "controls-bare", false); }

}  // namespace switchboard::testing::controls
