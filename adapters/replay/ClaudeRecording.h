#pragma once

#include <istream>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include <nlohmann/json.hpp>

namespace switchboard::adapters::replay {

// A recorded exchange with Claude Code, as the capture tools under tests/fixtures/claude-code/ write it
// (recorded-exchange-*.ndjson): one record per line, {"dir": "to_cli" | "from_cli" | "note", "t": seconds since
// the start, "msg": the line}. What the replay needs of it: the answer to `initialize`, and what the CLI wrote
// after each prompt up to that turn's `result`, with its timing.

struct RecordedLine {
  double at = 0;         // seconds since the recording started
  nlohmann::json message;
};

// The CLI's lines after one prompt, through the turn's `result`.
struct RecordedTurn {
  std::vector<RecordedLine> lines;
};

struct ClaudeRecording {
  nlohmann::json initialize_response = nlohmann::json::object();  // the `response` of its control_response
  std::string version;       // system/init's claude_code_version, else "0.0.0"
  std::string recorded_cwd;  // system/init's cwd: the replay writes the session's own directory instead
  std::vector<RecordedTurn> turns;
};

// The recording in `in`, or why it cannot be replayed (not NDJSON records, or no complete turn). Lines that are
// not records are an error: a replay of half a file would mislead whoever watches it.
std::variant<ClaudeRecording, std::string> read_claude_recording(std::istream& in);

}  // namespace switchboard::adapters::replay
