#include "codex/CodexHistory.h"

#include <algorithm>
#include <array>
#include <map>
#include <system_error>
#include <utility>
#include <vector>

#include <spdlog/spdlog.h>

#include "codex/CodexPermissions.h"
#include "codex/CodexPlan.h"
#include "common/ApplyPatch.h"
#include "common/HistoryFile.h"
#include "common/NativeJson.h"
#include "switchboard/support/Clock.h"

namespace switchboard::adapters::codex {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// Codex writes session_meta first; a file without one in its first lines is not a rollout we understand.
constexpr std::size_t kHeadLines = 8;
constexpr std::size_t kThreadIdLength = 36;

std::string trimmed(std::string_view text) {
  const auto first = text.find_first_not_of(" \t\r\n");
  if (first == std::string_view::npos) return {};
  const auto last = text.find_last_not_of(" \t\r\n");
  return std::string(text.substr(first, last - first + 1));
}

std::string normalized_directory(std::string_view path) {
  std::string text = fs::path(path).lexically_normal().string();
  while (text.size() > 1 && text.back() == '/') text.pop_back();
  return text;
}

bool same_directory(std::string_view a, std::string_view b) { return normalized_directory(a) == normalized_directory(b); }

// The thread id a rollout's file name carries: rollout-<time>-<id>.jsonl.
std::optional<std::string> thread_id_of_file(const fs::path& file) {
  const std::string name = file.filename().string();
  constexpr std::string_view prefix = "rollout-";
  constexpr std::string_view suffix = ".jsonl";
  if (!name.starts_with(prefix) || !name.ends_with(suffix)) return std::nullopt;
  const std::size_t stem = name.size() - suffix.size();
  if (stem < prefix.size() + kThreadIdLength + 1 || name[stem - kThreadIdLength - 1] != '-') return std::nullopt;
  std::string id = name.substr(stem - kThreadIdLength, kThreadIdLength);
  if (!is_thread_id(id)) return std::nullopt;
  return id;
}

// Calls `visit` with every rollout file under <codex_home>/sessions (YYYY/MM/DD; deeper directories are not
// entered). Directories that cannot be read are passed over.
template <class Visit>
void for_each_rollout(const fs::path& codex_home, Visit visit) {
  const fs::path sessions = codex_home / "sessions";
  std::error_code error;
  fs::recursive_directory_iterator it(sessions, fs::directory_options::skip_permission_denied, error);
  for (const fs::recursive_directory_iterator end; !error && it != end; it.increment(error)) {
    std::error_code kind_error;
    if (it->is_directory(kind_error)) {
      if (it.depth() >= 3) it.disable_recursion_pending();  // sessions/YYYY/MM/DD holds the files
      continue;
    }
    if (!thread_id_of_file(it->path()) || !it->is_regular_file(kind_error)) continue;
    visit(it->path());
  }
  if (error && error != std::errc::no_such_file_or_directory) {
    spdlog::warn("codex history: listing {} stopped early: {}", sessions.string(), error.message());
  }
}

// What a rollout's session_meta says.
struct RolloutHead {
  std::string id;
  std::string cwd;
  std::string timestamp;
  // A fork (thread/fork) names the thread it came from and where: its file holds only what came after, the
  // conversation before is the parent's lines up to that ordinal (measured with 0.171.0).
  std::optional<std::string> forked_from;
  std::optional<std::int64_t> forked_at_ordinal;
};

struct HeadRead {
  bool opened = false;
  std::optional<RolloutHead> head;  // none: no session_meta in the first lines
};

HeadRead read_head(const fs::path& file) {
  HeadRead out;
  JsonlCounts counts;
  out.opened = for_each_json_object(file, counts, [&](const json& line) {
    if (native::string_or_empty(line, "type") == "session_meta") {
      if (const auto* payload = native::object_at(line, "payload")) {
        RolloutHead head;
        head.id = native::string_or_empty(*payload, "id");
        head.cwd = native::string_or_empty(*payload, "cwd");
        head.timestamp = native::string_at(*payload, "timestamp").value_or(native::string_or_empty(line, "timestamp"));
        head.forked_from = native::string_at(*payload, "forked_from_id");
        head.forked_at_ordinal = native::integer_at(*payload, "forked_from_ordinal_exclusive");
        if (!head.id.empty()) out.head = std::move(head);
      }
      return false;
    }
    return counts.lines < kHeadLines;
  });
  return out;
}

// The script of a shell call's argv: ["/bin/bash","-lc","<script>"] is the script, anything else is joined.
std::string script_of(const json& command) {
  if (command.is_string()) return unwrap_shell_command(command.get_ref<const std::string&>());
  if (!command.is_array()) return {};
  if (command.size() == 3 && command[1].is_string() && command[2].is_string() &&
      (command[1] == "-lc" || command[1] == "-c")) {
    return command[2].get<std::string>();
  }
  std::string out;
  for (const auto& part : command) {
    if (!part.is_string()) continue;
    if (!out.empty()) out += ' ';
    out += part.get_ref<const std::string&>();
  }
  return out;
}

std::string resolve_path(const std::string& path, const std::string& cwd) {
  if (path.empty() || cwd.empty() || fs::path(path).is_absolute()) return path;
  return (fs::path(cwd) / path).lexically_normal().string();
}

// The tool input of an apply_patch call, shaped like the live fileChange input ({changes: [{path, kind,
// movePath?, diff}]}), from the patch text the model wrote. The diff of an added file is its content, as live;
// an update's diff is the patch's hunks for it; a deletion has none (the patch does not hold the old text).
json patch_input(std::string_view patch, const std::string& cwd) {
  json changes = json::array();
  for (const auto& file : read_apply_patch(patch)) {
    json change{{"path", resolve_path(file.path, cwd)}};
    switch (file.action) {
      case PatchAction::Add: change["kind"] = "add"; break;
      case PatchAction::Update: change["kind"] = "update"; break;
      case PatchAction::Delete: change["kind"] = "delete"; break;
    }
    if (file.move_to) change["movePath"] = resolve_path(*file.move_to, cwd);
    if (file.action != PatchAction::Delete) change["diff"] = file.body;
    changes.push_back(std::move(change));
  }
  return {{"changes", std::move(changes)}};
}

// Codex heads what the model reads from a command with lines like "Chunk ID: …", "Wall time: …", "Process
// exited with code 0", "Original token count: …" and then "Output:"; the user saw only what follows.
constexpr std::array kOutputHeaders{std::string_view("Chunk ID: "),      std::string_view("Wall time: "),
                                    std::string_view("Process exited with code "), std::string_view("Exit code: "),
                                    std::string_view("Process running with session ID "),
                                    std::string_view("Original token count: "), std::string_view("Total output lines: ")};

struct ShellOutput {
  std::string text;
  std::optional<std::int64_t> exit_code;
};

ShellOutput without_header(std::string_view text) {
  ShellOutput out;
  std::size_t pos = 0;
  while (pos < text.size()) {
    auto eol = text.find('\n', pos);
    if (eol == std::string_view::npos) eol = text.size();
    const std::string_view line = text.substr(pos, eol - pos);
    if (line == "Output:") {
      pos = std::min(eol + 1, text.size());
      break;
    }
    const auto* header = std::find_if(kOutputHeaders.begin(), kOutputHeaders.end(), [&](std::string_view h) { return line.starts_with(h); });
    if (header == kOutputHeaders.end()) break;
    if (*header == "Process exited with code " || *header == "Exit code: ") {
      const auto number = native::parse_line(line.substr(header->size()));
      if (number.is_number_integer()) out.exit_code = number.get<std::int64_t>();
    }
    pos = std::min(eol + 1, text.size());
  }
  out.text = std::string(text.substr(pos));
  return out;
}

// The text of a tool output item's `output`: a string, content items (text joined, images named), or an object
// with `content` and `success`.
struct CallOutput {
  std::string text;
  std::optional<bool> success;
};

std::string content_text(const json& content) {
  if (content.is_string()) return content.get<std::string>();
  std::string out;
  if (!content.is_array()) return out;
  for (const auto& block : content) {
    const std::string type = native::string_or_empty(block, "type");
    const std::string piece = type.ends_with("image") ? std::string("[image]") : native::string_or_empty(block, "text");
    if (piece.empty()) continue;
    if (!out.empty()) out += "\n";
    out += piece;
  }
  return out;
}

// What the user typed, from a UserMessage item: its text blocks (attached images are listed beside them).
std::string typed_text(const json& item) {
  std::string out;
  const auto* content = native::array_at(item, "content");
  if (content == nullptr) return out;
  for (const auto& block : *content) {
    if (native::string_or_empty(block, "type") != "text") continue;
    if (!out.empty()) out += "\n";
    out += native::string_or_empty(block, "text");
  }
  return out;
}

CallOutput output_of(const json& item) {
  CallOutput out;
  const auto* output = native::member(item, "output");
  if (output == nullptr) return out;
  if (output->is_object()) {
    if (const auto* content = native::member(*output, "content")) out.text = content_text(*content);
    if (const auto* success = native::member(*output, "success"); success != nullptr && success->is_boolean()) {
      out.success = success->get<bool>();
    }
    return out;
  }
  out.text = content_text(*output);
  return out;
}

enum class Seen { Used, Ignored, Malformed };

// Replays a rollout into a HistorySink, one parsed line at a time.
//
// A rollout holds the model's transcript (response_item: the exact items replayed to the model on resume) and
// Codex's events (event_msg: turn boundaries, token counts, and in 0.171 each completed item again). Messages,
// reasoning and tool calls come from the response items; turns, usage, prompts and the clean outputs of
// commands and patches from the events. A user response item may be Codex's own context (<environment_context>,
// <turn_aborted>, …): the UserMessage event that follows a real prompt says which it was, and carries the
// prompt without Codex's image wrappers; rollouts without such events fall back to "text starting with '<' is
// context".
class RolloutReplay {
 public:
  explicit RolloutReplay(HistorySink& sink) : m_sink(sink) {}

