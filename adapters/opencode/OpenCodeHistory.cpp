#include "opencode/OpenCodeHistory.h"

#include <cstdint>
#include <limits>
#include <set>
#include <system_error>
#include <utility>

#include <SQLiteCpp/Database.h>
#include <SQLiteCpp/Statement.h>

#include "common/NativeJson.h"
#include "opencode/OpenCodeTranslator.h"
#include "switchboard/support/Clock.h"

namespace switchboard::adapters::opencode {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

// OpenCode writes while we read; a writer holds its lock for milliseconds.
constexpr int kBusyTimeoutMs = 2000;

SQLite::Database open_read_only(const fs::path& database) {
  SQLite::Database db(database.string(), SQLite::OPEN_READONLY);
  db.setBusyTimeout(kBusyTimeoutMs);
  return db;
}

AdapterError unknown_session(const std::string& cwd, const std::string& id) {
  return AdapterError{protocol::ErrorCode::UnknownHistorySession,
                      "OpenCode has no session " + id.substr(0, 200) + " for " + cwd.substr(0, 500)};
}

std::optional<json> parse_object(const std::string& text) {
  json value = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!value.is_object()) return std::nullopt;
  return value;
}

// The live translator hears events of OpenCode's stream: a recorded message replays as the events that
// streamed it.
json event(std::string type, json properties) { return json{{"type", std::move(type)}, {"properties", std::move(properties)}}; }
json status(const char* type) { return event("session.status", {{"status", {{"type", type}}}}); }

// Replays one session's messages in order.
class Replay {
 public:
  // Parts name their session (`sessionID`): the session's own are its turn's, a sub-agent's nest in its task call.
  Replay(HistorySink& sink, const std::string& session_id) : m_sink(sink), m_translator(sink) {
    m_translator.set_session_id(session_id);
    m_translator.set_plans_from_todowrite(true);  // the history keeps no todo.updated, only the tool's calls
  }

  void user_message(const std::string& id, const json& info, const std::string& text) {
    close_turn();
    const auto* time = native::object_at(info, "time");
    const auto created = time != nullptr ? native::integer_at(*time, "created") : std::nullopt;
    m_sink.on_user_prompt({id, text, created ? format_iso8601_millis(*created) : std::string()});
    open_turn();
  }

  void assistant_part(json part) {
    open_turn();
    // A text that was cut off (the answer aborted mid-stream) has no end time; the stream would not have ended it.
    const std::string type = native::string_or_empty(part, "type");
    if (type == "text" || type == "reasoning") {
      auto& time = part["time"];
      if (!time.is_object()) time = json::object();
      if (!time.contains("end")) time["end"] = 0;
    }
    m_translator.feed(event("message.part.updated", {{"part", std::move(part)}}));
  }

  void assistant_error(const json& error) {
    open_turn();
    m_translator.feed(event("session.error", {{"error", error}}));
  }

  void finish() { close_turn(); }

 private:
  void open_turn() {
    if (m_open) return;
    m_open = true;
    m_translator.turn_started();
    m_translator.feed(status("busy"));
  }
  void close_turn() {
    if (!m_open) return;
    m_open = false;
    m_translator.feed(event("session.idle", json::object()));
  }

  HistorySink& m_sink;
  OpenCodeTranslator m_translator;
  bool m_open = false;
};

}  // namespace

std::optional<fs::path> opencode_database(const std::optional<std::string>& xdg_data_home,
                                          const std::optional<std::string>& home) {
  if (xdg_data_home && !xdg_data_home->empty()) return fs::path(*xdg_data_home) / "opencode" / "opencode.db";
  if (home && !home->empty()) return fs::path(*home) / ".local" / "share" / "opencode" / "opencode.db";
  return std::nullopt;
}

