#include "grok/GrokHistory.h"

#include <cctype>
#include <fstream>
#include <sstream>
#include <system_error>

#include "acp/AcpTranslator.h"
#include "common/HistoryFile.h"
#include "common/NativeJson.h"
#include "common/PercentEncoding.h"
#include "switchboard/support/Clock.h"

namespace switchboard::adapters::grok {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

constexpr std::size_t kMaxQuotedLength = 200;

AdapterError unknown_session(const std::string& cwd, const std::string& id) {
  return AdapterError{protocol::ErrorCode::UnknownHistorySession,
                      "Grok Build has no session " + id.substr(0, kMaxQuotedLength) + " for " + cwd.substr(0, 500)};
}

// A session id is a directory name of Grok's: no separators, no dot names.
bool is_session_id(const std::string& id) {
  if (id.empty() || id.size() > 100 || id == "." || id == "..") return false;
  for (const char c : id) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_') return false;
  }
  return true;
}

json read_json_file(const fs::path& file) {
  std::ifstream in(file);
  if (!in) return json(json::value_t::discarded);
  std::stringstream text;
  text << in.rdbuf();
  return json::parse(text.str(), nullptr, /*allow_exceptions=*/false);
}

// The `update` of a line of updates.jsonl that is one of the session's updates (the ACP stream, or Grok's own
// turn ends), else null.
const json* session_update(const json& line) {
  const std::string method = native::string_or_empty(line, "method");
  if (method != "session/update" && method != "_x.ai/session/update") return nullptr;
  const auto* params = native::object_at(line, "params");
  return params != nullptr ? native::object_at(*params, "update") : nullptr;
}

bool opens_prompt(const json* update) {
  return update != nullptr && native::string_or_empty(*update, "sessionUpdate") == "user_message_chunk";
}

// How many prompts history.read finds in the file. Only the lines that can be a prompt are parsed: the others
// (tool output, streamed text) are most of the file.
std::int64_t count_prompts(const fs::path& updates) {
  JsonlReader reader(updates);
  std::int64_t prompts = 0;
  std::string text;
  bool too_long = false;
  while (reader.next(text, too_long)) {
    if (too_long || text.find("user_message_chunk") == std::string::npos) continue;
    const json line = native::parse_line(text);
    if (line.is_object() && opens_prompt(session_update(line))) ++prompts;
  }
  return prompts;
}

}  // namespace

std::string encoded_cwd(const std::string& cwd) { return percent_encoded(cwd); }

HistoryOutcome<HistoryList> list_history(const fs::path& grok_home, const std::string& cwd) {
  HistoryList list;
  const fs::path dir = grok_home / "sessions" / encoded_cwd(cwd);
  std::error_code error;
  for (fs::directory_iterator it(dir, error), end; !error && it != end; it.increment(error)) {
    if (!it->is_directory(error)) continue;
    const fs::path updates = it->path() / "updates.jsonl";
    const json summary = read_json_file(it->path() / "summary.json");
    if (!fs::exists(updates, error) || summary.is_discarded() || !summary.is_object()) {
      ++list.skipped_files;
      continue;
    }
    HistoryEntry entry;
    entry.provider_session_id = it->path().filename().string();
    const auto* info = native::object_at(summary, "info");
    entry.cwd = info != nullptr ? native::string_or_empty(*info, "cwd") : cwd;
    entry.title = native::string_or_empty(summary, "session_summary");
    if (entry.title.empty()) entry.title = native::string_or_empty(summary, "generated_title");
    entry.created_at = parse_iso8601_millis(native::string_or_empty(summary, "created_at"));
    entry.updated_at = parse_iso8601_millis(native::string_or_empty(summary, "updated_at")).value_or(modified_at_ms(updates));
    entry.path = updates.string();
    entry.prompts = count_prompts(updates);
    list.sessions.push_back(std::move(entry));
  }
  sort_newest_first(list);
  return list;
}

HistoryOutcome<HistoryReadStats> read_history(const fs::path& grok_home, const std::string& cwd, const std::string& session_id,
                                              HistorySink& sink) {
  if (!is_session_id(session_id)) return unknown_session(cwd, session_id);
  const fs::path file = grok_home / "sessions" / encoded_cwd(cwd) / session_id / "updates.jsonl";
  acp::AcpTranslator translator(sink, "grok history");
  translator.set_session(session_id);
  int prompts = 0;
  const json kEnd{{"stopReason", "end_turn"}};
  JsonlCounts counts;
  const bool opened = for_each_json_object(file, counts, [&](const json& line) {
    // The ACP stream, and Grok's own turn ends (`_x.ai/session/update` `turn_completed`) in the same file.
    const std::string method = native::string_or_empty(line, "method");
    if (method != "session/update" && method != "_x.ai/session/update") return true;
    const auto* params = native::object_at(line, "params");
    if (params == nullptr) return true;
    const auto* update = native::object_at(*params, "update");
    if (opens_prompt(update)) {
      if (translator.turn_running()) translator.on_prompt_answer(kEnd);
      const auto* content = native::object_at(*update, "content");
      const std::string prompt_id = session_id + "-prompt-" + std::to_string(++prompts);
      // Grok stamps each line in Unix seconds.
      std::string timestamp;
      if (const auto seconds = native::integer_at(line, "timestamp"); seconds && *seconds > 0 && *seconds < 100'000'000'000) {
        timestamp = format_iso8601_millis(*seconds * 1000);
      }
      sink.on_user_prompt(HistorySink::UserPrompt{prompt_id, content != nullptr ? native::string_or_empty(*content, "text") : "", timestamp});
      translator.turn_started(prompt_id);
      return true;
    }
    if (update != nullptr && native::string_or_empty(*update, "sessionUpdate") == "turn_completed") {
      // The turn's stop reason.
      if (translator.turn_running()) translator.on_prompt_answer(json{{"stopReason", native::string_or_empty(*update, "stop_reason")}});
      return true;
    }
    if (method == "session/update") translator.on_update(*params);
    return true;
  });
  if (!opened) return unknown_session(cwd, session_id);
  if (translator.turn_running()) translator.on_prompt_answer(kEnd);
  return HistoryReadStats{counts.lines, counts.malformed};
}

}  // namespace switchboard::adapters::grok
