#pragma once

#include <chrono>
#include <map>
#include <string>

#include <boost/asio/steady_timer.hpp>

#include "run/RunOutput.h"

namespace switchboard::run {

// --output text: the final message on stdout (nothing else goes there, so `$(switchboard run …)` is the
// answer), progress on stderr. On a terminal, a live transcript: the answer as it streams, each tool call with
// the start of its output, permission decisions, and a spinner while the agent works; colours only there, and
// never with NO_COLOR. Elsewhere (a CI log), one plain line per tool call and decision.
class TextOutput final : public RunOutput {
 public:
  TextOutput(boost::asio::io_context& io, OutputStreams streams);
  ~TextOutput() override;
  void on_event(std::string_view envelope_text, const nlohmann::json& envelope) override;
  void on_note(std::string_view note) override;
  void on_result(const protocol::RunResult& result) override;

 private:
  // Progress text to stderr: erases the spinner first and remembers whether the line is open.
  void progress(std::string_view text);
  void end_line();
  std::string paint(std::string_view colour, std::string_view text) const;
  void tick();

  OutputStreams m_streams;
  boost::asio::steady_timer m_spinner;
  bool m_line_open = false;       // the last progress text did not end with a newline
  bool m_spinner_shown = false;
  bool m_finished = false;
  unsigned m_frame = 0;
  std::chrono::steady_clock::time_point m_last_output = std::chrono::steady_clock::now();
  std::map<std::string, std::string> m_tool_names;  // toolCallId → tool, for the completion line
};

// The short form of a tool's input a person reads: the command, the path, the pattern (else nothing), cut to
// one line of at most `width` characters.
std::string tool_summary(const nlohmann::json& input, std::size_t width = 80);

}  // namespace switchboard::run
