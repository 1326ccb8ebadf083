#include "replay/ClaudeRecording.h"

namespace switchboard::adapters::replay {

using nlohmann::json;

namespace {

std::string string_field(const json& object, const char* key) {
  const auto it = object.find(key);
  return it != object.end() && it->is_string() ? it->get<std::string>() : std::string();
}

bool is_prompt(const json& message) { return string_field(message, "type") == "user"; }

bool is_initialize_answer(const json& message) {
  if (string_field(message, "type") != "control_response") return false;
  const auto response = message.find("response");
  return response != message.end() && response->is_object() && string_field(*response, "request_id").starts_with("init");
}

}  // namespace

std::variant<ClaudeRecording, std::string> read_claude_recording(std::istream& in) {
  ClaudeRecording recording;
  std::optional<RecordedTurn> turn;  // open from a prompt to its result
  std::string line;
  int number = 0;
  while (std::getline(in, line)) {
    ++number;
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    const json record = json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (!record.is_object() || !record.contains("msg") || !record["msg"].is_object() || !record.contains("t") ||
        !record["t"].is_number()) {
      return "line " + std::to_string(number) + " is not a recorded exchange line {\"dir\", \"t\", \"msg\"}";
    }
    const std::string direction = string_field(record, "dir");
    const json& message = record["msg"];
    if (direction == "to_cli") {
      if (is_prompt(message)) turn = RecordedTurn{};
      continue;
    }
    if (direction != "from_cli") continue;  // notes: the capture's own remarks
    if (is_initialize_answer(message)) {
      recording.initialize_response = message["response"].value("response", json::object());
      continue;
    }
    if (string_field(message, "type") == "system" && string_field(message, "subtype") == "init") {
      if (auto version = string_field(message, "claude_code_version"); !version.empty()) recording.version = version;
      if (auto cwd = string_field(message, "cwd"); !cwd.empty()) recording.recorded_cwd = cwd;
    }
    if (!turn) continue;  // before the first prompt: nothing a turn shows
    turn->lines.push_back(RecordedLine{record["t"].get<double>(), message});
    if (string_field(message, "type") == "result") {
      recording.turns.push_back(std::move(*turn));
      turn.reset();
    }
  }
  if (recording.turns.empty()) return std::string("the recording holds no complete turn (a prompt and its result)");
  if (recording.version.empty()) recording.version = "0.0.0";
  return recording;
}

}  // namespace switchboard::adapters::replay
