#pragma once

#include <chrono>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>

#include "switchboard/adapters/AgentAdapter.h"

namespace switchboard::testing {

// A test-only agent (never shipped, never selectable by users): each turn plays a script of steps, one posted
// handler per step, so the engine sees the same asynchrony as with a real CLI. Steps that ask (permission,
// question) pause the script until the engine answers; `hold` pauses until the test calls resume().
class ScriptedAdapter : public adapters::AgentAdapter {
 public:
  struct Delta { std::string text; };
  struct Message { std::string text; std::optional<std::string> parent{}; };  // parent: a sub-agent's message
  struct Tool { std::string id; std::string name; std::string output; };
  struct ToolOutput { std::string id; std::string text; };  // a streamed piece of a running tool's output
  struct Ask { std::string tool; std::string subject; };
  struct AskQuestion { std::string question; };
  // The agent asks (a permission, or a question when `question` is set), then stops waiting for the answer
  // (withdraws the request, as Claude Code's control_cancel_request does) and goes on with the script.
  struct AskThenWithdraw { std::string tool; std::string subject; bool question = false; };
  struct Hold {};
  struct Fail { std::string message; };  // recoverable error event
  struct Status { adapters::AgentStatus status; };
  struct Die { std::string reason; };    // the process is gone
  // The turn ends; `native_turn_ref` is the agent's reference for it (TurnResult::native_turn_ref), "" for none.
  // Unset: "ref-<turn number>", counted over every turn the scripted agents played.
  struct End { protocol::StopReason reason = protocol::StopReason::EndTurn; std::optional<std::string> native_turn_ref{}; };
  // What an agent reports about the session as a whole (listener events with a payload of their own).
  struct Plan { adapters::PlanUpdate plan; };
  struct Usage { adapters::UsageUpdate usage; };
  struct Commands { adapters::CommandsOffered commands; };
  struct Options { adapters::OptionsOffered options; };
  struct McpStatus { adapters::McpStatusReport report; };
  using Step = std::variant<Delta, Message, Tool, ToolOutput, Ask, AskQuestion, AskThenWithdraw, Hold, Fail, Status, Die, End,
                            Plan, Usage, Commands, Options, McpStatus>;
  using Script = std::vector<Step>;

  // Shared between the test and the adapter instances the engine creates.
  struct Control {
    std::deque<Script> turns;                  // one script per turn, in order
    std::vector<adapters::TurnInput> inputs;   // what the engine sent
    std::vector<adapters::PermissionAnswer> permission_answers;
    std::vector<adapters::QuestionAnswer> question_answers;
    std::vector<std::string> models_set;
    std::vector<adapters::StartOptions> start_options;  // one per start, in order
    int starts = 0;
    int cancels = 0;
    int stops = 0;
    std::optional<adapters::AdapterError> fail_start;
    std::optional<adapters::AdapterError> fail_next_start;  // the next start only (taken by it)
    // Reported at every start, before the start completes (as Claude Code's initialize answer lists them).
    std::vector<protocol::ModelInfo> offered_models;
    bool supports_model_switch = true;
    // The agent refuses what it is told later, the way a CLI answers a control request: set_model and set_mode
    // complete from a posted handler, with this error if set.
    bool settings_answer_later = false;
    std::optional<adapters::AdapterError> refuse_settings;
    std::vector<std::string> modes_set;
    // The agent takes no answers: answer_permission and answer_question complete with this error.
    std::optional<adapters::AdapterError> refuse_answers;
    std::function<void()> resume;  // set while a Hold step waits
    // How long each stop() takes before the adapter reports on_unavailable, one entry per stop in order (models a
    // CLI that takes time to finish and exit); a negative entry never reports. Empty: at once.
    std::deque<std::chrono::milliseconds> stop_delays;
    // Steps played once, right after the next turn has ended: an agent that reports activity between turns.
    Script after_turn;
    // A resumed conversation keeps its id (as Claude Code's and Codex's do): the start reports the id it resumed,
    // unless it forked it. Otherwise every start reports a new id, "provider-<start number>".
    bool keep_resumed_id = false;
    // What agents.list and the adapter say the agent can do.
    protocol::AgentCapabilities capabilities = default_capabilities();
    // Steps played at every start, once the start has completed (an agent that reports its commands, options or
    // MCP servers' status as it comes up).
    Script at_start;
    // set_option, rewind and compact: what the agent was asked (option id and value; the turn reference), and the
    // error it refuses them with, if set. A compaction reports agent status `compacting`.
    std::vector<std::pair<std::string, std::string>> options_set;
    std::vector<std::string> rewinds;
    std::function<void()> on_rewind;  // runs as the agent takes a rewind, before it completes
    int compactions = 0;
    std::optional<adapters::AdapterError> refuse_controls;
    // Non-empty: set_option reports these options (the one set showing its new value) before it completes and
    // once more after, as agents that answer a change with their whole list do.
    std::vector<protocol::SessionOption> options_on_set;
    int turns_ended = 0;
  };