  Seen line(const json& line) {
    const auto type = native::string_at(line, "type");
    const auto* payload = native::object_at(line, "payload");
    if (!type || payload == nullptr) return Seen::Malformed;
    const std::string timestamp = native::string_or_empty(line, "timestamp");
    if (*type == "session_meta") return session_meta(*payload);
    if (*type == "response_item") return response_item(*payload, timestamp);
    if (*type == "event_msg") return event(*payload, timestamp);
    if (*type == "turn_context") {
      if (auto cwd = native::string_at(*payload, "cwd"); cwd && !cwd->empty()) m_cwd = *cwd;
    }
    return Seen::Ignored;  // turn_context, world_state, token_usage_record, compacted, and later versions' types
  }

  // A fork's conversation is replayed from its parent's file first: the thread reported is the fork, whatever
  // the parent's session_meta says.
  void adopt(const std::string& id, const std::string& cwd) {
    m_session_reported = true;
    m_cwd = cwd;
    m_sink.on_provider_session(ProviderSession{id});
  }

  // The end of the file: a prompt still waiting is reported; a turn without task events is over, while one
  // Codex opened and never closed stays open (it is running, or its process died: nothing says how it ended).
  void finish() {
    flush_prompt();
    close_implicit_turn();
  }

 private:
  struct PendingPrompt {
    std::string id;
    std::string text;
    std::string timestamp;
    bool context = false;
  };

