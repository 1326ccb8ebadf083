// fake_claude: a stand-in for `claude -p --input-format stream-json --output-format stream-json ...`, just
// faithful enough for the real Claude Code adapter, that streams text deltas at a steady rate. bench_relay runs
// it (as $SWITCHBOARD_CLAUDE_BIN under the daemon, or directly for the pipe floor).
//
//   fake_claude --version         prints "2.1.197 (Claude Code)" (the daemon's discovery probe)
//   fake_claude [any other args]  reads stream-json lines on stdin:
//     control_request (any subtype) -> a success control_response with the same request_id
//     user message                  -> one turn, shaped like the recordings in tests/fixtures/claude-code/:
//         system/init, system/status, stream_event message_start, content_block_start (text, index 0),
//         N content_block_delta text_delta lines, assistant, content_block_stop, message_delta,
//         message_stop, result/success
//   EOF on stdin ends the process (exit 0), as the CLI does.
//
// The turn is configured by the prompt's text: "deltas=N" (default 1000) and "rate=R" lines per second
// (default 10000; 0 = as fast as the pipe takes them). Lines are due on an absolute schedule (start + i/R);
// a line that is late is written at once, so the achieved rate is the asked one even after a preemption.
//
// Each delta's text is "relay:<CLOCK_MONOTONIC ns, 19 digits>:<index> ". The time is read right before the
// write() that sends the line, and every line goes out in one write() on the unbuffered descriptor, so the
// stamp is when the CLI wrote the line. The result's text reports the fake's own figures.

#include <sys/prctl.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cerrno>
#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <string>
#include <string_view>
#include <vector>

#include "BenchSupport.h"

namespace {

using bench::die;
using bench::kStampDigits;
using bench::monotonic_ns;

constexpr std::string_view kSessionId = "7e1a7e1a-0000-4000-8000-000000000001";
constexpr std::string_view kModel = "claude-opus-4-8[1m]";

// One write() for the whole line (a blocking pipe takes it in one call); loops only on a short write.
void write_line(std::string_view line) {
  while (!line.empty()) {
    const ssize_t n = ::write(STDOUT_FILENO, line.data(), line.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno == EPIPE) std::exit(0);  // the daemon went away
      die("write");
    }
    line.remove_prefix(static_cast<std::size_t>(n));
  }
}

// Blocking line reader on stdin; lines come without their '\n'.
class LineReader {
 public:
  bool next(std::string& line) {
    for (;;) {
      if (const auto nl = m_buffer.find('\n', m_begin); nl != std::string::npos) {
        line.assign(m_buffer, m_begin, nl - m_begin);
        m_begin = nl + 1;
        return true;
      }
      m_buffer.erase(0, m_begin);
      m_begin = 0;
      char chunk[65536];
      const ssize_t n = ::read(STDIN_FILENO, chunk, sizeof chunk);
      if (n < 0) {
        if (errno == EINTR) continue;
        die("read");
      }
      if (n == 0) return false;
      m_buffer.append(chunk, static_cast<std::size_t>(n));
    }
  }

 private:
  std::string m_buffer;
  std::size_t m_begin = 0;
};

// The string value of `"key":"..."` in a compact JSON line (no unescaping: ids are plain).
std::string string_field(std::string_view line, std::string_view key) {
  const std::string needle = "\"" + std::string(key) + "\":\"";
  const auto at = line.find(needle);
  if (at == std::string_view::npos) return {};
  const auto begin = at + needle.size();
  const auto end = line.find('"', begin);
  return end == std::string_view::npos ? std::string() : std::string(line.substr(begin, end - begin));
}

// The number after `name=` in the prompt, or `fallback`.
long long option(std::string_view line, std::string_view name, long long fallback) {
  const auto at = line.find(std::string(name) + "=");
  if (at == std::string_view::npos) return fallback;
  return std::strtoll(std::string(line.substr(at + name.size() + 1, 20)).c_str(), nullptr, 10);
}

std::string uuid(std::uint64_t n) {
  char text[40];
  std::snprintf(text, sizeof text, "7e1a0000-0000-4000-8000-%012" PRIx64, n & std::uint64_t{0xffffffffffff});
  return text;
}

