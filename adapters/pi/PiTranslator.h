#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/LineStats.h"
#include "switchboard/adapters/AgentAdapter.h"

namespace switchboard::adapters::pi {

// The title our permission extension (PiExtension.h) gives its dialogs, which tells them from other extensions'.
inline constexpr std::string_view kPermissionDialogTitle = "switchboard:permission";

// The changes a call of Pi's file tools makes (tool.started's diffs): `edit` {path, edits: [{oldText, newText}]}
// — also a single edit object, the edits as a JSON string, or oldText/newText beside the path, which Pi takes
// too — one FileDiff per edit; `write` {path, content}: the whole file. None for other tools or other input.
std::vector<protocol::FileDiff> file_diffs(std::string_view tool, const nlohmann::json& input);

// Turns the events `pi --mode rpc` writes on stdout (everything but the `response` lines, which answer our
// commands and are the adapter's) into normalized events. docs/agents/pi.md has the table of every native event
// and what it becomes, and the list of those dropped.
//
// One translator per Pi process. It remembers what the stream has said so far: whether a prompt of ours is
// running (turn_started() to agent_settled), the assistant message being streamed, the tools started and their
// output so far, the open permission dialogs, and the running prompt's last answer, usage and error. It does no
// I/O: normalized events go to `events`; a dialog it cannot serve (another extension's) is answered through
// `reply`, which the adapter writes to Pi's stdin. Nothing it is fed makes it throw; bad lines are counted,
// logged and skipped.
//
// Re-entrancy: the translator finishes its bookkeeping before each callback, so a listener may call
// take_dialog() or turn_started() from inside one (the engine answers a permission at once when a rule or the
// headless policy decides, and starts the next queued prompt from on_turn_end).
class PiTranslator {
 public:
  using Reply = std::function<void(const nlohmann::json& message)>;
  PiTranslator(AdapterListener& events, Reply reply);

  // One line of Pi's stdout that is not a response.
  void feed_line(std::string_view line);
  // The same line, parsed already.
  void feed(const nlohmann::json& message);

  // A prompt of ours was sent: the events until agent_settled are its turn.
  void turn_started();
  // The prompt was refused (its response said success:false): the turn ends with that error.
  void turn_refused(const std::string& error);
  // The prompt was an extension's command that Pi ran without the model (disposition "handled"): the turn ends
  // now, unless the command started a run, whose agent_settled ends it.
  void turn_handled();
  bool turn_running() const { return m_turn_running; }

  // Forgets the open permission dialog with this id and says whether it was open (each is answered once; a
  // dialog of a turn that has ended is not).
  bool take_dialog(const std::string& id);

  const LineStats& stats() const { return m_lines.stats(); }

 private:
  void on_message_start(const nlohmann::json& message);
  void on_message_update(const nlohmann::json& event);
  void on_message_end(const nlohmann::json& message);
  void on_tool_start(const nlohmann::json& event);
  void on_tool_update(const nlohmann::json& event);
  void on_tool_end(const nlohmann::json& event);
  void on_dialog(const nlohmann::json& event);
  void on_retry_start(const nlohmann::json& event);
  void on_retry_end(const nlohmann::json& event);
  void on_settled(const nlohmann::json& event);
  void end_turn(TurnResult result);
  std::string message_id(protocol::DeltaKind kind) const;

  AdapterListener& m_events;
  Reply m_reply;
  LineLog m_lines{"pi"};

  bool m_turn_running = false;
  std::uint64_t m_messages = 0;        // assistant messages seen in this process: their ids
  std::map<std::string, std::string> m_tool_output;  // running tool call id → its output so far
  std::set<std::string> m_dialogs;                   // open permission dialogs, by id

  // The running prompt.
  std::string m_last_text;
  std::optional<std::string> m_last_error;  // the errorMessage of its last assistant message, if it failed
  protocol::Usage m_usage;
  bool m_has_usage = false;
  bool m_status_raised = false;
  bool m_run_started = false;  // agent_start seen since the prompt was sent
};

// The text of a tool result's content blocks ({"content":[{"type":"text","text":...}]}), joined.
std::string result_text(const nlohmann::json& result);

}  // namespace switchboard::adapters::pi