  struct OpenCall {
    std::string tool;
    json item;  // Codex's item_completed for the call, when it came before the output
  };

  struct Turn {
    bool open = false;
    bool explicit_turn = false;  // opened by task_started; closed by task_complete / turn_aborted
    std::string id;              // Codex's turn id
    bool prompted = false;
    bool activity = false;
    std::string last_text;
    std::optional<protocol::Usage> usage;
    std::optional<std::string> error;
    std::map<std::string, OpenCall> calls;
  };

  Seen session_meta(const json& payload) {
    if (m_session_reported) return Seen::Ignored;  // a fork's copy of its parent's header
    const auto id = native::string_at(payload, "id");
    if (!id || id->empty()) return Seen::Malformed;
    m_session_reported = true;
    if (auto cwd = native::string_at(payload, "cwd"); cwd && !cwd->empty()) m_cwd = *cwd;
    m_sink.on_provider_session(ProviderSession{*id});
    return Seen::Used;
  }

  Seen response_item(const json& item, const std::string& timestamp) {
    const std::string kind = native::string_or_empty(item, "type");
    if (kind == "message") {
      const std::string role = native::string_or_empty(item, "role");
      if (role == "user") return user_item(item, timestamp);
      if (role == "assistant") return assistant_message(item);
      return Seen::Ignored;  // developer and system messages: Codex's instructions
    }
    if (kind == "reasoning") return reasoning(item);
    if (kind == "function_call" || kind == "custom_tool_call" || kind == "local_shell_call") return tool_call(item, kind);
    if (kind == "function_call_output" || kind == "custom_tool_call_output") return tool_output(item);
    if (kind == "web_search_call") return web_search(item);
    return Seen::Ignored;
  }

