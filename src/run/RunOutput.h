#pragma once

#include <memory>
#include <string>
#include <string_view>

#include <boost/asio/io_context.hpp>
#include <nlohmann/json.hpp>

#include "run/RunOptions.h"
#include "switchboard/protocol/generated/Types.h"
#include "switchboard/transport/FdWriter.h"

namespace switchboard::run {

// Where a run's output goes. Both are FdWriters, so a slow or closed reader (`| head`) never blocks the
// reactor, and a closed one only discards what follows.
struct OutputStreams {
  std::shared_ptr<transport::FdWriter> out;  // stdout
  std::shared_ptr<transport::FdWriter> err;  // stderr
  bool err_is_terminal = false;              // a live transcript with a spinner, rather than plain lines
  bool colour = false;                       // stderr is a terminal and NO_COLOR is not set
};

// How a run shows itself (--output): text, json or ndjson. Events arrive as the daemon sent them (exact
// bytes and parsed), only those of the run's session; the result comes last, once.
class RunOutput {
 public:
  virtual ~RunOutput() = default;
  virtual void on_event(std::string_view envelope_text, const nlohmann::json& envelope) = 0;
  // A line about the run itself (where it runs, a decision it made, why it stops); text output shows it.
  virtual void on_note(std::string_view note) = 0;
  virtual void on_result(const protocol::RunResult& result) = 0;
};

std::unique_ptr<RunOutput> make_output(boost::asio::io_context& io, OutputFormat format, OutputStreams streams);

// Whether that output shows text as the agent writes it (message.delta events): ndjson passes every event on,
// text streams the answer when stderr is a terminal, json prints the result only.
bool shows_streamed_text(OutputFormat format, bool err_is_terminal);

// The result as one line of JSON (what --output json prints; the data of ndjson's last line).
std::string encode_result(const protocol::RunResult& result);

}  // namespace switchboard::run
