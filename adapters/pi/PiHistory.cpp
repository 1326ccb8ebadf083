#include "pi/PiHistory.h"

#include <fstream>
#include <map>
#include <set>
#include <system_error>
#include <vector>

#include "pi/PiTranslator.h"

namespace switchboard::adapters::pi {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

struct Header {
  std::string id;
  std::string cwd;
  std::string timestamp;
};

std::optional<Header> read_header(const fs::path& file, JsonlCounts& counts) {
  std::optional<Header> header;
  for_each_json_object(file, counts, [&](const json& line) {
    if (native::string_or_empty(line, "type") == "session" && native::string_at(line, "id") && native::string_at(line, "cwd")) {
      header = Header{native::string_or_empty(line, "id"), native::string_or_empty(line, "cwd"), native::string_or_empty(line, "timestamp")};
    }
    return false;  // only the first line
  });
  return header;
}

std::string without_trailing_slashes(std::string_view path) {
  while (path.size() > 1 && path.back() == '/') path.remove_suffix(1);
  return std::string(path);
}

std::vector<fs::path> session_files(const fs::path& dir) {
  std::vector<fs::path> files;
  std::error_code error;
  for (fs::directory_iterator it(dir, error), end; !error && it != end; it.increment(error)) {
    if (it->path().extension() == ".jsonl" && it->is_regular_file(error)) files.push_back(it->path());
  }
  return files;
}

std::string text_of(const json& message) {
  const auto* content = native::member(message, "content");
  if (content != nullptr && content->is_string()) return content->get<std::string>();
  std::string text;
  if (content == nullptr || !content->is_array()) return text;
  for (const auto& block : *content) {
    if (native::string_or_empty(block, "type") == "text") text += native::string_or_empty(block, "text");
  }
  return text;
}

// The entries of the file's current branch, root first: the last entry and its ancestors.
std::vector<json> current_branch(const fs::path& file, HistoryFileStats& stats) {
  std::map<std::string, json> by_id;
  std::string leaf;
  JsonlCounts counts;
  stats.opened = for_each_json_object(file, counts, [&](const json& line) {
    const auto id = native::string_at(line, "id");
    if (native::string_or_empty(line, "type") == "session") {
      ++stats.ignored;
      return true;
    }
    if (!id) {
      ++stats.malformed;
      return true;
    }
    leaf = *id;
    by_id[*id] = line;
    return true;
  });
  stats.lines = counts.lines;
  stats.malformed += counts.malformed;
  std::vector<json> branch;
  std::set<std::string> seen;
  for (std::string at = leaf; !at.empty() && seen.insert(at).second;) {
    const auto it = by_id.find(at);
    if (it == by_id.end()) break;
    branch.push_back(it->second);
    at = native::string_or_empty(it->second, "parentId");
  }
  return {branch.rbegin(), branch.rend()};
}

// "~" and "~/…" as Pi expands them.
std::string expand_tilde(const std::string& path, const std::optional<std::string>& home) {
  if (!home || path.empty() || path[0] != '~' || (path.size() > 1 && path[1] != '/')) return path;
  return *home + path.substr(1);
}

// A settings file's `sessionDir`, if it names one (a file that is missing or not JSON names none, as for Pi).
std::optional<std::string> session_dir_setting(const fs::path& settings_file) {
  std::ifstream in(settings_file);
  if (!in) return std::nullopt;
  const json settings = json::parse(in, nullptr, /*allow_exceptions=*/false);
  auto dir = native::string_at(settings, "sessionDir");
  if (!dir || dir->empty()) return std::nullopt;
  return dir;
}

}  // namespace

fs::path sessions_dir(const fs::path& root, std::string_view cwd) {
  std::string name(cwd);
  if (!name.empty() && (name.front() == '/' || name.front() == '\\')) name.erase(0, 1);
  for (auto& c : name) {
    if (c == '/' || c == '\\' || c == ':') c = '-';
  }
  return root / ("--" + name + "--");
}

SessionPlaces session_places(const std::optional<std::string>& agent_dir_variable, const std::optional<std::string>& session_dir_variable,
                             const std::optional<std::string>& home) {
  SessionPlaces places;
  if (agent_dir_variable) {
    places.agent_dir = fs::path(expand_tilde(*agent_dir_variable, home));
  } else if (home) {
    places.agent_dir = fs::path(*home) / ".pi" / "agent";
  }
  places.session_dir_variable = session_dir_variable;
  places.home = home;
  return places;
}

std::optional<fs::path> session_folder(const SessionPlaces& places, std::string_view cwd) {
  const fs::path directory{without_trailing_slashes(cwd)};
  if (places.session_dir_variable && !places.session_dir_variable->empty()) {
    return directory / expand_tilde(*places.session_dir_variable, places.home);
  }
  auto setting = session_dir_setting(directory / ".pi" / "settings.json");
  if (!setting && places.agent_dir) setting = session_dir_setting(*places.agent_dir / "settings.json");
  if (setting) return directory / expand_tilde(*setting, places.home);  // an absolute path replaces `directory`
  if (!places.agent_dir) return std::nullopt;
  return sessions_dir(*places.agent_dir / "sessions", directory.string());
}