HistoryOutcome<HistoryList> list_history(const fs::path& database, const std::string& cwd) {
  HistoryList list;
  std::error_code missing;
  if (!fs::is_regular_file(database, missing)) return list;
  try {
    auto db = open_read_only(database);
    SQLite::Statement query(db,
                            "SELECT s.id, s.title, s.directory, s.time_created, s.time_updated,"
                            " (SELECT count(*) FROM message m WHERE m.session_id = s.id"
                            "  AND json_valid(m.data) AND json_extract(m.data, '$.role') = 'user')"
                            " FROM session s WHERE s.directory = ? AND s.parent_id IS NULL"
                            " ORDER BY s.time_updated DESC, s.id DESC");
    query.bind(1, cwd);
    while (query.executeStep()) {
      HistoryEntry entry;
      entry.provider_session_id = query.getColumn(0).getString();
      entry.title = query.getColumn(1).getString();
      entry.cwd = query.getColumn(2).getString();
      entry.created_at = query.getColumn(3).getInt64();
      entry.updated_at = query.getColumn(4).getInt64();
      entry.prompts = query.getColumn(5).getInt64();
      entry.path = database.string();
      list.sessions.push_back(std::move(entry));
    }
  } catch (const SQLite::Exception&) {
    // Not a database OpenCode wrote (another version's, or damaged): nothing we can list from it.
    list.sessions.clear();
    list.skipped_files = 1;
  }
  return list;
}

