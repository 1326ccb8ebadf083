#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>

#include "client/RpcConnection.h"
#include "run/RunExitCode.h"
#include "run/RunOptions.h"
#include "run/RunOutput.h"
#include "run/RunRecorder.h"

namespace switchboard::run {

// One headless turn, as a client of the daemon's JSON-RPC protocol (the same calls and events every client
// uses; it knows no engine): initialize, find or create the session, put the --allow/--deny rules in force,
// send the prompt and follow its events to the end of the turn, answering asks by the --on-ask policy; then
// print the result and hand back the exit code. Whether the daemon is the user's (attached) or one in this
// process makes no difference here: both are a connected socket.
//
// Limits and interruptions (the timeouts, a signal, --on-ask fail) cancel the turn (session.cancel) and wait a
// bounded time for it to end, so the result still has what the turn did. `done` runs once, after the result
// was written, with the exit code; the connection is half-closed by then (an in-process daemon takes that as
// its end).
class HeadlessRun {
 public:
  HeadlessRun(boost::asio::io_context& io, RunOptions options, bool attached, int socket_fd,
              std::unique_ptr<RunOutput> output, std::function<void(int exit_code)> done);
  ~HeadlessRun();
  HeadlessRun(const HeadlessRun&) = delete;
  HeadlessRun& operator=(const HeadlessRun&) = delete;

  void start();
  // Runs once the daemon has answered initialize (so its transport reads the connection).
  void on_initialized(std::function<void()> callback) { m_on_initialized = std::move(callback); }
  // SIGINT or SIGTERM: cancel the turn, then finish with 130 or 143.
  void interrupt(int signal);
  bool finished() const { return m_finished; }
  // The run cannot go on (its daemon did not start): finish with `code` and `why` as its error.
  void abandon(RunExitCode code, std::string why);

 private:
  using Json = nlohmann::json;

  void initialized(const Json& response);
  void find_session();
  // The session was there before the run (--session, --continue) or is a fork of one (--fork): its model is
  // this turn's only, its mode is changed before the prompt.
  bool continued() const { return m_options.session_id || m_options.continue_newest || m_options.fork_of; }
  void on_session(const Json& response);
  void add_rules(std::size_t next);
  void send_prompt();
  void on_sent(const Json& response);
  void on_event(std::string_view text, const Json& envelope);
  void answer_ask(const std::string& type, const Json& request);
  void arm_idle_timer();
  // Ends the turn early (a limit, a signal, a failed ask): cancels it and finishes once it ended, or after
  // a bounded wait.
  void stop_turn(RunExitCode code, std::string why);
  // The exit code of a turn that ended on its own.
  RunExitCode code_of_ended_turn() const;
  // A call failed before the turn: the code its error stands for.
  RunExitCode code_of_error(const Json& error) const;
  void fail_with(const Json& response, std::string_view what);
  void finish(RunExitCode code);

  boost::asio::io_context& m_io;
  RunOptions m_options;
  bool m_attached;
  std::unique_ptr<RunOutput> m_output;
  std::function<void(int)> m_done;
  std::function<void()> m_on_initialized;
  client::RpcConnection m_connection;
  RunRecorder m_recorder;
  boost::asio::steady_timer m_timeout;
  boost::asio::steady_timer m_idle;
  boost::asio::steady_timer m_cancel_grace;
  std::chrono::steady_clock::time_point m_started = std::chrono::steady_clock::now();
  std::vector<std::string> m_rule_ids;
  // Events that arrived before the daemon named the session (session.created comes before the reply): shown
  // once it is known, if they are its. Bounded: an attached run may see a busy daemon's other sessions.
  std::vector<std::pair<std::string, Json>> m_before_session;
  bool m_sent = false;
  std::optional<RunExitCode> m_stopping;  // why the turn is being cut short
  bool m_finished = false;
};

}  // namespace switchboard::run
