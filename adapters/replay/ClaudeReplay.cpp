#include "replay/ClaudeReplay.h"

#include <poll.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <optional>
#include <random>
#include <string>
#include <string_view>

#include "replay/ClaudeRecording.h"

namespace switchboard::adapters::replay {

using nlohmann::json;
using Clock = std::chrono::steady_clock;

namespace {

struct Options {
  std::string recording;
  long slowdown = 1;
  bool version = false;
  std::optional<std::string> resume;
};

std::optional<Options> parse_options(int argc, char** argv) {
  Options options;
  for (int i = 2; i < argc; ++i) {
    const std::string_view arg = argv[i];
    const bool has_value = i + 1 < argc;
    if (arg == "--recording" && has_value) {
      options.recording = argv[++i];
    } else if (arg == "--slowdown" && has_value) {
      options.slowdown = std::strtol(argv[++i], nullptr, 10);
      if (options.slowdown < 1) return std::nullopt;
    } else if (arg == "--resume" && has_value) {
      options.resume = argv[++i];
    } else if (arg == "--version") {
      options.version = true;
    }  // Claude Code's other flags (--model, --permission-mode, ...) change nothing in a replay
  }
  if (options.recording.empty()) return std::nullopt;
  return options;
}

std::string random_session_id() {
  std::random_device device;
  std::uniform_int_distribution<int> hex(0, 15);
  std::string id = "xxxxxxxx-xxxx-4xxx-8xxx-xxxxxxxxxxxx";
  for (char& c : id) {
    if (c == 'x') c = "0123456789abcdef"[hex(device)];
  }
  return id;
}

// stdin as lines, with a deadline: the recording's pace is kept while the adapter may write at any moment.
class InputLines {
 public:
  enum class Status { Line, Timeout, End };

  Status next(std::string& line, std::optional<Clock::time_point> deadline) {
    for (;;) {
      if (const auto end = m_buffer.find('\n'); end != std::string::npos) {
        line = m_buffer.substr(0, end);
        m_buffer.erase(0, end + 1);
        return Status::Line;
      }
      if (m_closed) return Status::End;
      int timeout_ms = -1;
      if (deadline) {
        const auto left = std::chrono::ceil<std::chrono::milliseconds>(*deadline - Clock::now()).count();
        if (left <= 0) return Status::Timeout;
        timeout_ms = static_cast<int>(left);
      }
      pollfd in{STDIN_FILENO, POLLIN, 0};
      const int ready = ::poll(&in, 1, timeout_ms);
      if (ready < 0 && errno == EINTR) continue;
      if (ready == 0) return Status::Timeout;
      char chunk[65536];
      const ssize_t got = ::read(STDIN_FILENO, chunk, sizeof chunk);
      if (got < 0 && errno == EINTR) continue;
      if (got <= 0) {
        m_closed = true;
        continue;
      }
      m_buffer.append(chunk, static_cast<std::size_t>(got));
    }
  }

 private:
  std::string m_buffer;
  bool m_closed = false;
};

class Replay {
 public:
  Replay(ClaudeRecording recording, long slowdown, std::string session_id, std::string cwd)
      : m_recording(std::move(recording)), m_slowdown(slowdown), m_session_id(std::move(session_id)) {
    // Paths in the recording name the directory it was made in; the replay names the session's own.
    if (!m_recording.recorded_cwd.empty()) {
      m_recorded_cwd = quoted_inside(m_recording.recorded_cwd);
      m_cwd = quoted_inside(cwd);
    }
  }

  int run() {
    std::string line;
    for (;;) {
      if (m_prompts_waiting > 0) {
        --m_prompts_waiting;
        if (!play(next_turn())) return 0;
        continue;
      }
      if (m_input.next(line, std::nullopt) != InputLines::Status::Line) return 0;
      if (handle(line) == Input::Interrupt) write_interrupted();  // nothing was running: Claude Code answers so too
    }
  }

 private:
  enum class Input { Other, Prompt, Interrupt, Answer };

  static std::string quoted_inside(const std::string& text) {
    const auto quoted = json(text).dump();
    return quoted.substr(1, quoted.size() - 2);
  }

  const RecordedTurn& next_turn() { return m_recording.turns[m_turns_played++ % m_recording.turns.size()]; }

