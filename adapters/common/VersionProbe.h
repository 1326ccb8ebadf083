#pragma once

#include <chrono>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>

#include "switchboard/protocol/generated/Types.h"

namespace switchboard::process {
class ChildProcess;
}

namespace switchboard::adapters {

// Discovery of a CLI agent: its executable is looked up on PATH at once (agents.list must not wait, and a
// session needs the path), and `<executable> --version` runs in the background with a deadline once asked to
// (run()), filling in the version, or the problem when the binary does not run. What agents.list reports is
// info(), at any moment.
struct VersionProbeSpec {
  std::string agent;       // "claude": the AgentInfo's name and the log lines' prefix
  std::string executable;  // a path, or a name looked up on PATH
  std::vector<std::string> leading_arguments;  // before `--version`: a stand-in's own (the replay agent's)
  // What to tell a user whose executable is missing, after "'<executable>' not found ".
  std::string install_hint;
  // The version in the probe's stdout; none when the output is not a version.
  std::function<std::optional<std::string>(std::string_view output)> parse_version;
  protocol::AgentCapabilities capabilities;
  // The session modes clients may offer (agents.list); empty: not listed.
  std::vector<std::string> modes;
  std::chrono::milliseconds timeout{20000};  // a probe that hangs is killed; its exit reports the problem
};

class VersionProbe : public std::enable_shared_from_this<VersionProbe> {
 public:
  // Looks the executable up; runs nothing yet. Keep the pointer: a probe started later ends with the last one.
  static std::shared_ptr<VersionProbe> locate(boost::asio::io_context& io, VersionProbeSpec spec);
  // locate(), then run() at once.
  static std::shared_ptr<VersionProbe> start(boost::asio::io_context& io, VersionProbeSpec spec);
  VersionProbe(boost::asio::io_context& io, VersionProbeSpec spec);
  ~VersionProbe();

  // Starts `--version` in the background when the executable was found; once: later calls (and calls after
  // stop()) do nothing.
  void run();

  const protocol::AgentInfo& info() const { return m_info; }
  // The executable as found on PATH (an absolute path), or as configured when it was not found.
  const std::string& executable() const { return m_executable; }
  // Kills a probe still running (daemon shutdown); info() then says it did not finish.
  void stop();

 private:
  void find();
  void on_exit(const std::string& status, bool success);

  boost::asio::io_context& m_io;
  VersionProbeSpec m_spec;
  protocol::AgentInfo m_info;
  std::string m_executable;
  std::unique_ptr<process::ChildProcess> m_probe;
  bool m_stopped = false;  // stop() was called: a probe killed now is not a failure to report
  bool m_ran = false;      // run() was called
  boost::asio::steady_timer m_deadline;
  std::string m_output;
};

// What a user whose `<agent>` executable is missing is told: how to install it, and the key that names it
// (agents.<agent>.bin, its flag --<agent>-bin and its variable SWITCHBOARD_<AGENT>_BIN, by the registry's naming).
std::string install_hint(std::string_view agent);

// `<executable> [leading arguments] --version`.
std::vector<std::string> version_command(const std::string& executable, const std::vector<std::string>& leading_arguments = {});

}  // namespace switchboard::adapters