namespace {

// How deep sub-agents of sub-agents are followed (OpenCode lets a task start tasks).
constexpr int kMaxSubAgentDepth = 4;

// The sub-agent session a task part ran in, if it is one of `parent`'s own.
std::optional<std::string> child_session(SQLite::Database& db, const std::string& parent, const json& part) {
  if (native::string_or_empty(part, "type") != "tool" || native::string_or_empty(part, "tool") != "task") return std::nullopt;
  const auto* state = native::object_at(part, "state");
  const auto* metadata = state != nullptr ? native::object_at(*state, "metadata") : nullptr;
  const std::string child = metadata != nullptr ? native::string_or_empty(*metadata, "sessionId") : std::string();
  if (child.empty()) return std::nullopt;
  SQLite::Statement owned(db, "SELECT 1 FROM session WHERE id = ? AND parent_id = ?");
  owned.bind(1, child);
  owned.bind(2, parent);
  if (!owned.executeStep()) return std::nullopt;
  return child;
}

// When a task call ended (ms), if it has.
std::optional<std::int64_t> task_end(const json& part) {
  const auto* state = native::object_at(part, "state");
  const auto* time = state != nullptr ? native::object_at(*state, "time") : nullptr;
  return time != nullptr ? native::integer_at(*time, "end") : std::nullopt;
}

// Where a read is in the sub-agents' sessions: one child may serve several task calls (a task can resume an
// earlier sub-agent's session), each of which gets only the child's messages made up to its own end.
struct SubAgentReplay {
  std::set<std::string> replayed_messages;
};

// Replays the messages of `session_id` in order. The session read (depth 0) gives its prompts, answers and
// errors; a sub-agent's session gives only its answer's parts, replayed inside its task call as they streamed:
// the task first as running (which names the child), then the child's parts, then the task as it ended.
// `until`: a sub-agent's messages made after it (by a later task call) are left for that call.
void replay_messages(SQLite::Database& db, const std::string& session_id, int depth, std::optional<std::int64_t> until,
                     Replay& replay, HistoryReadStats& stats, SubAgentReplay& sub_agents) {
  // Every part of the session in message order, each message's parts in the order they were made (ids sort by
  // creation time); a message without parts still comes once, with a null part.
  SQLite::Statement rows(db,
                         "SELECT m.id, m.data, p.id, p.data FROM message m LEFT JOIN part p ON p.message_id = m.id"
                         " WHERE m.session_id = ? AND m.time_created <= ? ORDER BY m.time_created, m.id, p.id");
  rows.bind(1, session_id);
  rows.bind(2, static_cast<std::int64_t>(until.value_or(std::numeric_limits<std::int64_t>::max())));
  const bool own = depth == 0;
  bool skipping = false;  // the current message was replayed under an earlier task call
  std::string current_message;
  std::optional<json> info;  // the current message's, if it parsed
  std::string prompt_text;   // a user message's text parts, joined
  const auto end_message = [&] {
    if (!info || !own) return;
    if (native::string_or_empty(*info, "role") == "user") {
      replay.user_message(current_message, *info, prompt_text);
    } else if (const auto* error = native::object_at(*info, "error")) {
      replay.assistant_error(*error);
    }
  };
  while (rows.executeStep()) {
    const std::string message_id = rows.getColumn(0).getString();
    if (message_id != current_message) {
      end_message();
      current_message = message_id;
      prompt_text.clear();
      skipping = !own && !sub_agents.replayed_messages.insert(message_id).second;
      info.reset();
      if (skipping) continue;
      ++stats.lines;
      info = parse_object(rows.getColumn(1).getString());
      if (!info) ++stats.skipped_lines;
    }
    if (skipping || rows.getColumn(2).isNull()) continue;
    ++stats.lines;
    auto part = parse_object(rows.getColumn(3).getString());
    if (!part) {
      ++stats.skipped_lines;
      continue;
    }
    if (!info) continue;  // whose part it is is unknown
    if (native::string_or_empty(*info, "role") == "user") {
      // A sub-agent's prompt is the task's input, already shown with the task call.
      if (!own) continue;
      // What the user typed; parts OpenCode adds itself (a file's contents) are marked synthetic.
      const auto synthetic = part->find("synthetic");
      const bool typed = synthetic == part->end() || !synthetic->is_boolean() || !synthetic->get<bool>();
      if (native::string_or_empty(*part, "type") == "text" && typed) {
        if (!prompt_text.empty()) prompt_text += "\n";
        prompt_text += native::string_or_empty(*part, "text");
      }
      continue;
    }
    (*part)["id"] = rows.getColumn(2).getString();
    (*part)["messageID"] = message_id;
    (*part)["sessionID"] = session_id;
    if (const auto child = depth < kMaxSubAgentDepth ? child_session(db, session_id, *part) : std::nullopt) {
      json running = *part;
      running["state"]["status"] = "running";
      running["state"].erase("output");
      if (running["state"]["metadata"].is_object()) running["state"]["metadata"].erase("output");
      replay.assistant_part(std::move(running));
      replay_messages(db, *child, depth + 1, task_end(*part), replay, stats, sub_agents);
    }
    replay.assistant_part(std::move(*part));
  }
  end_message();
}

}  // namespace

HistoryOutcome<HistoryReadStats> read_history(const fs::path& database, const std::string& cwd,
                                              const std::string& opencode_session_id, HistorySink& sink) {
  std::error_code missing;
  if (!fs::is_regular_file(database, missing)) return unknown_session(cwd, opencode_session_id);
  HistoryReadStats stats;
  try {
    auto db = open_read_only(database);
    SQLite::Statement session(db, "SELECT 1 FROM session WHERE id = ? AND directory = ?");
    session.bind(1, opencode_session_id);
    session.bind(2, cwd);
    if (!session.executeStep()) return unknown_session(cwd, opencode_session_id);
    sink.on_provider_session(ProviderSession{opencode_session_id});
    Replay replay(sink, opencode_session_id);
    SubAgentReplay sub_agents;
    replay_messages(db, opencode_session_id, 0, std::nullopt, replay, stats, sub_agents);
    replay.finish();
  } catch (const SQLite::Exception& error) {
    return AdapterError{protocol::ErrorCode::UnknownHistorySession,
                        "cannot read OpenCode's database " + database.string() + ": " + error.what()};
  }
  return stats;
}

}  // namespace switchboard::adapters::opencode
