#include "opencode/OpenCodeTranslator.h"

#include <algorithm>

#include <array>

#include "common/FileDiffs.h"
#include "common/NativeJson.h"
#include "common/PermissionText.h"

namespace switchboard::adapters::opencode {

using nlohmann::json;
using native::string_or_empty;

namespace {

using namespace std::string_view_literals;

// Known, and turned into nothing on purpose (docs/agents/opencode.md says why each).
constexpr std::array kDroppedEvents = {
    "server.connected"sv, "server.heartbeat"sv, "session.created"sv, "session.updated"sv, "session.diff"sv,
    "permission.replied"sv, "question.replied"sv, "question.rejected"sv, "sync"sv, "plugin.added"sv, "catalog.updated"sv, "reference.updated"sv, "integration.updated"sv,
    "project.updated"sv, "file.edited"sv, "file.watcher.updated"sv, "lsp.updated"sv, "lsp.client.diagnostics"sv,
    "installation.updated"sv, "session.compacted"sv, "message.removed"sv, "message.part.removed"sv,
    "command.executed"sv, "vcs.branch.updated"sv};
constexpr std::array kDroppedParts = {"step-start"sv, "snapshot"sv, "patch"sv, "agent"sv, "retry"sv,
                                      "compaction"sv, "subtask"sv, "file"sv};

bool has_end(const json& part) {
  const auto* time = native::object_at(part, "time");
  return time != nullptr && time->contains("end");
}

// The session an event belongs to: properties.sessionID, or the part's own for message.part.updated.
std::string session_of(const json& payload) {
  const auto* properties = native::object_at(payload, "properties");
  if (properties == nullptr) return {};
  std::string session = string_or_empty(*properties, "sessionID");
  if (session.empty()) {
    if (const auto* part = native::object_at(*properties, "part")) session = string_or_empty(*part, "sessionID");
  }
  return session;
}

bool is_retry(const json& status_properties) {
  const auto* status = native::object_at(status_properties, "status");
  return status != nullptr && string_or_empty(*status, "type") == "retry";
}

// A child's events held until its task part names the call: more than this and the rest are dropped (a child we
// will never place must not grow without bound).
constexpr std::size_t kUnplacedLimit = 512;

// The file changes of a call of OpenCode's file tools: `edit` (oldString → newString in filePath), `write` (the
// whole content of filePath) and `apply_patch` (a patch envelope in patchText, the tool OpenCode gives GPT models).
std::vector<protocol::FileDiff> edit_diffs(const std::string& tool, const json& input) {
  std::vector<protocol::FileDiff> diffs;
  if (tool == "apply_patch") {
    const auto patch = native::string_at(input, "patchText");
    return patch ? patch_diffs(*patch) : diffs;
  }
  const auto path = native::string_at(input, "filePath");
  if (!path || path->empty()) return diffs;
  if (tool == "edit") {
    const auto old_text = native::string_at(input, "oldString");
    const auto new_text = native::string_at(input, "newString");
    if (old_text && new_text) diffs.push_back(replacement(*path, *old_text, *new_text));
  } else if (tool == "write") {
    if (const auto content = native::string_at(input, "content")) diffs.push_back(whole_file(*path, *content));
  }
  return diffs;
}

}  // namespace

void OpenCodeTranslator::turn_started() {
  m_turn_running = true;
  m_busy = false;
  m_aborted = false;
  m_error.reset();
  m_last_text.clear();
  m_usage = protocol::Usage{};
  m_has_usage = false;
  m_turn_ref.reset();
}

void OpenCodeTranslator::seed_totals(std::int64_t input, std::int64_t output, std::int64_t cache_read, double cost) {
  m_input_total = input;
  m_output_total = output;
  m_cache_read_total = cache_read;
  m_cost_total = cost;
}

void OpenCodeTranslator::feed(const json& payload) {
  m_lines.line();
  const std::string session = m_session_id.empty() ? std::string() : session_of(payload);
  if (session.empty() || session == m_session_id) return feed_event(payload, std::nullopt);
  const auto call = m_child_calls.find(session);
  if (call != m_child_calls.end()) return feed_event(payload, call->second);
  auto& waiting = m_unplaced[session];
  if (waiting.size() >= kUnplacedLimit) return m_lines.dropped();
  waiting.push_back(payload);
}

void OpenCodeTranslator::set_compacting(bool compacting) {
  if (compacting) {
    m_compacting = true;
    m_summary_idle_seen = false;
    m_draining_summary = false;
    return;
  }
  m_compacting = false;
  m_draining_summary = !m_summary_idle_seen;
}

bool OpenCodeTranslator::is_summary_event(const std::string& type, const json& properties) {
  if (type == "message.updated") {
    const auto* info = native::object_at(properties, "info");
    if (info == nullptr || string_or_empty(*info, "role") != "assistant") return false;
    const auto summary = info->find("summary");
    if (summary == info->end() || !summary->is_boolean() || !summary->get<bool>()) return false;
    m_summary_messages.insert(string_or_empty(*info, "id"));
    return true;
  }
  if (type == "message.part.delta") return m_summary_messages.count(string_or_empty(properties, "messageID")) != 0;
  if (type == "message.part.updated") {
    const auto* part = native::object_at(properties, "part");
    return part != nullptr && m_summary_messages.count(string_or_empty(*part, "messageID")) != 0;
  }
  return false;
}

void OpenCodeTranslator::feed_event(const json& payload, const std::optional<std::string>& parent) {
  const std::string type = string_or_empty(payload, "type");
  if (one_of(kDroppedEvents, type)) return m_lines.dropped();  // `sync` records have no properties
  const auto* properties = native::object_at(payload, "properties");
  if (type.empty() || properties == nullptr) return m_lines.malformed("an event without type or properties", payload);
  // A summary we asked for: its message, busy and idle belong to no turn (the request's answer ends it, and
  // what of it the stream still carries after that answer is drained).
  if ((m_compacting && !m_turn_running) || m_draining_summary) {
    if (type == "session.idle") {
      m_summary_idle_seen = true;
      m_draining_summary = false;
    }
    return m_lines.dropped();
  }
  if (is_summary_event(type, *properties)) return m_lines.dropped();
  if (type == "todo.updated") {
    if (parent) return m_lines.dropped();  // a sub-agent's own list is its business, not the session's plan
    return on_todos(*properties);
  }

  if (type == "message.part.delta") {
    if (string_or_empty(*properties, "field") != "text") return m_lines.dropped();
    const std::string part = string_or_empty(*properties, "partID");
    if (m_user_messages.count(string_or_empty(*properties, "messageID")) != 0) return m_lines.dropped();
    const auto kind = m_part_kinds.find(part);
    return m_events.on_delta(TextDelta{part, kind == m_part_kinds.end() ? protocol::DeltaKind::Text : kind->second,
                                       string_or_empty(*properties, "delta"), parent});
  }
  if (type == "message.part.updated") {
    const auto* part = native::object_at(*properties, "part");
    if (part == nullptr) return m_lines.malformed("message.part.updated without a part", payload);
    return on_part(*part, parent);
  }
  if (type == "message.updated") {
    const auto* info = native::object_at(*properties, "info");
    if (info != nullptr && string_or_empty(*info, "role") == "user") {
      const std::string id = string_or_empty(*info, "id");
      // Only a message not seen before: OpenCode updates the previous prompt (its summary) after its turn, and
      // that update can come after our next prompt went out.
      const bool fresh = m_user_messages.insert(id).second;
      if (fresh && !parent && m_turn_running && !m_turn_ref && !id.empty()) m_turn_ref = id;
    }
    return m_lines.dropped();
  }
  if (type == "permission.asked") return on_permission(*properties);
  if (type == "question.asked") return on_question(*properties);
  if (parent && (type == "session.idle" || type == "session.error" || (type == "session.status" && !is_retry(*properties)))) {
    // A sub-agent going busy, idle or failing is its task call's business (whose completion says how it went):
    // it does not end our turn. Its retries are shown like ours.
    return m_lines.dropped();
  }
  if (type == "session.status") {
    const auto* status = native::object_at(*properties, "status");
    if (status == nullptr) return m_lines.malformed("session.status without a status", payload);
    return on_status(*status);
  }
  if (type == "session.error") {
    const auto* error = native::object_at(*properties, "error");
    const std::string name = error != nullptr ? string_or_empty(*error, "name") : "";
    if (name == "MessageAbortedError") {
      m_aborted = true;
      return;
    }
    std::string message = error != nullptr && error->contains("data") && (*error)["data"].is_object()
                              ? string_or_empty((*error)["data"], "message")
                              : std::string();
    if (message.empty()) message = name.empty() ? "OpenCode reported an error" : name;
    m_error = message;
    return m_events.on_error(AgentErrorReport{"OpenCode: " + message, true});
  }
  if (type == "session.idle") return end_turn();
  m_lines.unknown(type);
}

void OpenCodeTranslator::on_part(const json& part, const std::optional<std::string>& parent) {
  if (m_user_messages.count(string_or_empty(part, "messageID")) != 0) return m_lines.dropped();
  const std::string type = string_or_empty(part, "type");
  const std::string id = string_or_empty(part, "id");
  if (type == "text" || type == "reasoning") {
    const auto kind = type == "text" ? protocol::DeltaKind::Text : protocol::DeltaKind::Thinking;
    m_part_kinds[id] = kind;
    // A part is reported whole once it has ended (its `time.end`); the updates before carry what the deltas do.
    if (!has_end(part) || !m_completed_parts.insert(id).second) return m_lines.dropped();
    const std::string text = string_or_empty(part, "text");
    if (kind == protocol::DeltaKind::Text && !parent) m_last_text = text;  // a sub-agent's text is not the answer
    if (text.empty()) return m_lines.dropped();
    return m_events.on_message(MessageCompleted{id, kind, text, parent});
  }
  if (type == "tool") return on_tool_part(part, parent);
  if (type == "step-finish") return on_step_finish(part, parent);
  if (one_of(kDroppedParts, type)) return m_lines.dropped();
  m_lines.unknown("part " + type);
}

void OpenCodeTranslator::on_step_finish(const json& part, const std::optional<std::string>& parent) {
  // Each model request of the turn is a step: the turn's usage is their sum (a sub-agent's steps too: they are the
  // user's cost as well).
  const auto* tokens = native::object_at(part, "tokens");
  const std::int64_t input = tokens != nullptr ? native::integer_at(*tokens, "input").value_or(0) : 0;
  const std::int64_t output = tokens != nullptr ? native::integer_at(*tokens, "output").value_or(0) : 0;
  const std::int64_t reasoning = tokens != nullptr ? native::integer_at(*tokens, "reasoning").value_or(0) : 0;
  std::int64_t cache_read = 0;
  std::int64_t cache_write = 0;
  if (const auto* cache = tokens != nullptr ? native::object_at(*tokens, "cache") : nullptr) {
    cache_read = native::integer_at(*cache, "read").value_or(0);
    cache_write = native::integer_at(*cache, "write").value_or(0);
  }
  const double cost = native::number_at(part, "cost").value_or(0);
  if (tokens != nullptr) {
    m_has_usage = true;
    m_usage.input_tokens = m_usage.input_tokens.value_or(0) + input;
    m_usage.output_tokens = m_usage.output_tokens.value_or(0) + output;
    m_usage.cache_read_tokens = m_usage.cache_read_tokens.value_or(0) + cache_read;
  }
  if (native::number_at(part, "cost")) m_usage.cost_usd = m_usage.cost_usd.value_or(0) + cost;
  // The context is the session's own: a sub-agent's requests fill a context of their own.
  if (parent || tokens == nullptr) return;
  m_input_total += input;
  m_output_total += output;
  m_cache_read_total += cache_read;
  m_cost_total += cost;
  // What this request held and wrote: what the next one starts from (OpenCode's own context meter counts the same).
  const auto total = native::integer_at(*tokens, "total");
  protocol::ContextUsage usage;
  usage.used_tokens = total && *total > 0 ? *total : input + output + reasoning + cache_read + cache_write;
  usage.window_tokens = m_window;
  usage.cost_usd = m_cost_total;
  usage.input_tokens = m_input_total;
  usage.output_tokens = m_output_total;
  usage.cache_read_tokens = m_cache_read_total;
  m_events.on_usage(UsageUpdate{usage});
}

void OpenCodeTranslator::on_todos(const json& properties) {
  const auto* todos = native::array_at(properties, "todos");
  if (todos == nullptr) return m_lines.malformed("todo.updated without todos", properties);
  m_events.on_plan(PlanUpdate{plan_entries(*todos)});
}

void OpenCodeTranslator::on_tool_part(const json& part, const std::optional<std::string>& parent) {
  const std::string call = string_or_empty(part, "callID");
  const auto* state = native::object_at(part, "state");
  if (call.empty() || state == nullptr) return m_lines.malformed("a tool part without callID or state", part);
  auto& tool = m_tools[call];
  if (tool.done) return m_lines.dropped();
  const std::string status = string_or_empty(*state, "status");
  if (status == "pending") return m_lines.dropped();  // its input is not known yet
  const std::string name = string_or_empty(part, "tool");
  if (!tool.started) {
    tool.started = true;
    const auto* input = native::object_at(*state, "input");
    m_events.on_tool_started(ToolStarted{call, name, input ? *input : json::object(), parent,
                                         input ? edit_diffs(name, *input) : std::vector<protocol::FileDiff>{}});
  }
  if (name == "task") {
    // The task call names the child session its sub-agent runs in: that session's events nest inside this call.
    const auto* metadata = native::object_at(*state, "metadata");
    const std::string child = metadata != nullptr ? string_or_empty(*metadata, "sessionId") : std::string();
    // A later task call may resume the same child session: its events then belong to that call.
    if (const auto mapped = m_child_calls.find(child); mapped != m_child_calls.end() && mapped->second != call) mapped->second = call;
    if (!child.empty() && m_child_calls.emplace(child, call).second) {
      const auto waiting = m_unplaced.find(child);
      if (waiting != m_unplaced.end()) {
        auto events = std::move(waiting->second);
        m_unplaced.erase(waiting);
        for (const auto& event : events) feed_event(event, call);
      }
    }
  }
  if (status == "running") {
    // The output so far, whole, in each update: what is new is reported.
    const auto* metadata = native::object_at(*state, "metadata");
    const std::string output = metadata != nullptr ? string_or_empty(*metadata, "output") : "";
    if (output.size() > tool.output_sent) {
      m_events.on_tool_output(ToolOutput{call, output.substr(tool.output_sent)});
      tool.output_sent = output.size();
    }
    return;
  }
  if (status == "completed" || status == "error") {
    tool.done = true;
    const bool failed = status == "error";
    if (m_plans_from_todowrite && !failed && !parent && name == "todowrite") {
      const auto* input = native::object_at(*state, "input");
      const auto* todos = input != nullptr ? native::array_at(*input, "todos") : nullptr;
      if (todos != nullptr) m_events.on_plan(PlanUpdate{plan_entries(*todos)});
    }
    return m_events.on_tool_completed(ToolCompleted{call, string_or_empty(*state, failed ? "error" : "output"), failed});
  }
  m_lines.unknown("tool status " + status);
}

void OpenCodeTranslator::on_permission(const json& properties) {
  PermissionAsk ask;
  ask.native_id = string_or_empty(properties, "id");
  ask.tool = string_or_empty(properties, "permission");
  const auto* metadata = native::object_at(properties, "metadata");
  ask.input = metadata != nullptr ? *metadata : json::object();
  std::string patterns;
  if (const auto* list = native::array_at(properties, "patterns")) {
    for (const auto& pattern : *list) {
      if (!pattern.is_string()) continue;
      if (!patterns.empty()) patterns += "; ";
      patterns += pattern.get<std::string>();
    }
  }
  const auto command = metadata != nullptr ? native::string_at(*metadata, "command") : std::nullopt;
  ask.subject = command ? *command : patterns;
  // The patterns are OpenCode's parse of the command (`touch a && echo b` gives "touch a", "echo b"): a user
  // approving a command reads it as it will run.
  if (command) {
    ask.description = run_description(*command, string_or_empty(*metadata, "description"));
  } else {
    ask.description = "OpenCode asks to use " + ask.tool + (patterns.empty() ? std::string() : ": " + patterns);
  }
  // What OpenCode would remember for "always" (e.g. `echo *`): the rule we suggest.
  if (const auto* always = native::array_at(properties, "always"); always != nullptr && always->size() == 1 && (*always)[0].is_string()) {
    ask.suggested_rule = protocol::PermissionRule{ask.tool, (*always)[0].get<std::string>()};
  }
  if (ask.native_id.empty()) return m_lines.malformed("permission.asked without an id", properties);
  m_events.on_permission_request(std::move(ask));
}

void OpenCodeTranslator::on_question(const json& properties) {
  // {"id": "que…", "sessionID", "questions": [{"question", "header", "options": [{"label", "description"}],
  //  "multiple", "custom"}], "tool": {"messageID", "callID"}}: OpenCode's `question` tool, under serve.
  QuestionAsk ask;
  ask.native_id = string_or_empty(properties, "id");
  if (const auto* questions = native::array_at(properties, "questions")) {
    for (const auto& native_question : *questions) {
      if (!native_question.is_object()) continue;
      protocol::Question question;
      question.question = string_or_empty(native_question, "question");
      if (question.question.empty()) continue;
      if (auto header = native::string_at(native_question, "header")) question.header = *header;
      std::vector<std::string> labels;
      if (const auto* options = native::array_at(native_question, "options")) {
        for (const auto& option : *options) {
          if (auto label = native::string_at(option, "label")) labels.push_back(*label);
        }
      }
      if (!labels.empty()) question.options = std::move(labels);
      if (const auto* multiple = native::member(native_question, "multiple"); multiple != nullptr && multiple->is_boolean()) {
        question.multi_select = multiple->get<bool>();
      }
      ask.questions.push_back(std::move(question));
    }
  }
  if (ask.native_id.empty() || ask.questions.empty()) return m_lines.malformed("question.asked without an id or a question", properties);
  m_events.on_question(std::move(ask));
}

void OpenCodeTranslator::on_status(const json& status) {
  const std::string type = string_or_empty(status, "type");
  if (type == "retry") {
    AgentStatus retrying;
    retrying.status = protocol::AgentStatusKind::Retrying;
    if (auto message = native::string_at(status, "message")) retrying.message = *message;
    retrying.attempt = native::integer_at(status, "attempt");
    return m_events.on_status(std::move(retrying));
  }
  if (type == "idle") return end_turn();  // the same end as session.idle, which follows (once is enough)
  if (type == "busy") m_busy = m_turn_running;
  m_lines.dropped();
}

void OpenCodeTranslator::turn_refused(const std::string& why) {
  if (!m_turn_running) return;
  m_error = why;
  m_busy = true;
  end_turn();
}

void OpenCodeTranslator::end_turn() {
  // session.idle comes twice after an abort or a provider error, and also with no turn of ours (a session
  // created or loaded): only the first end of a running turn counts.
  if (!m_turn_running || !m_busy) return m_lines.dropped();
  m_turn_running = false;
  TurnResult result;
  result.stop_reason = m_aborted ? protocol::StopReason::Cancelled : m_error ? protocol::StopReason::Error : protocol::StopReason::EndTurn;
  result.text = m_last_text;
  if (m_error && !m_aborted) result.error = m_error;
  if (m_has_usage || m_usage.cost_usd) result.usage = m_usage;
  result.native_turn_ref = m_turn_ref;
  m_tools.clear();
  m_child_calls.clear();
  m_unplaced.clear();
  m_events.on_turn_end(std::move(result));
}

std::vector<protocol::PlanEntry> plan_entries(const json& todos) {
  std::vector<protocol::PlanEntry> entries;
  if (!todos.is_array()) return entries;
  for (const auto& todo : todos) {
    if (!todo.is_object()) continue;
    protocol::PlanEntry entry;
    entry.content = string_or_empty(todo, "content");
    const std::string status = string_or_empty(todo, "status");
    if (status == "pending") {
      entry.status = protocol::PlanEntryStatus::Pending;
    } else if (status == "in_progress") {
      entry.status = protocol::PlanEntryStatus::InProgress;
    } else if (status == "completed" || status == "cancelled") {
      entry.status = protocol::PlanEntryStatus::Completed;
    } else {
      continue;
    }
    if (entry.content.empty()) continue;
    const std::string priority = string_or_empty(todo, "priority");
    if (priority == "high") entry.priority = protocol::PlanEntryPriority::High;
    if (priority == "medium") entry.priority = protocol::PlanEntryPriority::Medium;
    if (priority == "low") entry.priority = protocol::PlanEntryPriority::Low;
    entries.push_back(std::move(entry));
  }
  return entries;
}

json question_reply(const std::vector<std::string>& answers, const std::vector<bool>& multiple) {
  json replies = json::array();
  for (std::size_t i = 0; i < answers.size(); ++i) {
    json labels = json::array();
    if (i < multiple.size() && multiple[i]) {
      const std::string& joined = answers[i];
      for (std::size_t start = 0; start <= joined.size();) {
        const auto end = std::min(joined.find(", ", start), joined.size());
        if (end > start) labels.push_back(joined.substr(start, end - start));
        start = end + 2;
      }
    } else {
      labels.push_back(answers[i]);
    }
    replies.push_back(std::move(labels));
  }
  return json{{"answers", std::move(replies)}};
}

std::vector<protocol::AgentCommand> offered_commands(const json& commands_answer) {
  std::vector<protocol::AgentCommand> commands;
  if (!commands_answer.is_array()) return commands;
  for (const auto& command : commands_answer) {
    if (!command.is_object()) continue;
    protocol::AgentCommand offered;
    offered.name = string_or_empty(command, "name");
    if (offered.name.empty()) continue;
    if (auto description = native::string_at(command, "description"); description && !description->empty()) offered.description = *description;
    std::string hint;
    if (const auto* hints = native::array_at(command, "hints")) {
      for (const auto& item : *hints) {
        if (!item.is_string()) continue;
        std::string word = item.get<std::string>();
        if (word == "$ARGUMENTS") {
          word = "<arguments>";
        } else if (word.size() > 1 && word[0] == '$' && word.find_first_not_of("0123456789", 1) == std::string::npos) {
          word = "<arg" + word.substr(1) + ">";
        }
        if (!hint.empty()) hint += ' ';
        hint += word;
      }
    }
    if (!hint.empty()) offered.argument_hint = std::move(hint);
    commands.push_back(std::move(offered));
  }
  return commands;
}

std::vector<protocol::ModelInfo> offered_models(const nlohmann::json& providers_answer,
                                               const std::optional<std::string>& configured) {
  std::vector<protocol::ModelInfo> models;
  if (!providers_answer.is_object()) return models;
  const auto providers = providers_answer.find("providers");
  if (providers == providers_answer.end() || !providers->is_array()) return models;
  for (const auto& provider : *providers) {
    if (!provider.is_object()) continue;
    const auto provider_id = native::string_at(provider, "id");
    const auto listed = provider.find("models");
    if (!provider_id || provider_id->empty() || listed == provider.end() || !listed->is_object()) continue;
    const auto provider_name = native::string_at(provider, "name");
    for (const auto& [key, entry] : listed->items()) {  // nlohmann keeps object keys sorted
      if (!entry.is_object() || native::string_or_empty(entry, "status") == "deprecated") continue;
      const auto model_id = native::string_at(entry, "id").value_or(key);
      if (model_id.empty()) continue;
      protocol::ModelInfo model;
      model.id = *provider_id + "/" + model_id;
      model.name = native::string_at(entry, "name");
      model.description = provider_name;
      if (configured && *configured == model.id) model.is_default = true;
      models.push_back(std::move(model));
    }
  }
  return models;
}

}  // namespace switchboard::adapters::opencode