  Seen event(const json& payload, const std::string& timestamp) {
    const std::string kind = native::string_or_empty(payload, "type");
    if (kind == "task_started" || kind == "turn_started") {
      flush_prompt();
      close_implicit_turn();
      // An explicit turn still open never finished (its process died); the new one starts without closing it.
      m_turn = Turn{};
      m_turn.open = true;
      m_turn.explicit_turn = true;
      m_turn.id = native::string_or_empty(payload, "turn_id");
      return Seen::Used;
    }
    if (kind == "task_complete" || kind == "turn_complete") return turn_complete(payload);
    if (kind == "turn_aborted") {
      flush_prompt();
      if (!m_turn.open) return Seen::Ignored;
      close_turn(TurnResult{protocol::StopReason::Cancelled, {}, std::nullopt, std::nullopt});
      return Seen::Used;
    }
    if (kind == "item_completed") {
      const auto* item = native::object_at(payload, "item");
      if (item == nullptr) return Seen::Malformed;
      const std::string type = native::string_or_empty(*item, "type");
      if (type == "UserMessage") {
        return user_event(typed_text(*item), native::string_or_empty(*item, "id"), timestamp);
      }
      if (type == "CommandExecution" || type == "FileChange") {
        const auto call = m_turn.calls.find(native::string_or_empty(*item, "id"));
        if (call == m_turn.calls.end()) return Seen::Ignored;  // e.g. an interrupted command's, after its turn
        call->second.item = *item;
        return Seen::Used;
      }
      return Seen::Ignored;  // agent messages and reasoning again: the response items carry them
    }
    if (kind == "user_message") return user_event(native::string_or_empty(payload, "message"), {}, timestamp);
    if (kind == "token_count") {
      const auto* info = native::object_at(payload, "info");
      const auto* last = info != nullptr ? native::object_at(*info, "last_token_usage") : nullptr;
      if (last == nullptr || !m_turn.open) return Seen::Ignored;
      // One per model request: `last` is that request's.
      add_usage(m_turn.usage, request_usage(native::integer_at(*last, "input_tokens").value_or(0),
                                            native::integer_at(*last, "cached_input_tokens").value_or(0),
                                            native::integer_at(*last, "output_tokens").value_or(0)));
      return Seen::Used;
    }
    if (kind == "error") {
      if (!m_turn.open) return Seen::Ignored;
      m_turn.error = error_text(payload);
      return Seen::Used;
    }
    return Seen::Ignored;  // thread_settings_applied, duplicates of the items, and later versions' events
  }

  Seen turn_complete(const json& payload) {
    flush_prompt();
    if (!m_turn.open) return Seen::Ignored;
    TurnResult result;
    if (const auto* error = native::object_at(payload, "error")) {
      result.stop_reason = protocol::StopReason::Error;
      result.error = error_text(*error);
    } else if (m_turn.error && m_turn.last_text.empty()) {
      result.stop_reason = protocol::StopReason::Error;
      result.error = m_turn.error;
    } else {
      result.text = native::string_at(payload, "last_agent_message").value_or(std::string());
    }
    close_turn(std::move(result));
    return Seen::Used;
  }

  Seen user_item(const json& item, const std::string& timestamp) {
    PendingPrompt prompt;
    prompt.id = native::string_or_empty(item, "id");
    prompt.timestamp = timestamp;
    const auto* content = native::member(item, "content");
    if (content != nullptr && content->is_string()) {
      prompt.text = content->get<std::string>();
    } else if (content != nullptr && content->is_array()) {
      bool first = true;
      bool in_image = false;
      for (const auto& block : *content) {
        if (native::string_or_empty(block, "type") != "input_text") continue;
        const std::string text = native::string_or_empty(block, "text");
        // Codex wraps an attached image in <image …> … </image> text blocks; they are not what the user typed.
        if (text.starts_with("<image")) {
          in_image = true;
          continue;
        }
        if (in_image) {
          in_image = text != "</image>";
          continue;
        }
        if (first) prompt.context = trimmed(text).starts_with('<');
        first = false;
        if (!prompt.text.empty()) prompt.text += "\n";
        prompt.text += text;
      }
    }
    flush_prompt();  // an earlier user message whose event never came
    m_pending = std::move(prompt);
    return Seen::Used;
  }

  // A prompt as Codex's event reports it: this is what the user typed, and it replaces the response item just
  // before it (whatever that looked like).
  Seen user_event(std::string text, std::string id, const std::string& timestamp) {
    const auto pending = std::exchange(m_pending, std::nullopt);
    if (id.empty() && pending) id = pending->id;
    report_prompt(std::move(text), std::move(id), timestamp);
    return Seen::Used;
  }

  void flush_prompt() {
    auto pending = std::exchange(m_pending, std::nullopt);
    if (pending && !pending->context) report_prompt(std::move(pending->text), std::move(pending->id), pending->timestamp);
  }