double cpu_ms() {
  rusage usage{};
  ::getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) * 1e3 +
         static_cast<double>(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e3;
}

class FakeClaude {
 public:
  void on_control_request(std::string_view line) {
    const std::string id = string_field(line, "request_id");
    const std::string subtype = string_field(line, "subtype");
    std::string response = "{}";
    if (subtype == "initialize") {
      response = R"({"commands":[],"agents":[],"output_style":"default","available_output_styles":["default"],)"
                 R"("models":[],"account":{"tokenSource":"none","apiKeySource":"ANTHROPIC_API_KEY",)"
                 R"("apiProvider":"firstParty"},"pid":)" +
                 std::to_string(::getpid()) + "}";
    }
    write_line(R"({"type":"control_response","response":{"subtype":"success","request_id":")" + id +
               R"(","response":)" + response + "}}\n");
  }

  void on_user(std::string_view line) {
    const long long deltas = option(line, "deltas", 1000);
    const long long rate = option(line, "rate", 10000);
    ++m_turn;
    const std::string message_id = "msg_relay_" + std::to_string(m_turn);
    char cwd[4096];
    const std::string dir = ::getcwd(cwd, sizeof cwd) != nullptr ? cwd : "/";

    write_line(R"({"type":"system","subtype":"init","cwd":")" + dir + R"(","session_id":")" + std::string(kSessionId) +
               R"(","tools":["Task","AskUserQuestion","Bash","Edit","Read","Write"],"mcp_servers":[],"model":")" +
               std::string(kModel) +
               R"(","permissionMode":"default","slash_commands":[],"apiKeySource":"ANTHROPIC_API_KEY",)"
               R"("claude_code_version":"2.1.197","output_style":"default","agents":[],"skills":[],"plugins":[],)"
               R"("analytics_disabled":true,"product_feedback_disabled":true,"uuid":")" +
               next_uuid() + R"(","fast_mode_state":"off"})" + "\n");
    write_line(R"({"type":"system","subtype":"status","status":"requesting","uuid":")" + next_uuid() +
               R"(","session_id":")" + std::string(kSessionId) + "\"}\n");
    write_line(R"({"type":"stream_event","event":{"type":"message_start","message":{"id":")" + message_id +
               R"(","type":"message","role":"assistant","model":"claude-opus-4-8","content":[],"stop_reason":null,)"
               R"("stop_sequence":null,"usage":{"input_tokens":22274,"output_tokens":1,"cache_creation_input_tokens":0,)"
               R"("cache_read_input_tokens":0}}},"session_id":")" +
               std::string(kSessionId) + R"(","parent_tool_use_id":null,"uuid":")" + next_uuid() + R"(","ttft_ms":23})" +
               "\n");
    write_line(R"({"type":"stream_event","event":{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}},"session_id":")" +
               std::string(kSessionId) + R"(","parent_tool_use_id":null,"uuid":")" + next_uuid() + "\"}\n");

    const double cpu_before = cpu_ms();
    const std::int64_t start = monotonic_ns();
    std::int64_t late = 0;  // lines written more than 1 ms after they were due
    std::int64_t last_stamp = start;
    char line_buffer[512];
    for (long long i = 0; i < deltas; ++i) {
      if (rate > 0) {
        const std::int64_t due = start + static_cast<std::int64_t>(static_cast<double>(i) * 1e9 / static_cast<double>(rate));
        if (monotonic_ns() < due) {
          const timespec at{static_cast<time_t>(due / 1'000'000'000), static_cast<long>(due % 1'000'000'000)};
          while (::clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &at, nullptr) == EINTR) {
          }
        } else if (monotonic_ns() - due > 1'000'000) {
          ++late;
        }
      }
      // The line is formatted with a placeholder first; the stamp is patched in right before the write().
      const int length = std::snprintf(
          line_buffer, sizeof line_buffer,
          R"({"type":"stream_event","event":{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"relay:%0*d:%lld "}},"session_id":"%.*s","parent_tool_use_id":null,"uuid":"%s"})"
          "\n",
          kStampDigits, 0, i, static_cast<int>(kSessionId.size()), kSessionId.data(), next_uuid().c_str());
      if (length <= 0 || static_cast<std::size_t>(length) >= sizeof line_buffer) die("format");
      char* stamp_at = std::strstr(line_buffer, "relay:") + 6;
      char digits[kStampDigits + 1];
      last_stamp = monotonic_ns();
      std::snprintf(digits, sizeof digits, "%0*" PRId64, kStampDigits, last_stamp);
      std::memcpy(stamp_at, digits, kStampDigits);
      write_line(std::string_view(line_buffer, static_cast<std::size_t>(length)));
    }
    const double seconds = static_cast<double>(last_stamp - start) / 1e9;
    const double cpu = cpu_ms() - cpu_before;

    char summary[300];
    std::snprintf(summary, sizeof summary,
                  "fake_claude: %lld deltas in %.3f s (%.0f lines/s, asked %lld), %" PRId64
                  " written >1 ms late, %.1f ms CPU (%.2f us/line)",
                  deltas, seconds, seconds > 0 ? static_cast<double>(deltas - 1) / seconds : 0.0, rate, late, cpu,
                  deltas > 0 ? cpu * 1e3 / static_cast<double>(deltas) : 0.0);
    const std::string text = summary;
    write_line(R"({"type":"assistant","message":{"id":")" + message_id +
               R"(","type":"message","role":"assistant","model":"claude-opus-4-8","content":[{"type":"text","text":")" + text +
               R"("}],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":22274,"output_tokens":1,)"
               R"("cache_creation_input_tokens":0,"cache_read_input_tokens":0},"context_management":null},)"
               R"("parent_tool_use_id":null,"session_id":")" +
               std::string(kSessionId) + R"(","uuid":")" + next_uuid() + R"(","request_id":"req_relay_)" +
               std::to_string(m_turn) + "\"}\n");
    write_line(R"({"type":"stream_event","event":{"type":"content_block_stop","index":0},"session_id":")" +
               std::string(kSessionId) + R"(","parent_tool_use_id":null,"uuid":")" + next_uuid() + "\"}\n");
    write_line(R"({"type":"stream_event","event":{"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":)" +
               std::to_string(deltas) + R"(}},"session_id":")" + std::string(kSessionId) +
               R"(","parent_tool_use_id":null,"uuid":")" + next_uuid() + "\"}\n");
    write_line(R"({"type":"stream_event","event":{"type":"message_stop"},"session_id":")" + std::string(kSessionId) +
               R"(","parent_tool_use_id":null,"uuid":")" + next_uuid() + "\"}\n");
    write_line(R"({"type":"result","subtype":"success","is_error":false,"api_error_status":null,"duration_ms":)" +
               std::to_string(static_cast<long long>(seconds * 1e3)) +
               R"(,"duration_api_ms":0,"num_turns":1,"result":")" + text +
               R"(","stop_reason":"end_turn","session_id":")" + std::string(kSessionId) +
               R"(","total_cost_usd":0,"usage":{"input_tokens":22274,"cache_creation_input_tokens":0,)"
               R"("cache_read_input_tokens":0,"output_tokens":)" +
               std::to_string(deltas) +
               R"(,"service_tier":"standard"},"modelUsage":{},"permission_denials":[],"terminal_reason":"completed",)"
               R"("fast_mode_state":"off","uuid":")" +
               next_uuid() + "\"}\n");
  }

 private:
  std::string next_uuid() { return uuid(++m_uuid); }

  std::uint64_t m_uuid = 0;
  long long m_turn = 0;
};

}  // namespace

int main(int argc, char** argv) {
  bench::g_program = "fake_claude";
  for (int i = 1; i < argc; ++i) {
    if (std::string_view(argv[i]) == "--version") {
      std::printf("2.1.197 (Claude Code)\n");
      return 0;
    }
  }
  // Sleeps end on time (the default timer slack is 50 us, half a 10k/s period).
  (void)::prctl(PR_SET_TIMERSLACK, 1UL, 0UL, 0UL, 0UL);
  FakeClaude fake;
  LineReader reader;
  std::string line;
  while (reader.next(line)) {
    if (line.find(R"("type":"control_request")") != std::string::npos) {
      fake.on_control_request(line);
    } else if (line.find(R"("type":"user")") != std::string::npos) {
      fake.on_user(line);
    }
    // Anything else (control responses to requests we never make) is ignored.
  }
  return 0;
}
