#include "claude-code/ClaudeHistory.h"

#include <algorithm>
#include <map>
#include <system_error>

#include <spdlog/spdlog.h>

#include "claude-code/ClaudeContent.h"
#include "claude-code/ClaudePlan.h"
#include "common/HistoryFile.h"
#include "common/NativeJson.h"
#include "switchboard/support/Clock.h"

namespace switchboard::adapters::claude {
namespace {

namespace fs = std::filesystem;

// The CLI cuts project directory names at this many characters.
constexpr std::size_t kMaxProjectNameLength = 200;

bool is_ascii_alnum(unsigned char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }

// How a user line of the history reads.
enum class UserLineKind { Prompt, Interrupt, ToolResults, Other };

struct UserLine {
  UserLineKind kind = UserLineKind::Other;
  std::string text;
};

UserLine classify_user_line(const nlohmann::json& line) {
  UserLine out;
  // Meta lines (caveats, reminders), compaction summaries and old-style sub-agent lines are not the user speaking.
  if (native::bool_or(line, "isMeta", false) || native::bool_or(line, "isCompactSummary", false) ||
      native::bool_or(line, "isSidechain", false) || native::bool_or(line, "isVisibleInTranscriptOnly", false)) {
    return out;
  }
  const auto* message = native::object_at(line, "message");
  if (message == nullptr) return out;
  const auto* content = native::member(*message, "content");
  if (content == nullptr) return out;
  if (content->is_string()) {
    out.text = content->get<std::string>();
  } else if (content->is_array()) {
    for (const auto& block : *content) {
      const std::string type = native::string_or_empty(block, "type");
      if (type == "tool_result") {
        out.kind = UserLineKind::ToolResults;
        return out;
      }
      if (type != "text") continue;  // images the user attached show in the client from its own records
      if (!out.text.empty()) out.text += '\n';
      out.text += native::string_or_empty(block, "text");
    }
  }
  if (out.text.starts_with("[Request interrupted by user")) {
    out.kind = UserLineKind::Interrupt;
  } else if (out.text.empty() || out.text.starts_with("<command-") || out.text.starts_with("<local-command-")) {
    out.kind = UserLineKind::Other;  // slash-command plumbing
  } else {
    out.kind = UserLineKind::Prompt;
  }
  return out;
}

std::optional<std::string> recorded_cwd(const fs::path& file) {
  std::optional<std::string> cwd;
  JsonlCounts counts;
  for_each_json_object(file, counts, [&](const nlohmann::json& line) {
    cwd = native::string_at(line, "cwd");
    return !cwd;
  });
  return cwd;
}

// The listing's entry for a session file; none when it holds no conversation or cannot be read. `cwd` stands in
// for a file that records none.
std::optional<HistoryEntry> scan_session(const fs::path& file, std::string_view cwd, JsonlCounts& counts) {
  HistoryEntry session;
  session.provider_session_id = file.stem().string();
  session.path = file.string();
  session.updated_at = modified_at_ms(file);
  std::optional<std::string> started_at;
  std::int64_t prompts = 0;
  std::string custom_title;
  std::string summary;
  std::string first_prompt;
  bool has_conversation = false;
  const bool opened = for_each_json_object(file, counts, [&](const nlohmann::json& line) {
    const std::string type = native::string_or_empty(line, "type");
    if (!started_at) started_at = native::string_at(line, "timestamp");
    if (session.cwd.empty()) session.cwd = native::string_or_empty(line, "cwd");
    if (type == "custom-title") custom_title = native::string_or_empty(line, "customTitle");
    if (type == "summary") summary = native::string_or_empty(line, "summary");
    if (type == "assistant") has_conversation = true;
    if (type == "user") {
      const UserLine user = classify_user_line(line);
      if (user.kind == UserLineKind::Prompt) {
        has_conversation = true;
        ++prompts;
        if (first_prompt.empty()) first_prompt = user.text;
      }
    }
    return true;
  });
  if (!opened || !has_conversation) return std::nullopt;
  session.title = !custom_title.empty() ? custom_title : !summary.empty() ? summary : title_from_prompt(first_prompt);
  if (session.cwd.empty()) session.cwd = cwd;
  if (started_at) session.created_at = parse_iso8601_millis(*started_at);
  session.prompts = prompts;
  return session;
}

// The turn being replayed from a history file.
class HistoryReplay {
 public:
  explicit HistoryReplay(HistorySink& sink) : m_sink(sink) {}