  void report_prompt(std::string text, std::string message_id, const std::string& timestamp) {
    // Without task events (another version) a prompt ends the turn before it, as it does for Claude.
    close_implicit_turn();
    if (!m_turn.open) m_turn.open = true;
    // The turn's first prompt is named by Codex's turn id, stable across reads; a second one in the same turn
    // (turn/steer) by its message id.
    std::string id = !m_turn.prompted && !m_turn.id.empty() ? m_turn.id : std::move(message_id);
    m_turn.prompted = true;
    m_sink.on_user_prompt(HistorySink::UserPrompt{std::move(id), std::move(text), timestamp});
  }

  // Before the assistant's activity: the prompt is out and a turn is open.
  void begin_activity() {
    flush_prompt();
    m_turn.open = true;
    m_turn.activity = true;
  }

  Seen assistant_message(const json& item) {
    const std::string id = native::string_or_empty(item, "id");
    const auto* content = native::member(item, "content");
    if (id.empty() || content == nullptr) return Seen::Malformed;
    std::string text;
    if (content->is_array()) {
      for (const auto& block : *content) {
        const std::string type = native::string_or_empty(block, "type");
        if (type != "output_text" && type != "text") continue;
        text += native::string_or_empty(block, "text");
      }
    } else if (content->is_string()) {
      text = content->get<std::string>();
    }
    begin_activity();
    m_turn.last_text = text;
    m_sink.on_message(MessageCompleted{id, protocol::DeltaKind::Text, std::move(text), std::nullopt});
    return Seen::Used;
  }

  Seen reasoning(const json& item) {
    const std::string id = native::string_or_empty(item, "id");
    if (id.empty()) return Seen::Malformed;
    const auto joined = [](const json* blocks, std::string_view separator) {
      std::string out;
      if (blocks == nullptr || !blocks->is_array()) return out;
      for (const auto& block : *blocks) {
        const std::string text = native::string_or_empty(block, "text");
        if (text.empty()) continue;
        if (!out.empty()) out += separator;
        out += text;
      }
      return out;
    };
    std::string summary = joined(native::member(item, "summary"), "\n\n");
    std::string content = joined(native::member(item, "content"), "\n\n");
    if (summary.empty() && content.empty()) return Seen::Ignored;  // encrypted only: nothing to show
    begin_activity();
    // As live: the summary under the item's id, raw reasoning (where a model exposes it) under id:content.
    if (!summary.empty()) m_sink.on_message(MessageCompleted{id, protocol::DeltaKind::Thinking, std::move(summary), std::nullopt});
    if (!content.empty()) m_sink.on_message(MessageCompleted{id + ":content", protocol::DeltaKind::Thinking, std::move(content), std::nullopt});
    return Seen::Used;
  }

  // Our tool name and input for a call, shaped like the live items' where Codex has one: shell commands as
  // `shell` {command, cwd}, patches as `apply_patch` {changes}; other tools by their own name with their
  // arguments.
  std::pair<std::string, json> describe_call(const json& item, const std::string& kind) const {
    const auto shell = [&](std::string command, std::optional<std::string> cwd) {
      json input{{"command", std::move(command)}};
      if (!cwd || cwd->empty()) cwd = m_cwd;
      if (!cwd->empty()) input["cwd"] = *cwd;
      return std::pair{std::string(kShellTool), std::move(input)};
    };
    if (kind == "local_shell_call") {
      const auto* action = native::object_at(item, "action");
      if (action == nullptr) return shell({}, std::nullopt);
      const auto* command = native::member(*action, "command");
      return shell(command != nullptr ? script_of(*command) : std::string(), native::string_at(*action, "working_directory"));
    }
    const std::string name = native::string_or_empty(item, "name");
    if (kind == "custom_tool_call") {
      const std::string input = native::string_or_empty(item, "input");
      if (name == kPatchTool) return {name, patch_input(input, m_cwd)};
      return {name, json{{"input", input}}};
    }
    const auto* raw = native::member(item, "arguments");
    json arguments = raw != nullptr && raw->is_string() ? native::parse_line(raw->get_ref<const std::string&>()) : json();
    if (!arguments.is_object()) {
      if (raw == nullptr || raw->is_null()) return {name, json::object()};
      return {name, raw->is_object() ? *raw : json{{"arguments", *raw}}};
    }
    if (name == "exec_command") return shell(native::string_or_empty(arguments, "cmd"), native::string_at(arguments, "workdir"));
    if (name == "shell" || name == "shell_command" || name == "container.exec") {
      const auto* command = native::member(arguments, "command");
      return shell(command != nullptr ? script_of(*command) : std::string(), native::string_at(arguments, "workdir"));
    }
    if (name == kPatchTool) return {name, patch_input(native::string_or_empty(arguments, "input"), m_cwd)};
    return {name, std::move(arguments)};
  }