  static protocol::AgentCapabilities default_capabilities() {
    protocol::AgentCapabilities capabilities;
    capabilities.streaming = capabilities.permissions = capabilities.questions = true;
    capabilities.model_switch = capabilities.modes = true;
    return capabilities;
  }

  ScriptedAdapter(boost::asio::io_context& io, adapters::AdapterListener& listener, std::shared_ptr<Control> control)
      : m_io(io), m_listener(listener), m_control(std::move(control)), m_alive(std::make_shared<bool>(true)), m_stop_timer(io) {}
  ~ScriptedAdapter() override { *m_alive = false; }

  static adapters::AgentDescriptor descriptor(boost::asio::io_context& io, std::shared_ptr<Control> control) {
    adapters::AgentDescriptor d;
    d.name = "scripted";
    d.discover = [control] {
      protocol::AgentInfo info;
      info.agent = "scripted";
      info.installed = true;
      info.capabilities = control->capabilities;
      return info;
    };
    d.create = [&io, control](adapters::AdapterListener& listener) {
      return std::make_unique<ScriptedAdapter>(io, listener, control);
    };
    return d;
  }

  protocol::AgentCapabilities capabilities() const override {
    auto capabilities = m_control->capabilities;
    capabilities.model_switch = m_control->supports_model_switch;
    return capabilities;
  }
  void start(const adapters::StartOptions& options, adapters::Completion done) override {
    ++m_control->starts;
    m_control->start_options.push_back(options);
    std::string id = "provider-" + std::to_string(m_control->starts);
    if (m_control->keep_resumed_id && options.resume_provider_session_id && !options.fork) id = *options.resume_provider_session_id;
    auto failure = m_control->fail_next_start ? std::exchange(m_control->fail_next_start, std::nullopt) : m_control->fail_start;
    later([this, id, failure, done = std::move(done)] {
      if (!failure && !m_control->offered_models.empty()) m_listener.on_models({m_control->offered_models});
      done(failure);
      if (failure) return;
      m_listener.on_provider_session({id});
      for (const auto& step : m_control->at_start) report(step);
    });
  }
  void send(adapters::TurnInput input) override {
    m_control->inputs.push_back(input);
    m_script = m_control->turns.empty() ? Script{Message{"ok"}, End{}} : m_control->turns.front();
    if (!m_control->turns.empty()) m_control->turns.pop_front();
    m_step = 0;
    m_running = true;
    later([this] { advance(); });
  }
  void cancel() override {
    ++m_control->cancels;
    if (!m_running) return;
    m_running = false;
    m_control->resume = nullptr;
    later([this] { m_listener.on_turn_end(adapters::TurnResult{protocol::StopReason::Cancelled, "", std::nullopt, std::nullopt}); });
  }
  void answer_permission(const std::string&, adapters::PermissionAnswer answer, adapters::Completion done) override {
    if (m_control->refuse_answers) return done(m_control->refuse_answers);
    m_control->permission_answers.push_back(answer);
    later([this] { advance(); });
    done(std::nullopt);
  }
  void answer_question(const std::string&, adapters::QuestionAnswer answer, adapters::Completion done) override {
    if (m_control->refuse_answers) return done(m_control->refuse_answers);
    m_control->question_answers.push_back(answer);
    later([this] { advance(); });
    done(std::nullopt);
  }
  void set_model(const std::string& model, adapters::Completion done) override {
    if (!m_control->supports_model_switch) return done(adapters::AdapterError{protocol::ErrorCode::Unsupported, "no model switching"});
    m_control->models_set.push_back(model);
    settle_setting(std::move(done));
  }
  void set_mode(const std::string& mode, adapters::Completion done) override {
    m_control->modes_set.push_back(mode);
    settle_setting(std::move(done));
  }
  void set_option(const std::string& option_id, const std::string& value, adapters::Completion done) override {
    if (m_control->refuse_controls) return done(m_control->refuse_controls);
    m_control->options_set.emplace_back(option_id, value);
    if (m_control->options_on_set.empty()) return done(std::nullopt);
    auto options = m_control->options_on_set;
    for (auto& option : options) {
      if (option.id == option_id) option.current_value = value;
    }
    m_listener.on_options({options});
    done(std::nullopt);
    later([this, options] { m_listener.on_options({options}); });
  }
  void rewind(const std::string& native_turn_ref, adapters::Completion done) override {
    if (m_control->refuse_controls) return done(m_control->refuse_controls);
    m_control->rewinds.push_back(native_turn_ref);
    if (m_control->on_rewind) m_control->on_rewind();
    later([done = std::move(done)] { done(std::nullopt); });
  }
  void compact(adapters::Completion done) override {
    if (m_control->refuse_controls) return done(m_control->refuse_controls);
    ++m_control->compactions;
    later([this, done = std::move(done)] {
      adapters::AgentStatus status;
      status.status = protocol::AgentStatusKind::Compacting;
      m_listener.on_status(status);
      done(std::nullopt);
    });
  }
  void stop() override {
    ++m_control->stops;
    if (m_stopping) return;
    m_stopping = true;
    auto delay = std::chrono::milliseconds(0);
    if (!m_control->stop_delays.empty()) {
      delay = m_control->stop_delays.front();
      m_control->stop_delays.pop_front();
    }
    if (delay.count() < 0) return;
    m_stop_timer.expires_after(delay);
    m_stop_timer.async_wait([this, alive = m_alive](const boost::system::error_code& error) {
      if (error || !*alive) return;
      m_running = false;
      m_listener.on_unavailable({"stopped"});
    });
  }