  void line(const nlohmann::json& line, HistoryFileStats& stats) {
    if (auto session = native::string_at(line, "sessionId"); session && !session->empty() && !m_session_reported) {
      m_session_reported = true;
      m_sink.on_provider_session(ProviderSession{*session});
    }
    const std::string type = native::string_or_empty(line, "type");
    if (type == "user") return user(line, stats);
    if (type == "assistant") return assistant(line, stats);
    ++stats.ignored;
  }

  void finish() { close_turn(); }

 private:
  void user(const nlohmann::json& line, HistoryFileStats& stats) {
    UserLine user = classify_user_line(line);
    switch (user.kind) {
      case UserLineKind::Prompt: {
        close_turn();
        m_turn_open = true;
        std::string id = native::string_at(line, "promptId").value_or(native::string_or_empty(line, "uuid"));
        m_sink.on_user_prompt(HistorySink::UserPrompt{std::move(id), std::move(user.text), native::string_or_empty(line, "timestamp")});
        return;
      }
      case UserLineKind::Interrupt:
        m_interrupted = true;
        return;
      case UserLineKind::ToolResults:
        if (const auto* message = native::object_at(line, "message")) {
          report_tool_results(*message, m_sink);
          finish_plan_calls(line, *message);
        }
        return;
      case UserLineKind::Other:
        ++stats.ignored;
        return;
    }
  }

  void assistant(const nlohmann::json& line, HistoryFileStats& stats) {
    const auto* message = native::object_at(line, "message");
    if (message == nullptr) {
      ++stats.malformed;
      return;
    }
    if (native::bool_or(line, "isSidechain", false)) {
      ++stats.ignored;
      return;
    }
    if (is_synthetic(*message)) {
      // An API error the CLI wrote in the model's place.
      const auto* content = native::member(*message, "content");
      m_error = content != nullptr ? flatten_tool_output(*content) : std::string("API error");
      return;
    }
    const std::string id = native::string_or_empty(*message, "id");
    if (auto stop = native::string_at(*message, "stop_reason")) m_stop_reason = *stop;
    // Claude writes each content block of a message on its own line, repeating the message's usage on each.
    if (const auto* usage = native::object_at(*message, "usage")) m_usage_by_message[id] = *usage;
    report_assistant_content(*message, std::nullopt, m_numbering, m_sink, &m_last_text);
    if (const auto* content = native::array_at(*message, "content")) {
      for (const auto& block : *content) {
        if (native::string_or_empty(block, "type") != "tool_use") continue;
        const auto* input = native::object_at(block, "input");
        m_plan.tool_called(native::string_or_empty(block, "id"), native::string_or_empty(block, "name"),
                           input != nullptr ? *input : nlohmann::json::object());
      }
    }
  }

  // The plan as the live session saw it: a task tool's call counts once its result line says it succeeded, and
  // that result (the file's toolUseResult) is where a created task's id is.
  void finish_plan_calls(const nlohmann::json& line, const nlohmann::json& message) {
    const auto* content = native::array_at(message, "content");
    if (content == nullptr) return;
    const auto* structured = native::member(line, "toolUseResult");
    const nlohmann::json none;
    bool changed = false;
    for (const auto& block : *content) {
      if (native::string_or_empty(block, "type") != "tool_result") continue;
      changed |= m_plan.tool_finished(native::string_or_empty(block, "tool_use_id"), native::bool_or(block, "is_error", false),
                                      structured != nullptr ? *structured : none);
    }
    if (changed) m_sink.on_plan(PlanUpdate{m_plan.entries()});
  }

  void close_turn() {
    if (!m_turn_open && m_usage_by_message.empty() && m_last_text.empty()) return;
    TurnResult result;
    if (m_interrupted) {
      result.stop_reason = protocol::StopReason::Cancelled;
    } else if (m_error) {
      result.stop_reason = protocol::StopReason::Error;
      result.error = m_error;
    } else {
      result.stop_reason = stop_reason_from(m_stop_reason);
    }
    result.text = m_last_text;
    for (const auto& [id, native_usage] : m_usage_by_message) {
      const auto usage = usage_from(native_usage);
      if (!usage) continue;
      if (!result.usage) result.usage = protocol::Usage{};
      const auto add = [](std::optional<std::int64_t>& sum, const std::optional<std::int64_t>& value) {
        if (value) sum = sum.value_or(0) + *value;
      };
      add(result.usage->input_tokens, usage->input_tokens);
      add(result.usage->output_tokens, usage->output_tokens);
      add(result.usage->cache_read_tokens, usage->cache_read_tokens);
    }
    m_sink.on_turn_end(std::move(result));
    m_turn_open = false;
    m_interrupted = false;
    m_error.reset();
    m_stop_reason.clear();
    m_last_text.clear();
    m_usage_by_message.clear();
    m_numbering.clear();
  }