  Seen tool_call(const json& item, const std::string& kind) {
    std::string call_id = native::string_or_empty(item, "call_id");
    if (call_id.empty()) call_id = native::string_or_empty(item, "id");
    if (call_id.empty()) return Seen::Malformed;
    if (kind == "function_call" && native::string_or_empty(item, "name") == "update_plan") return plan_call(item);
    begin_activity();
    auto [tool, input] = describe_call(item, kind);
    m_turn.calls[call_id] = OpenCall{tool, json()};
    auto diffs = tool == kPatchTool ? file_change_diffs(input) : std::vector<protocol::FileDiff>{};
    m_sink.on_tool_started(ToolStarted{call_id, std::move(tool), std::move(input), std::nullopt, std::move(diffs)});
    return Seen::Used;
  }

  // Live, Codex reports an update_plan call only as turn/plan/updated (no tool item), so the replay reports the
  // whole plan the call set and no tool call; its output ("Plan updated") then has no call and is ignored.
  Seen plan_call(const json& item) {
    const auto* raw = native::member(item, "arguments");
    const json arguments = raw != nullptr && raw->is_string() ? native::parse_line(raw->get_ref<const std::string&>())
                                                              : (raw != nullptr ? *raw : json());
    auto update = arguments.is_object() ? plan_update(arguments) : std::nullopt;
    if (!update) return Seen::Malformed;
    begin_activity();
    m_sink.on_plan(std::move(*update));
    return Seen::Used;
  }

  Seen tool_output(const json& item) {
    const std::string call_id = native::string_or_empty(item, "call_id");
    if (call_id.empty()) return Seen::Malformed;
    const auto call = m_turn.calls.find(call_id);
    // An output without its call in this turn (a rollout that starts mid-turn): a completion without a start
    // would break the rule that every tool.completed has its tool.started.
    if (call == m_turn.calls.end()) return Seen::Ignored;
    begin_activity();
    auto [output, is_error] = completion(call->second, item);
    m_turn.calls.erase(call);
    m_sink.on_tool_completed(ToolCompleted{call_id, std::move(output), is_error});
    return Seen::Used;
  }

  // What the tool call's completion reports: the clean output of Codex's item when it came (as live: a
  // command's aggregated output, a patch's "<kind> <path>" lines), else the output the model read, without
  // Codex's header.
  static std::pair<std::string, bool> completion(const OpenCall& call, const json& output_item) {
    const std::string type = native::string_or_empty(call.item, "type");
    const bool completed = native::string_or_empty(call.item, "status") == "completed";
    if (type == "CommandExecution") {
      const auto exit_code = native::integer_at(call.item, "exit_code");
      return {native::string_or_empty(call.item, "aggregated_output"), !completed || (exit_code && *exit_code != 0)};
    }
    if (type == "FileChange") {
      std::string out;
      if (const auto* changes = native::object_at(call.item, "changes")) {
        for (const auto& [path, change] : changes->items()) {
          if (!out.empty()) out += "\n";
          out += native::string_at(change, "type").value_or("update") + " " + path;
        }
      }
      return {out, !completed};
    }
    auto output = output_of(output_item);
    if (call.tool != kShellTool && call.tool != kPatchTool) return {output.text, output.success == false};
    auto shell = without_header(output.text);
    if (shell.text.find("rejected by user") != std::string::npos) return {"declined by the user", true};
    const bool failed = shell.exit_code ? *shell.exit_code != 0
                                        : output.success == false || shell.text == "aborted by user" ||
                                              shell.text.starts_with("exec_command failed");
    return {std::move(shell.text), failed};
  }

  Seen web_search(const json& item) {
    const std::string id = native::string_or_empty(item, "id");
    if (id.empty()) return Seen::Malformed;
    json input = json::object();
    if (const auto* action = native::object_at(item, "action")) {
      if (auto query = native::string_at(*action, "query")) input["query"] = *query;
    }
    begin_activity();
    m_sink.on_tool_started(ToolStarted{id, std::string(kWebSearchTool), std::move(input), std::nullopt});
    m_sink.on_tool_completed(ToolCompleted{id, {}, native::string_or_empty(item, "status") == "failed"});
    return Seen::Used;
  }