  void write(json message) {
    if (message.contains("session_id")) message["session_id"] = m_session_id;
    std::string text = message.dump();
    if (!m_recorded_cwd.empty()) {
      for (auto at = text.find(m_recorded_cwd); at != std::string::npos; at = text.find(m_recorded_cwd, at + m_cwd.size())) {
        text.replace(at, m_recorded_cwd.size(), m_cwd);
      }
    }
    text += '\n';
    std::fwrite(text.data(), 1, text.size(), stdout);
    std::fflush(stdout);
  }

  void answer(const std::string& request_id, json response) {
    write(json{{"type", "control_response"},
               {"response", {{"subtype", "success"}, {"request_id", request_id}, {"response", std::move(response)}}}});
  }

  // One line from the adapter: control requests are answered at once; prompts wait for their turn.
  Input handle(const std::string& line) {
    const json message = json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (!message.is_object()) return Input::Other;
    const std::string type = message.value("type", "");
    if (type == "user") {
      ++m_prompts_waiting;
      return Input::Prompt;
    }
    if (type == "control_response") {
      m_last_answer = message.contains("response") && message["response"].is_object()
                          ? message["response"].value("request_id", "")
                          : std::string();
      return Input::Answer;
    }
    if (type != "control_request") return Input::Other;
    const std::string id = message.value("request_id", "");
    const std::string subtype = message.contains("request") && message["request"].is_object() ? message["request"].value("subtype", "") : "";
    answer(id, subtype == "initialize" ? m_recording.initialize_response : json::object());
    return subtype == "interrupt" ? Input::Interrupt : Input::Other;
  }

  void write_interrupted() {
    write(json{{"type", "result"}, {"subtype", "error_during_execution"}, {"is_error", true}, {"num_turns", 1},
               {"session_id", m_session_id}, {"result", ""}});
  }

  // Plays one turn; false when stdin closed (the adapter is gone).
  bool play(const RecordedTurn& turn) {
    auto started = Clock::now();
    const double first = turn.lines.front().at;
    std::string line;
    for (const auto& recorded : turn.lines) {
      const auto due = started + std::chrono::duration_cast<Clock::duration>(
                                     std::chrono::duration<double>((recorded.at - first) * static_cast<double>(m_slowdown)));
      for (;;) {
        const auto status = m_input.next(line, due);
        if (status == InputLines::Status::End) return false;
        if (status == InputLines::Status::Timeout) break;
        if (handle(line) == Input::Interrupt) return write_interrupted(), true;
      }
      write(recorded.message);
      if (recorded.message.value("type", "") != "control_request") continue;
      // A permission request: the recording goes on once the adapter has answered it.
      const std::string asked = recorded.message.value("request_id", "");
      const auto waiting_since = Clock::now();
      for (m_last_answer.clear(); m_last_answer != asked;) {
        if (m_input.next(line, std::nullopt) != InputLines::Status::Line) return false;
        if (handle(line) == Input::Interrupt) return write_interrupted(), true;
      }
      started += Clock::now() - waiting_since;  // the wait for a person is not the recording's
    }
    return true;
  }

  ClaudeRecording m_recording;
  long m_slowdown;
  std::string m_session_id;
  std::string m_recorded_cwd;  // JSON-escaped, without quotes
  std::string m_cwd;
  InputLines m_input;
  std::size_t m_turns_played = 0;
  int m_prompts_waiting = 0;
  std::string m_last_answer;  // request_id of the last control_response the adapter sent
};

}  // namespace

int run_replay_claude(int argc, char** argv) {
  const auto options = parse_options(argc, argv);
  if (!options) {
    std::fprintf(stderr, "switchboard %s: usage: --recording FILE [--slowdown N>=1] [Claude Code's flags]\n", kReplayClaudeCommand);
    return 2;
  }
  std::ifstream in(options->recording);
  if (!in) {
    std::fprintf(stderr, "switchboard %s: cannot read %s\n", kReplayClaudeCommand, options->recording.c_str());
    return 1;
  }
  auto read = read_claude_recording(in);
  if (auto* why = std::get_if<std::string>(&read)) {
    std::fprintf(stderr, "switchboard %s: %s: %s\n", kReplayClaudeCommand, options->recording.c_str(), why->c_str());
    return 1;
  }
  auto& recording = std::get<ClaudeRecording>(read);
  if (options->version) {
    std::printf("%s (Claude Code, replayed by switchboard)\n", recording.version.c_str());
    return 0;
  }
  std::error_code ignored;
  const auto cwd = std::filesystem::current_path(ignored).string();
  Replay replay(std::move(recording), options->slowdown, options->resume.value_or(random_session_id()), cwd);
  return replay.run();
}

}  // namespace switchboard::adapters::replay