  HistorySink& m_sink;
  bool m_session_reported = false;
  bool m_turn_open = false;
  bool m_interrupted = false;
  std::optional<std::string> m_error;
  std::string m_stop_reason;
  std::string m_last_text;
  std::map<std::string, nlohmann::json> m_usage_by_message;
  BlockNumbering m_numbering;
  ClaudePlan m_plan;  // the session's, across turns
};

}  // namespace

std::optional<fs::path> claude_config_dir(const std::optional<std::string>& claude_config_dir_env,
                                          const std::optional<std::string>& home_env) {
  if (claude_config_dir_env && !claude_config_dir_env->empty()) return fs::path(*claude_config_dir_env);
  if (home_env && !home_env->empty()) return fs::path(*home_env) / ".claude";
  return std::nullopt;
}

std::string project_directory_name(std::string_view cwd) {
  std::string name;
  name.reserve(cwd.size());
  for (std::size_t i = 0; i < cwd.size() && name.size() < kMaxProjectNameLength;) {
    const auto c = static_cast<unsigned char>(cwd[i]);
    if (c < 0x80) {
      name += is_ascii_alnum(c) ? static_cast<char>(c) : '-';
      ++i;
      continue;
    }
    // A UTF-8 sequence: one '-' per UTF-16 code unit (two for characters beyond the BMP).
    std::size_t length = 1;
    std::size_t units = 1;
    if ((c & 0xE0) == 0xC0) {
      length = 2;
    } else if ((c & 0xF0) == 0xE0) {
      length = 3;
    } else if ((c & 0xF8) == 0xF0) {
      length = 4;
      units = 2;
    }
    name.append(units, '-');
    i += length;
  }
  if (name.size() > kMaxProjectNameLength) name.resize(kMaxProjectNameLength);
  return name;
}

std::optional<fs::path> find_project_directory(const fs::path& config_dir, std::string_view cwd) {
  const fs::path projects = config_dir / "projects";
  const std::string name = project_directory_name(cwd);
  std::error_code error;
  if (fs::is_directory(projects / name, error)) return projects / name;
  if (name.size() < kMaxProjectNameLength) return std::nullopt;
  // A cut name: the CLI appended a hash we do not compute; the sessions inside say which directory is ours.
  for (fs::directory_iterator it(projects, error), end; !error && it != end; it.increment(error)) {
    const std::string candidate = it->path().filename().string();
    std::error_code inner;
    if (!candidate.starts_with(name + "-") || !it->is_directory(inner)) continue;
    for (fs::directory_iterator file(it->path(), inner), last; !inner && file != last; file.increment(inner)) {
      if (file->path().extension() != ".jsonl") continue;
      if (recorded_cwd(file->path()) == std::string(cwd)) return it->path();
    }
  }
  return std::nullopt;
}

HistoryList list_history(const fs::path& config_dir, std::string_view cwd) {
  HistoryList listing;
  const auto directory = find_project_directory(config_dir, cwd);
  if (!directory) return listing;
  JsonlCounts counts;
  std::error_code error;
  for (fs::directory_iterator it(*directory, error), end; !error && it != end; it.increment(error)) {
    const fs::path& file = it->path();
    if (file.extension() != ".jsonl" || file.filename().string().starts_with("agent-")) continue;
    std::error_code kind_error;
    if (!it->is_regular_file(kind_error)) continue;
    if (auto session = scan_session(file, cwd, counts)) {
      listing.sessions.push_back(std::move(*session));
    } else {
      ++listing.skipped_files;
    }
  }
  if (error) spdlog::warn("claude history: listing {} stopped early: {}", directory->string(), error.message());
  listing.skipped_lines = counts.malformed;
  sort_newest_first(listing);
  return listing;
}

HistoryFileStats read_history(const fs::path& file, HistorySink& sink) {
  HistoryFileStats stats;
  HistoryReplay replay(sink);
  JsonlCounts counts;
  stats.opened = for_each_json_object(file, counts, [&](const nlohmann::json& line) {
    try {
      replay.line(line, stats);
    } catch (const nlohmann::json::exception& error) {
      // The module edge: the replay reads through non-throwing accessors, but one odd line must not end it.
      ++stats.malformed;
      spdlog::warn("claude history: skipped a line of {}: {}", file.string(), error.what());
    }
    return true;
  });
  stats.lines = counts.lines;
  stats.malformed += counts.malformed;
  if (stats.opened) replay.finish();
  return stats;
}

}  // namespace switchboard::adapters::claude