  // A turn without task events (another version) ends where the next begins, once it has a prompt or activity.
  void close_implicit_turn() {
    if (m_turn.open && !m_turn.explicit_turn && (m_turn.prompted || m_turn.activity)) close_turn(TurnResult{});
  }

  void close_turn(TurnResult result) {
    if (result.text.empty() && result.stop_reason != protocol::StopReason::Error) result.text = m_turn.last_text;
    result.usage = m_turn.usage;
    m_sink.on_turn_end(std::move(result));
    m_turn = Turn{};
  }

  HistorySink& m_sink;
  bool m_session_reported = false;
  std::string m_cwd;  // the thread's working directory, for shell inputs and relative patch paths
  std::optional<PendingPrompt> m_pending;
  Turn m_turn;
};

// Counts what a listing shows of a rollout.
class SummarySink final : public HistorySink {
 public:
  std::size_t prompts = 0;
  std::string first_prompt;
  bool activity = false;

  void on_user_prompt(UserPrompt prompt) override {
    if (prompts++ == 0) first_prompt = std::move(prompt.text);
  }
  void on_provider_session(ProviderSession) override {}
  void on_message(MessageCompleted) override { activity = true; }
  void on_tool_started(ToolStarted) override { activity = true; }
  void on_tool_completed(ToolCompleted) override {}
  void on_turn_end(TurnResult) override {}
};

bool looks_like_object(std::string_view text) {
  const auto first = text.find_first_not_of(" \t");
  const auto last = text.find_last_not_of(" \t");
  return first != std::string_view::npos && text[first] == '{' && text[last] == '}';
}

bool mentions_user(std::string_view text) {
  for (std::string_view token : {"\"role\":\"user\"", "\"role\": \"user\"", "UserMessage", "user_message"}) {
    if (text.find(token) != std::string_view::npos) return true;
  }
  return false;
}

constexpr std::size_t kMaxForkDepth = 16;

// One file of a thread's conversation, with the ordinal its part ends before (for a fork's ancestors).
struct Part {
  fs::path file;
  std::optional<std::int64_t> end_ordinal;
};

}  // namespace

std::optional<fs::path> find_rollout(const fs::path& codex_home, std::string_view id, const std::optional<std::string_view>& cwd) {
  if (!is_thread_id(id)) return std::nullopt;
  std::vector<fs::path> candidates;
  for_each_rollout(codex_home, [&](const fs::path& file) {
    if (thread_id_of_file(file) == id) candidates.push_back(file);
  });
  // Sorted, so that the answer does not depend on the order the directory lists files in.
  std::sort(candidates.begin(), candidates.end());
  for (const auto& file : candidates) {
    const auto head = read_head(file);
    if (head.head && head.head->id == id && (!cwd || same_directory(head.head->cwd, *cwd))) return file;
  }
  return std::nullopt;
}