 private:
  void settle_setting(adapters::Completion done) {
    if (!m_control->settings_answer_later) return done(m_control->refuse_settings);
    later([this, done = std::move(done)] { done(m_control->refuse_settings); });
  }

  template <class F>
  void later(F work) {
    boost::asio::post(m_io, [alive = m_alive, work = std::move(work)]() mutable {
      if (*alive) work();
    });
  }

  // The steps that report something about the session as a whole; false for any other step.
  bool report(const Step& step) {
    if (const auto* plan = std::get_if<Plan>(&step)) m_listener.on_plan(plan->plan);
    else if (const auto* usage = std::get_if<Usage>(&step)) m_listener.on_usage(usage->usage);
    else if (const auto* commands = std::get_if<Commands>(&step)) m_listener.on_commands(commands->commands);
    else if (const auto* options = std::get_if<Options>(&step)) m_listener.on_options(options->options);
    else if (const auto* mcp = std::get_if<McpStatus>(&step)) m_listener.on_mcp_status(mcp->report);
    else return false;
    return true;
  }

  // Runs steps until one has to wait.
  void advance() {
    while (m_running && m_step < m_script.size()) {
      const Step step = m_script[m_step++];
      if (report(step)) continue;
      if (const auto* delta = std::get_if<Delta>(&step)) m_listener.on_delta({"m1", protocol::DeltaKind::Text, delta->text, std::nullopt});
      else if (const auto* message = std::get_if<Message>(&step)) m_listener.on_message({"m1", protocol::DeltaKind::Text, message->text, message->parent});
      else if (const auto* tool = std::get_if<Tool>(&step)) {
        m_listener.on_tool_started({tool->id, tool->name, nlohmann::json{{"command", tool->name}}, std::nullopt});
        m_listener.on_tool_completed({tool->id, tool->output, false});
      } else if (const auto* output = std::get_if<ToolOutput>(&step)) {
        m_listener.on_tool_output({output->id, output->text});
      } else if (const auto* ask = std::get_if<Ask>(&step)) {
        adapters::PermissionAsk permission;
        permission.native_id = "native-" + std::to_string(m_step);
        permission.tool = ask->tool;
        permission.input = nlohmann::json{{"command", ask->subject}};
        permission.description = "run " + ask->subject;
        permission.subject = ask->subject;
        permission.suggested_rule = protocol::PermissionRule{ask->tool, ask->subject};
        permission.reason = "default mode asks for " + ask->tool;
        m_listener.on_permission_request(permission);
        return;  // resumes on answer_permission
      } else if (const auto* question = std::get_if<AskQuestion>(&step)) {
        m_listener.on_question(adapters::QuestionAsk{"native-q-" + std::to_string(m_step),
                                                     {protocol::Question{question->question, std::nullopt, std::nullopt, std::nullopt}}});
        return;
      } else if (const auto* withdrawn = std::get_if<AskThenWithdraw>(&step)) {
        const std::string native_id = "native-w-" + std::to_string(m_step);
        if (withdrawn->question) {
          m_listener.on_question(adapters::QuestionAsk{native_id, {protocol::Question{withdrawn->subject, std::nullopt, std::nullopt, std::nullopt}}});
        } else {
          adapters::PermissionAsk permission;
          permission.native_id = native_id;
          permission.tool = withdrawn->tool;
          permission.subject = withdrawn->subject;
          permission.description = "run " + withdrawn->subject;
          m_listener.on_permission_request(permission);
        }
        later([this, native_id] {
          m_listener.on_request_withdrawn({native_id});
          advance();
        });
        return;
      } else if (std::holds_alternative<Hold>(step)) {
        m_control->resume = [this] { later([this] { advance(); }); };
        return;
      } else if (const auto* fail = std::get_if<Fail>(&step)) {
        m_listener.on_error({fail->message, true});
      } else if (const auto* status = std::get_if<Status>(&step)) {
        m_listener.on_status(status->status);
      } else if (const auto* die = std::get_if<Die>(&step)) {
        m_running = false;
        m_listener.on_unavailable({die->reason});
        return;
      } else if (const auto* end = std::get_if<End>(&step)) {
        m_running = false;
        adapters::TurnResult result{end->reason, "", protocol::Usage{10, 20, std::nullopt, std::nullopt}, std::nullopt};
        const int number = ++m_control->turns_ended;
        const std::string ref = end->native_turn_ref.value_or("ref-" + std::to_string(number));
        if (!ref.empty()) result.native_turn_ref = ref;
        m_listener.on_turn_end(std::move(result));
        if (!m_control->after_turn.empty()) {
          m_script = std::exchange(m_control->after_turn, {});
          m_step = 0;
          m_running = true;
          later([this] { advance(); });
        }
        return;
      }
    }
  }

  boost::asio::io_context& m_io;
  adapters::AdapterListener& m_listener;
  std::shared_ptr<Control> m_control;
  std::shared_ptr<bool> m_alive;
  Script m_script;
  std::size_t m_step = 0;
  bool m_running = false;
  bool m_stopping = false;
  boost::asio::steady_timer m_stop_timer;
};

}  // namespace switchboard::testing
