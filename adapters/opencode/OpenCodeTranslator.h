#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/LineStats.h"
#include "switchboard/adapters/AgentAdapter.h"

namespace switchboard::adapters::opencode {

// One session's view of `opencode serve`'s event stream: each event of that session (the `payload` of a
// /global/event record: {"type", "properties"}) in, AdapterListener events out. Pure: no I/O, no clock; the
// runtime routes events here by session id, the session adapter says when it sent a prompt. The mapping, and the
// event types dropped on purpose, are in docs/agents/opencode.md.
class OpenCodeTranslator {
 public:
  explicit OpenCodeTranslator(AdapterListener& events) : m_events(events) {}

  // A prompt went to the server: the next end of activity (session.idle) ends this turn.
  void turn_started();
  bool turn_running() const { return m_turn_running; }
  // Our abort was sent: the turn ends cancelled, whatever error the server reports for it.
  void abort_sent() { m_aborted = true; }
  // OpenCode summarizes the conversation on our request (between turns): the summary it writes is no message of
  // a turn, and its busy and idle are not a turn's. The request's answer comes on a connection of its own and can
  // overtake the end of the summary on the event stream: until that summary's idle has come, it is still dropped
  // (and OpenCode runs a prompt sent meanwhile only after it, so no turn's event is among them).
  void set_compacting(bool compacting);
  bool compacting() const { return m_compacting; }
  // The prompt was refused before OpenCode started on it: the turn ends now, as an error.
  void turn_refused(const std::string& why);

  // Which OpenCode session is this one's own. Events of any other session the runtime routes here are those of
  // sub-agents (OpenCode's `task` tool runs each in a child session): they are reported nested inside the task
  // call that runs them, and their idles and errors do not end our turn. Unset (history), every event is ours.
  void set_session_id(std::string id) { m_session_id = std::move(id); }

  // What usage reports need beyond the steps' own tokens: the model's context window (from the provider's
  // configuration; unset: unknown), and what the session had used and cost before this translator saw it (a
  // resumed session's totals), to which every step of ours adds.
  void set_context_window(std::optional<std::int64_t> tokens) { m_window = tokens; }
  void seed_totals(std::int64_t input, std::int64_t output, std::int64_t cache_read, double cost);
  // History replay: OpenCode's database keeps no todo.updated, but each `todowrite` call's input is the whole
  // list it set, so a completed call of the session's own is the plan then. (Live, todo.updated says it.)
  void set_plans_from_todowrite(bool on) { m_plans_from_todowrite = on; }

  void feed(const nlohmann::json& payload);

  const LineStats& stats() const { return m_lines.stats(); }

 private:
  struct ToolCall {
    bool started = false;
    std::size_t output_sent = 0;  // bytes of the running output already reported
    bool done = false;
  };

  // `parent`: the tool call whose sub-agent wrote the event; unset for the session's own events.
  void feed_event(const nlohmann::json& payload, const std::optional<std::string>& parent);
  // A message of OpenCode's own summary (an assistant message marked `summary`), or a part of one: remembered and
  // dropped wherever it comes, since an automatic compaction writes one inside a turn too.
  bool is_summary_event(const std::string& type, const nlohmann::json& properties);
  void on_part(const nlohmann::json& part, const std::optional<std::string>& parent);
  void on_tool_part(const nlohmann::json& part, const std::optional<std::string>& parent);
  void on_permission(const nlohmann::json& properties);
  void on_question(const nlohmann::json& properties);
  void on_status(const nlohmann::json& status);
  void on_todos(const nlohmann::json& properties);
  void on_step_finish(const nlohmann::json& part, const std::optional<std::string>& parent);
  void end_turn();

  AdapterListener& m_events;
  LineLog m_lines{"opencode"};
  bool m_turn_running = false;
  // OpenCode said `busy` since our prompt: only then does an idle end our turn. An idle can come late from the
  // turn before (OpenCode sends `session.status idle` and `session.idle`, and idle twice after an abort), and the
  // engine may have sent the next prompt by then.
  bool m_busy = false;
  bool m_aborted = false;
  std::optional<std::string> m_error;      // session.error of this turn (other than our abort)
  std::set<std::string> m_user_messages;   // their parts are our own prompt, not the agent's output
  std::map<std::string, protocol::DeltaKind> m_part_kinds;  // text or reasoning, by part id
  std::set<std::string> m_completed_parts;
  std::map<std::string, ToolCall> m_tools;  // by call id
  std::string m_last_text;                  // the turn's last text part: its answer
  std::string m_session_id;
  // Sub-agent sessions of the running turn: child session id -> the task tool call that runs it (from the task
  // part's metadata.sessionId). A child's events that come before its task part names it wait here.
  std::map<std::string, std::string> m_child_calls;
  std::map<std::string, std::vector<nlohmann::json>> m_unplaced;
  protocol::Usage m_usage;
  bool m_has_usage = false;
  bool m_compacting = false;
  bool m_summary_idle_seen = false;  // the summary's session.idle came while compacting
  bool m_draining_summary = false;   // the request was answered before that idle: drop until it comes
  std::set<std::string> m_summary_messages;  // OpenCode's summary messages (`summary: true`): never a turn's answer
  bool m_plans_from_todowrite = false;
  // The turn's own prompt: the first user message of our session OpenCode announced since the prompt went out
  // (TurnResult::native_turn_ref; fork and rewind name turns by it).
  std::optional<std::string> m_turn_ref;
  // For usage reports: the window, and the session's running totals.
  std::optional<std::int64_t> m_window;
  std::int64_t m_input_total = 0;
  std::int64_t m_output_total = 0;
  std::int64_t m_cache_read_total = 0;
  double m_cost_total = 0;
};

// An OpenCode todo list (todo.updated's `todos`, the todowrite tool's input) as plan entries: each todo's
// content, its status (pending, in_progress, completed; `cancelled` counts as completed: the item is closed) and
// its priority. Entries without content or with a status OpenCode does not name are left out.
std::vector<protocol::PlanEntry> plan_entries(const nlohmann::json& todos);

// The body of OpenCode's POST /question/<id>/reply: per question the labels chosen. Ours is one answer per
// question: its one label, or for a multiple-choice one (`multiple[i]`) the labels joined by ", ", as the console
// sends them. A free answer goes as it is (OpenCode's questions take custom answers by default).
nlohmann::json question_reply(const std::vector<std::string>& answers, const std::vector<bool>& multiple);

// The models OpenCode offers, from its GET /config/providers answer: `{providers: [{id, name, models: {<id>:
// {id, name, status}}}]}`, each model named `provider/model` as prompts take it, the providers' order kept and
// their models sorted by id (an object has no order). Deprecated models are left out. `configured` is the
// configuration's `model` (GET /config), OpenCode's default for a prompt that names none: it is marked. (The
// answer's own `default` map is per provider and is not what OpenCode uses when the configuration names one.)
// The commands OpenCode offers, from its GET /command answer: `[{name, description, hints, source, ...}]` (the
// configured commands, the built-in ones such as `init` and `review`, MCP prompts and skills), each with its
// description and its argument hint made of `hints` (`$ARGUMENTS` reads `<arguments>`, `$1` reads `<arg1>`).
std::vector<protocol::AgentCommand> offered_commands(const nlohmann::json& commands_answer);

std::vector<protocol::ModelInfo> offered_models(const nlohmann::json& providers_answer, const std::optional<std::string>& configured);

}  // namespace switchboard::adapters::opencode