namespace {

// The files a thread's conversation is read from, oldest first, ending with `file`: for a fork, its parent's
// rollout up to the fork (and so on for a fork of a fork). A parent that cannot be found is left out.
std::vector<Part> thread_parts(const fs::path& file, const std::optional<RolloutHead>& head, const std::optional<fs::path>& codex_home) {
  std::vector<Part> parts{Part{file, std::nullopt}};
  if (!codex_home || !head) return parts;
  std::vector<std::string> seen{head->id};
  auto from = head->forked_from;
  auto at = head->forked_at_ordinal;
  while (from && is_thread_id(*from) && parts.size() <= kMaxForkDepth &&
         std::find(seen.begin(), seen.end(), *from) == seen.end()) {
    const auto parent = find_rollout(*codex_home, *from, std::nullopt);
    if (!parent) {
      spdlog::info("codex history: {} was forked from {}, whose rollout is not in {}", file.string(), *from, codex_home->string());
      break;
    }
    parts.insert(parts.begin(), Part{*parent, at});
    seen.push_back(*from);
    const auto parent_head = read_head(*parent);
    if (!parent_head.head) break;
    from = parent_head.head->forked_from;
    at = parent_head.head->forked_at_ordinal;
  }
  return parts;
}

// How a part is read: every line (history.read), or for a listing (`listing` set) only the lines that can be
// prompts once the first prompt is out (a user message's role, a UserMessage item, a user_message event; a stray match is
// parsed for nothing). Skipping the rest cannot change the count or the title: a prompt held for its event is
// reported at the next user line or the end instead of at the next activity. The skipped lines are checked only
// for the shape of an object, so a damaged line among them goes uncounted in a listing.
bool feed(const Part& part, RolloutReplay& replay, const SummarySink* listing, HistoryFileStats& stats) {
  JsonlReader reader(part.file);
  if (!reader.opened()) return false;
  std::string text;
  bool too_long = false;
  while (reader.next(text, too_long)) {
    if (text.empty() && !too_long) continue;
    if (too_long || (listing != nullptr && !looks_like_object(text))) {
      ++stats.lines;
      ++stats.malformed;
      continue;
    }
    if (listing != nullptr && listing->prompts > 0 && !mentions_user(text)) {
      ++stats.lines;
      continue;
    }
    const auto line = native::parse_line(text);
    if (line.is_discarded() || !line.is_object()) {
      ++stats.lines;
      ++stats.malformed;
      continue;
    }
    if (part.end_ordinal) {
      // Codex numbers a rollout's lines in order; the fork was made before this one.
      if (const auto ordinal = native::integer_at(line, "ordinal"); ordinal && *ordinal >= *part.end_ordinal) break;
    }
    ++stats.lines;
    try {
      switch (replay.line(line)) {
        case Seen::Used: break;
        case Seen::Ignored: ++stats.ignored; break;
        case Seen::Malformed: ++stats.malformed; break;
      }
    } catch (const json::exception& error) {
      // The module edge: the replay reads through non-throwing accessors, but one odd line must not end it.
      ++stats.malformed;
      spdlog::warn("codex history: skipped a line of {}: {}", part.file.string(), error.what());
    }
  }
  return true;
}

HistoryFileStats replay_thread(const fs::path& file, HistorySink& sink, const std::optional<fs::path>& codex_home,
                               const SummarySink* listing) {
  HistoryFileStats stats;
  RolloutReplay replay(sink);
  const auto head = codex_home ? read_head(file).head : std::nullopt;
  const auto parts = thread_parts(file, head, codex_home);
  if (parts.size() > 1) replay.adopt(head->id, head->cwd);
  for (const auto& part : parts) {
    const bool opened = feed(part, replay, listing, stats);
    if (&part == &parts.back()) stats.opened = opened;
  }
  if (stats.opened) replay.finish();
  return stats;
}

}  // namespace

std::optional<fs::path> history_codex_home(const std::optional<fs::path>& private_home, const std::optional<std::string>& codex_home_env,
                                           const std::optional<std::string>& home_env) {
  if (private_home && !private_home->empty()) return *private_home;
  if (codex_home_env && !codex_home_env->empty()) return fs::path(*codex_home_env);
  if (home_env && !home_env->empty()) return fs::path(*home_env) / ".codex";
  return std::nullopt;
}

bool is_thread_id(std::string_view id) {
  if (id.size() != kThreadIdLength) return false;
  for (std::size_t i = 0; i < id.size(); ++i) {
    const char c = id[i];
    if (i == 8 || i == 13 || i == 18 || i == 23) {
      if (c != '-') return false;
      continue;
    }
    const bool hex = (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
    if (!hex) return false;
  }
  return true;
}

HistoryFileStats read_history(const fs::path& file, HistorySink& sink, const std::optional<fs::path>& codex_home) {
  return replay_thread(file, sink, codex_home, /*listing=*/nullptr);
}

HistoryList list_history(const fs::path& codex_home, std::string_view cwd) {
  HistoryList list;
  for_each_rollout(codex_home, [&](const fs::path& file) {
    const auto head = read_head(file);
    if (!head.opened || !head.head || head.head->id != thread_id_of_file(file)) {
      ++list.skipped_files;
      return;
    }
    if (!same_directory(head.head->cwd, cwd)) return;  // another directory's thread
    SummarySink summary;
    const auto stats = replay_thread(file, summary, codex_home, &summary);
    list.skipped_lines += stats.malformed;
    if (!stats.opened || (summary.prompts == 0 && !summary.activity)) {
      ++list.skipped_files;
      return;
    }
    HistoryEntry entry;
    entry.provider_session_id = head.head->id;
    entry.title = title_from_prompt(summary.first_prompt);
    entry.cwd = head.head->cwd;
    entry.created_at = parse_iso8601_millis(head.head->timestamp);
    entry.updated_at = modified_at_ms(file);
    entry.prompts = static_cast<std::int64_t>(summary.prompts);
    entry.path = file.string();
    list.sessions.push_back(std::move(entry));
  });
  sort_newest_first(list);
  return list;
}

}  // namespace switchboard::adapters::codex
