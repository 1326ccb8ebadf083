#pragma once

#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <boost/asio/io_context.hpp>
#include <nlohmann/json.hpp>

#include "common/CliProcess.h"
#include "pi/PiRuntime.h"
#include "pi/PiTranslator.h"
#include "switchboard/adapters/AgentAdapter.h"
#include "switchboard/adapters/ForwardingListener.h"

namespace switchboard::adapters::pi {

// The plumbing half of the Pi adapter: one `pi --mode rpc` process per live session, run by the Node discovery
// chose (PiRuntime), in the session's working directory, with `--session-id` naming Pi's session from the start
// (ours when it is new, the recorded one to resume) and our permission extension loaded (`-e`). Stdout lines that
// answer our commands (`response`, matched by id) are handled here; every other line goes to the pure
// PiTranslator. The mode's answers (PiPermissions.h), the model and thinking-level switches, abort and the stop
// are this class's; the turn's events are the translator's.
class PiAdapter final : public AgentAdapter {
 public:
  PiAdapter(boost::asio::io_context& io, AdapterListener& listener, PiRuntime& runtime);
  ~PiAdapter() override;

  static protocol::AgentCapabilities static_capabilities();

  protocol::AgentCapabilities capabilities() const override { return static_capabilities(); }
  void start(const StartOptions& options, Completion done) override;
  void send(TurnInput input) override;
  // Pi's abort: it ends the model stream or the running tool (a bash command is killed) and settles as aborted.
  void cancel() override;
  void answer_permission(const std::string& native_id, PermissionAnswer answer, Completion done) override;
  // Unsupported: no dialog of another extension reaches the engine (they are dismissed at once).
  void answer_question(const std::string& native_id, QuestionAnswer answer, Completion done) override;
  // "provider/model", or a model of the current provider; ":<thinking level>" after it switches the thinking
  // level too ("mock/mock-model:high", or ":high" alone).
  void set_model(const std::string& model, Completion done) override;
  void set_mode(const std::string& mode, Completion done) override;
  // `effort`: Pi's thinking level (set_thinking_level), from the next prompt.
  void set_option(const std::string& option_id, const std::string& value, Completion done) override;
  // Pi's own fork before the turn's user message: Pi goes on in a new session holding the conversation before that
  // turn (reported as the provider session), and the old one stays in Pi's history as it was.
  void rewind(const std::string& native_turn_ref, Completion done) override;
  // Pi's compact: it summarizes the conversation with the model (compaction_start/end become agent.status).
  void compact(Completion done) override;
  void stop() override;

 private:
  class Watch;
  using Answer = std::function<void(bool ok, const nlohmann::json& response)>;

  void launch(const PiLauncher& launcher, const StartOptions& options);
  void on_line(std::string_view line);
  void on_state(bool ok, const nlohmann::json& response);
  // A fork that keeps the conversation only through one turn: Pi's fork before the next turn's user message.
  void trim_fork(const std::string& through);
  // The start's last steps: the options asked for at start, then the user message the next turn comes after.
  void prepare_first_turn(std::vector<std::pair<std::string, std::string>> options);
  // What is reported once the start is done: commands, options, usage, MCP servers' status.
  void report_controls();
  void report_options();
  void report_usage();
  void report_mcp_status();
  // The turn ends with the entry id of its user message (native_turn_ref), asked of Pi first.
  void finish_turn(TurnResult result);
  // Sends `command` with an id of ours; `answer` gets its response (or ok=false with no data if Pi goes away).
  void request(nlohmann::json command, Answer answer);
  void change_model(const std::string& model, Completion done);
  void write_prompt(const TurnInput& input);
  void turn_ended();
  void forget_mcp_file();
  void answer_dialog(const std::string& id, const PermissionAnswer& answer);
  void on_process_exit(const std::string& reason);
  void fail_start(AdapterError error);

  AdapterListener& m_listener;
  PiRuntime& m_runtime;
  std::unique_ptr<Watch> m_watch;
  std::unique_ptr<PiTranslator> m_translator;
  CliProcess m_cli;
  std::shared_ptr<bool> m_alive = std::make_shared<bool>(true);  // discovery's callback checks it

  Completion m_start_done;  // while waiting for discovery, before the process runs
  std::optional<std::string> m_resume_id;
  std::string m_mode = "ask";
  std::string m_provider;  // the current model's provider, from get_state
  std::string m_model;     // "provider/id" as last set
  std::map<std::string, Answer> m_pending;
  std::uint64_t m_next_id = 0;
  bool m_turn_running = false;
  bool m_stopped_reported = false;
  // The turn to keep through, for a fork started with fork_through_turn_ref (until the copy is trimmed).
  std::optional<std::string> m_fork_through;
  std::vector<std::pair<std::string, std::string>> m_start_options;
  // The entry id of the latest user message on Pi's branch: a turn whose own is the same wrote none.
  std::string m_last_user_entry;
  std::vector<protocol::McpServer> m_mcp_servers;
  std::filesystem::path m_mcp_file;             // the servers' file our MCP extension reads; removed at exit
  std::optional<std::string> m_mcp_status_text; // collecting what `/mcp` prints while it runs
};

// "mock/mock-model:high" → {"mock", "mock-model", "high"}; parts left out are empty. The level is split off only
// when it is one of Pi's thinking levels (a model id may have a colon of its own).
struct ModelChoice {
  std::string provider;
  std::string model;
  std::string thinking;
};
ModelChoice parse_model_choice(const std::string& text);

// The models of get_available_models' answer, named as set_model takes them ("provider/id"); `pi_default` (the
// same form: the model get_state names for a session that chose none; empty when it chose one) is marked default.
std::vector<protocol::ModelInfo> offered_models(const nlohmann::json& response, const std::string& pi_default);

}  // namespace switchboard::adapters::pi
