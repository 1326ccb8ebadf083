#include "acp/AcpUpdates.h"
#include "acp/JsonMembers.h"

#include <algorithm>
#include <array>
#include <cstdio>
#include <ctime>
#include <string_view>
#include <utility>

namespace switchboard::acp {
namespace acp_updates_detail {


// The longest title we build: a tool's whole input belongs in rawInput, not in a one-line label.
constexpr std::size_t kTitleLimit = 200;

Json text_block(std::string text) { return Json{{"type", "text"}, {"text", std::move(text)}}; }

Json chunk(const char* kind, std::string text) { return Json{{"sessionUpdate", kind}, {"content", text_block(std::move(text))}}; }

// ACP `diff` content blocks ({type: "diff", path, oldText, newText}) for a tool.started's diffs.
Json diff_contents(const Json& data) {
  Json contents = Json::array();
  if (!data.contains("diffs") || !data["diffs"].is_array()) return contents;
  for (const auto& diff : data["diffs"]) {
    const auto path = string_member(diff, "path");
    if (path.empty()) continue;
    // ACP's oldText is null for a new file; ours is absent then (or when the old text is not known).
    contents.push_back(Json{{"type", "diff"},
                            {"path", path},
                            {"oldText", diff.contains("oldText") && diff["oldText"].is_string() ? diff["oldText"] : Json()},
                            {"newText", string_member(diff, "newText")}});
  }
  return contents;
}

// ACP's `plan` update for a plan.updated's entries: the statuses are ACP's own words; ACP wants a priority for
// every entry, so one the agent gave none gets medium.
Json plan_update(const Json& entries) {
  Json plan = Json::array();
  if (entries.is_array()) {
    for (const auto& entry : entries) {
      const auto priority = string_member(entry, "priority");
      plan.push_back(Json{{"content", string_member(entry, "content")},
                          {"priority", priority.empty() ? "medium" : priority},
                          {"status", string_member(entry, "status").empty() ? "pending" : string_member(entry, "status")}});
    }
  }
  return Json{{"sessionUpdate", "plan"}, {"entries", std::move(plan)}};
}

// ACP's `usage_update` for a usage.updated: tokens in the context and the window's size (which ACP requires:
// nullopt when the agent does not know it), and the cost so far in dollars.
std::optional<Json> usage_update(const Json& usage) {
  if (!usage.contains("usedTokens") || !usage["usedTokens"].is_number_integer()) return std::nullopt;
  if (!usage.contains("windowTokens") || !usage["windowTokens"].is_number_integer()) return std::nullopt;
  Json update{{"sessionUpdate", "usage_update"}, {"used", usage["usedTokens"]}, {"size", usage["windowTokens"]}};
  if (usage.contains("costUsd") && usage["costUsd"].is_number()) update["cost"] = Json{{"amount", usage["costUsd"]}, {"currency", "USD"}};
  return update;
}

// ACP's `available_commands_update` for a commands.updated: a description for each (ACP requires one), and the
// argument hint as the command's unstructured input.
Json commands_update(const Json& commands) {
  Json available = Json::array();
  if (commands.is_array()) {
    for (const auto& command : commands) {
      const auto name = string_member(command, "name");
      if (name.empty()) continue;
      Json offered{{"name", name}, {"description", string_member(command, "description")}};
      if (const auto hint = string_member(command, "argumentHint"); !hint.empty()) offered["input"] = Json{{"hint", hint}};
      available.push_back(std::move(offered));
    }
  }
  return Json{{"sessionUpdate", "available_commands_update"}, {"availableCommands", std::move(available)}};
}

Json tool_call(const Json& data) {
  const auto tool = string_member(data, "tool");
  const auto& input = data.contains("input") && data["input"].is_object() ? data["input"] : Json::object();
  Json call{{"sessionUpdate", "tool_call"},
            {"toolCallId", string_member(data, "toolCallId")},
            {"title", tool_title_of(tool, input)},
            {"kind", tool_kind_of(tool)},
            {"status", "in_progress"},
            {"rawInput", input}};
  Json content = diff_contents(data);
  if (!content.empty()) {
    // A call that edits files is an edit to an editor, whatever the agent calls its tool.
    call["kind"] = "edit";
    call["content"] = std::move(content);
  }
  return call;
}

// `diffs`: the diff content the call showed (an array, maybe empty), kept first.
Json tool_completed(const Json& data, Json diffs) {
  const bool failed = data.value("isError", false);
  Json update{{"sessionUpdate", "tool_call_update"},
              {"toolCallId", string_member(data, "toolCallId")},
              {"status", failed ? "failed" : "completed"}};
  const auto output = string_member(data, "output");
  Json content = std::move(diffs);
  if (!output.empty()) content.push_back(Json{{"type", "content"}, {"content", text_block(output)}});
  if (!content.empty()) update["content"] = std::move(content);
  update["rawOutput"] = Json{{"output", output}, {"isError", failed}};
  return update;
}

}  // namespace acp_updates_detail

using namespace acp_updates_detail;

std::vector<Json> updates_for_event(const Json& envelope, UpdateReading reading, ShownDiffs& shown) {
  const auto type = string_member(envelope, "type");
  const auto& data = envelope.contains("data") && envelope["data"].is_object() ? envelope["data"] : Json::object();
  std::vector<Json> updates;
  if (type == "message.delta" && reading == UpdateReading::Live) {
    const auto text = string_member(data, "text");
    if (!text.empty()) updates.push_back(chunk(string_member(data, "kind") == "thinking" ? "agent_thought_chunk" : "agent_message_chunk", text));
  } else if (type == "message.completed" && reading == UpdateReading::Replay) {
    const auto text = string_member(data, "text");
    if (text.empty()) return updates;
    if (string_member(data, "role") == "user") {
      updates.push_back(chunk("user_message_chunk", text));
    } else {
      updates.push_back(chunk(string_member(data, "kind") == "thinking" ? "agent_thought_chunk" : "agent_message_chunk", text));
    }
  } else if (type == "turn.started" && reading == UpdateReading::Replay) {
    // Live, the editor sent the prompt itself (or another client did, and ACP has no way to say who).
    const auto text = string_member(data, "text");
    if (!text.empty()) updates.push_back(chunk("user_message_chunk", text));
  } else if (type == "tool.started") {
    updates.push_back(tool_call(data));
    if (updates.back().contains("content")) shown[string_member(data, "toolCallId")] = updates.back()["content"];
  } else if (type == "tool.output" && reading == UpdateReading::Live) {
    // The running output so far is not kept here; the completed tool carries all of it, so a live piece is
    // only a sign of life.
    updates.push_back(Json{{"sessionUpdate", "tool_call_update"}, {"toolCallId", string_member(data, "toolCallId")}, {"status", "in_progress"}});
  } else if (type == "tool.completed") {
    Json diffs = Json::array();
    if (const auto it = shown.find(string_member(data, "toolCallId")); it != shown.end()) {
      diffs = std::move(it->second);
      shown.erase(it);
    }
    updates.push_back(tool_completed(data, std::move(diffs)));
  } else if (type == "plan.updated") {
    // The agent's plan, whole (live, and replayed where the event log holds it).
    updates.push_back(plan_update(data.contains("entries") ? data["entries"] : Json()));
  } else if (type == "usage.updated" && reading == UpdateReading::Live) {
    if (auto update = usage_update(object_member(data, "usage"))) updates.push_back(std::move(*update));
  } else if (type == "commands.updated" && reading == UpdateReading::Live) {
    updates.push_back(commands_update(data.contains("commands") ? data["commands"] : Json()));
  } else if (type == "session.updated" && reading == UpdateReading::Live) {
    // Which field changed is not said: the mode and the title are sent as they are now.
    const auto& session = object_member(data, "session");
    const auto mode = string_member(session, "mode");
    if (!mode.empty()) updates.push_back(Json{{"sessionUpdate", "current_mode_update"}, {"currentModeId", mode}});
    const auto title = string_member(session, "title");
    if (!title.empty()) {
      Json info{{"sessionUpdate", "session_info_update"}, {"title", title}};
      if (session.contains("updatedAt") && session["updatedAt"].is_number_integer()) info["updatedAt"] = iso_time(session["updatedAt"].get<std::int64_t>());
      updates.push_back(std::move(info));
    }
  }
  return updates;
}

Json config_options(const protocol::SessionInfo& session, const std::vector<std::string>& agent_modes) {
  Json options = Json::array();
  if (!agent_modes.empty()) {
    Json choices = Json::array();
    for (const auto& mode : agent_modes) choices.push_back(Json{{"value", mode}, {"name", mode}});
    const auto current = session.mode && !session.mode->empty() ? *session.mode : agent_modes.front();
    options.push_back(Json{{"id", "mode"}, {"name", "Mode"}, {"category", "mode"}, {"type", "select"},
                           {"currentValue", current}, {"options", std::move(choices)}});
  }
  Json choices = Json::array();
  std::string fallback;
  for (const auto& model : session.models.value_or(std::vector<protocol::ModelInfo>{})) {
    if (model.id.empty()) continue;
    Json choice{{"value", model.id}, {"name", model.name && !model.name->empty() ? *model.name : model.id}};
    if (model.description && !model.description->empty()) choice["description"] = *model.description;
    choices.push_back(std::move(choice));
    if (fallback.empty() || model.is_default == true) fallback = model.id;
  }
  if (!choices.empty()) {
    const auto current = session.model && !session.model->empty() ? *session.model : fallback;
  const bool listed = std::any_of(choices.begin(), choices.end(), [&](const Json& choice) { return choice["value"] == current; });
  if (!listed) choices.push_back(Json{{"value", current}, {"name", current}});
    options.push_back(Json{{"id", "model"}, {"name", "Model"}, {"category", "model"}, {"type", "select"},
                           {"currentValue", current}, {"options", std::move(choices)}});
  }
  // The agent's other options, as they are (reasoning effort is ACP's thought_level). Our ids never clash with
  // mode and model: those have methods of their own, and the adapters leave them out.
  for (const auto& option : session.options.value_or(std::vector<protocol::SessionOption>{})) {
    if (option.id.empty() || option.id == "mode" || option.id == "model") continue;
    Json offered{{"id", option.id}, {"name", option.name && !option.name->empty() ? *option.name : option.id}};
    if (option.description && !option.description->empty()) offered["description"] = *option.description;
    if (option.id == "effort") offered["category"] = "thought_level";
    if (option.kind == protocol::SessionOptionKind::Boolean) {
      offered["type"] = "boolean";
      offered["currentValue"] = option.current_value == "true";
    } else {
      Json values = Json::array();
      for (const auto& value : option.values) {
        Json choice{{"value", value.value}, {"name", value.name && !value.name->empty() ? *value.name : value.value}};
        if (value.description && !value.description->empty()) choice["description"] = *value.description;
        values.push_back(std::move(choice));
      }
      if (values.empty()) continue;
      offered["type"] = "select";
      offered["currentValue"] = option.current_value;
      offered["options"] = std::move(values);
    }
    options.push_back(std::move(offered));
  }
  return options;
}

std::string iso_time(std::int64_t epoch_ms) {
  const auto seconds = static_cast<std::time_t>(epoch_ms / 1000);
  std::tm utc{};
  ::gmtime_r(&seconds, &utc);
  char date[32];
  std::strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%S", &utc);
  char with_ms[48];
  std::snprintf(with_ms, sizeof with_ms, "%s.%03dZ", date, static_cast<int>(epoch_ms % 1000));
  return with_ms;
}

std::string tool_kind_of(const std::string& tool) {
  static constexpr std::array<std::pair<std::string_view, std::string_view>, 24> kKinds{{
      {"Bash", "execute"}, {"shell", "execute"}, {"exec_command", "execute"}, {"local_shell", "execute"},
      {"execute", "execute"}, {"BashOutput", "execute"}, {"Read", "read"}, {"read", "read"},
      {"NotebookRead", "read"}, {"Edit", "edit"}, {"MultiEdit", "edit"}, {"Write", "edit"},
      {"NotebookEdit", "edit"}, {"apply_patch", "edit"}, {"edit", "edit"}, {"write", "edit"},
      {"Grep", "search"}, {"Glob", "search"}, {"LS", "search"}, {"search", "search"},
      {"WebFetch", "fetch"}, {"WebSearch", "fetch"}, {"fetch", "fetch"}, {"TodoWrite", "think"},
  }};
  for (const auto& [name, kind] : kKinds) {
    if (tool == name) return std::string(kind);
  }
  return "other";
}

std::string tool_title_of(const std::string& tool, const Json& input) {
  std::string subject;
  for (const char* key : {"command", "file_path", "path", "pattern", "url", "description"}) {
    if (input.is_object() && input.contains(key)) {
      const auto& value = input[key];
      if (value.is_string()) subject = value.get<std::string>();
      else if (value.is_array()) {
        for (const auto& part : value) {
          if (part.is_string()) subject += (subject.empty() ? "" : " ") + part.get<std::string>();
        }
      }
      if (!subject.empty()) break;
    }
  }
  std::string title = subject.empty() ? tool : tool + ": " + subject;
  if (title.size() > kTitleLimit) title = title.substr(0, kTitleLimit) + "…";
  return title;
}


}  // namespace switchboard::acp
