#include "run/TextOutput.h"

#include <iterator>
#include <sstream>

namespace switchboard::run {
namespace {

constexpr auto kSpinnerPeriod = std::chrono::milliseconds(100);
// The spinner appears only once the agent has been quiet this long, so streamed text does not flicker.
constexpr auto kSpinnerDelay = std::chrono::milliseconds(300);
constexpr std::size_t kToolOutputLines = 4;
constexpr std::string_view kFrames[] = {"⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"};

constexpr std::string_view kCyan = "\033[36m";
constexpr std::string_view kDim = "\033[2m";
constexpr std::string_view kRed = "\033[31m";
constexpr std::string_view kGreen = "\033[32m";
constexpr std::string_view kYellow = "\033[33m";

std::string string_at(const nlohmann::json& object, const char* key) {
  const auto it = object.find(key);
  return it != object.end() && it->is_string() ? it->get<std::string>() : std::string();
}

std::string one_line(std::string text, std::size_t width) {
  for (auto& c : text) {
    if (c == '\n' || c == '\r' || c == '\t') c = ' ';
  }
  if (text.size() > width) text = text.substr(0, width) + "…";
  return text;
}

}  // namespace

std::string tool_summary(const nlohmann::json& input, std::size_t width) {
  if (!input.is_object()) return {};
  for (const char* key : {"command", "file_path", "path", "pattern", "url", "query", "description"}) {
    const auto value = string_at(input, key);
    if (!value.empty()) return one_line(value, width);
  }
  return {};
}

TextOutput::TextOutput(boost::asio::io_context& io, OutputStreams streams) : m_streams(std::move(streams)), m_spinner(io) {
  if (m_streams.err_is_terminal) tick();
}

TextOutput::~TextOutput() { m_spinner.cancel(); }

std::string TextOutput::paint(std::string_view colour, std::string_view text) const {
  if (!m_streams.colour) return std::string(text);
  return std::string(colour) + std::string(text) + "\033[0m";
}

void TextOutput::progress(std::string_view text) {
  if (text.empty()) return;
  if (m_spinner_shown) {
    m_streams.err->write("\r\033[K");
    m_spinner_shown = false;
  }
  m_streams.err->write(text);
  m_line_open = text.back() != '\n';
  m_last_output = std::chrono::steady_clock::now();
}

void TextOutput::end_line() {
  if (m_line_open) progress("\n");
}

void TextOutput::tick() {
  if (m_finished) return;
  const bool quiet = std::chrono::steady_clock::now() - m_last_output >= kSpinnerDelay;
  if (quiet && !m_line_open) {
    m_frame = (m_frame + 1) % std::size(kFrames);
    m_streams.err->write("\r", paint(kDim, std::string(kFrames[m_frame]) + " working"), "\033[K");
    m_spinner_shown = true;
  }
  m_spinner.expires_after(kSpinnerPeriod);
  m_spinner.async_wait([this](const boost::system::error_code& error) {
    if (!error) tick();
  });
}

void TextOutput::on_event(std::string_view, const nlohmann::json& envelope) {
  const auto type = string_at(envelope, "type");
  const auto it = envelope.find("data");
  if (it == envelope.end() || !it->is_object()) return;
  const auto& data = *it;
  const bool live = m_streams.err_is_terminal;
  if (type == "message.delta") {
    // The answer as it streams (a terminal only: in a log it would be the answer twice, stdout has it).
    if (live && string_at(data, "kind") == "text" && !data.contains("parentToolCallId")) progress(string_at(data, "text"));
  } else if (type == "tool.started") {
    const auto tool = string_at(data, "tool");
    m_tool_names[string_at(data, "toolCallId")] = tool;
    const auto summary = tool_summary(data.value("input", nlohmann::json::object()));
    end_line();
    progress(paint(kCyan, "▸ " + tool) + (summary.empty() ? "" : " " + summary) + "\n");
  } else if (type == "tool.completed") {
    const bool failed = data.value("isError", false);
    const auto tool = m_tool_names[string_at(data, "toolCallId")];
    end_line();
    if (!live) {
      progress("  " + tool + (failed ? " failed\n" : " done\n"));
      return;
    }
    std::istringstream lines(string_at(data, "output"));
    std::string line;
    std::string shown;
    std::size_t count = 0;
    while (std::getline(lines, line)) {
      if (count++ < kToolOutputLines) shown += "  " + one_line(line, 100) + "\n";
    }
    if (count > kToolOutputLines) shown += "  … " + std::to_string(count - kToolOutputLines) + " more lines\n";
    if (shown.empty() && failed) shown = "  (failed)\n";
    progress(paint(failed ? kRed : kDim, shown));
  } else if (type == "permission.resolved") {
    const auto outcome = string_at(data, "outcome");
    const auto by = string_at(data, "resolvedBy");
    end_line();
    progress(paint(outcome == "allowed" ? kGreen : kYellow, "  permission " + outcome + " (" + by + ")") + "\n");
  } else if (type == "turn.stopped") {
    end_line();
  }
}

void TextOutput::on_note(std::string_view note) {
  end_line();
  progress(paint(kDim, "switchboard: " + std::string(note)) + "\n");
}

void TextOutput::on_result(const protocol::RunResult& result) {
  m_finished = true;
  m_spinner.cancel();
  end_line();
  if (m_spinner_shown) {
    m_streams.err->write("\r\033[K");
    m_spinner_shown = false;
  }
  for (const auto& error : result.errors) progress(paint(kRed, "error: " + error) + "\n");
  std::ostringstream summary;
  summary << to_string(result.status) << " (exit " << result.exit_code << ") in " << result.duration_ms << " ms";
  if (!result.tools.empty()) summary << ", " << result.tools.size() << " tool call(s)";
  if (!result.permissions.empty()) summary << ", " << result.permissions.size() << " permission request(s)";
  if (result.session_id) summary << "; session " << *result.session_id;
  if (result.worktree) summary << "; branch " << result.worktree->branch << " in " << result.worktree->path;
  progress(paint(result.exit_code == 0 ? kDim : kYellow, "switchboard: " + summary.str()) + "\n");
  if (!result.text.empty()) {
    m_streams.out->write(result.text, result.text.back() == '\n' ? "" : "\n", {});
  }
}

}  // namespace switchboard::run