HistoryList list_history(const fs::path& folder, std::string_view cwd) {
  HistoryList list;
  const std::string wanted = without_trailing_slashes(cwd);
  for (const auto& file : session_files(folder)) {
    JsonlCounts head_counts;
    const auto header = read_header(file, head_counts);
    if (!header) {
      ++list.skipped_files;
      continue;
    }
    if (without_trailing_slashes(header->cwd) != wanted) continue;
    std::size_t prompts = 0;
    std::string first_prompt;
    JsonlCounts counts;
    for_each_json_object(file, counts, [&](const json& line) {
      const auto* message = native::object_at(line, "message");
      if (native::string_or_empty(line, "type") == "message" && message != nullptr && native::string_or_empty(*message, "role") == "user") {
        if (prompts++ == 0) first_prompt = text_of(*message);
      }
      return true;
    });
    list.skipped_lines += counts.malformed;
    if (prompts == 0) {
      ++list.skipped_files;
      continue;
    }
    HistoryEntry entry;
    entry.provider_session_id = header->id;
    entry.title = title_from_prompt(first_prompt);
    entry.cwd = header->cwd;
    entry.updated_at = modified_at_ms(file);
    entry.prompts = static_cast<std::int64_t>(prompts);
    entry.path = file.string();
    list.sessions.push_back(std::move(entry));
  }
  sort_newest_first(list);
  return list;
}

std::optional<fs::path> find_session_file(const fs::path& folder, std::string_view cwd, std::string_view id) {
  const std::string wanted = without_trailing_slashes(cwd);
  for (const auto& file : session_files(folder)) {
    JsonlCounts counts;
    const auto header = read_header(file, counts);
    if (header && header->id == id && without_trailing_slashes(header->cwd) == wanted) return file;
  }
  return std::nullopt;
}

HistoryFileStats read_history(const fs::path& file, HistorySink& sink) {
  HistoryFileStats stats;
  JsonlCounts head_counts;
  const auto header = read_header(file, head_counts);
  const auto branch = current_branch(file, stats);
  if (!stats.opened) return stats;
  if (header) sink.on_provider_session(ProviderSession{header->id});

  std::set<std::string> removed;  // entries a context_edit took out of the conversation
  for (const auto& entry : branch) {
    if (native::string_or_empty(entry, "type") == "context_edit" && native::member(entry, "replacement") != nullptr &&
        native::member(entry, "replacement")->is_null()) {
      removed.insert(native::string_or_empty(entry, "targetId"));
    }
  }
  bool turn_open = false;
  TurnResult turn;
  const auto close_turn = [&] {
    if (turn_open) sink.on_turn_end(std::exchange(turn, TurnResult{}));
    turn_open = false;
  };
  for (const auto& entry : branch) {
    const std::string id = native::string_or_empty(entry, "id");
    const auto* message = native::object_at(entry, "message");
    if (native::string_or_empty(entry, "type") != "message" || message == nullptr || removed.count(id) > 0) {
      ++stats.ignored;
      continue;
    }
    const std::string role = native::string_or_empty(*message, "role");
    if (role == "user") {
      close_turn();
      turn_open = true;
      sink.on_user_prompt(HistorySink::UserPrompt{id, text_of(*message), native::string_or_empty(entry, "timestamp")});
    } else if (role == "assistant") {
      std::string text;
      std::string thinking;
      const auto* content = native::array_at(*message, "content");
      for (const auto& block : content != nullptr ? *content : json::array()) {
        const std::string type = native::string_or_empty(block, "type");
        if (type == "text") text += native::string_or_empty(block, "text");
        if (type == "thinking") thinking += native::string_or_empty(block, "thinking");
      }
      if (!thinking.empty()) sink.on_message(MessageCompleted{id + "-thinking", protocol::DeltaKind::Thinking, thinking, std::nullopt});
      if (!text.empty()) {
        sink.on_message(MessageCompleted{id, protocol::DeltaKind::Text, text, std::nullopt});
        turn.text = text;
      }
      for (const auto& block : content != nullptr ? *content : json::array()) {
        if (native::string_or_empty(block, "type") != "toolCall") continue;
        json input = json::object();
        if (const auto* arguments = native::object_at(block, "arguments")) input = *arguments;
        const std::string tool = native::string_or_empty(block, "name");
        ToolStarted started{native::string_or_empty(block, "id"), tool, input, std::nullopt};
        started.diffs = file_diffs(tool, input);
        sink.on_tool_started(std::move(started));
      }
      const std::string stop = native::string_or_empty(*message, "stopReason");
      turn.stop_reason = stop == "error"     ? protocol::StopReason::Error
                         : stop == "aborted" ? protocol::StopReason::Cancelled
                                             : protocol::StopReason::EndTurn;
      turn.error = stop == "error" ? native::string_at(*message, "errorMessage") : std::nullopt;
    } else if (role == "toolResult") {
      sink.on_tool_completed(ToolCompleted{native::string_or_empty(*message, "toolCallId"), result_text(*message),
                                           native::bool_or(*message, "isError", false)});
    } else {
      ++stats.ignored;  // the system prompt, custom messages
    }
  }
  close_turn();
  return stats;
}

}  // namespace switchboard::adapters::pi
