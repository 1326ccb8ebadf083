#include "pi/PiRuntime.h"

#include <charconv>

#include <boost/asio/post.hpp>
#include <spdlog/spdlog.h>

#include "common/EnvironmentVariable.h"
#include "common/VersionProbe.h"
#include "pi/PiAdapter.h"
#include "pi/PiPermissions.h"
#include "switchboard/process/ChildProcess.h"
#include "switchboard/process/ExecutableLookup.h"

namespace switchboard::adapters::pi {
namespace {

namespace fs = std::filesystem;

constexpr std::chrono::seconds kProbeTimeout{20};

std::string trimmed(std::string text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r' || text.back() == ' ')) text.pop_back();
  return text;
}

protocol::AgentCapabilities capabilities() { return PiAdapter::static_capabilities(); }

}  // namespace

std::optional<std::vector<int>> node_version(std::string_view output) {
  while (!output.empty() && (output.back() == '\n' || output.back() == '\r' || output.back() == ' ')) output.remove_suffix(1);
  if (output.empty() || output.front() != 'v') return std::nullopt;
  output.remove_prefix(1);
  std::vector<int> parts;
  while (!output.empty()) {
    int part = 0;
    const auto [end, error] = std::from_chars(output.data(), output.data() + output.size(), part);
    if (error != std::errc() || end == output.data()) return std::nullopt;
    parts.push_back(part);
    output.remove_prefix(static_cast<std::size_t>(end - output.data()));
    if (output.empty()) break;
    if (output.front() != '.') return std::nullopt;
    output.remove_prefix(1);
  }
  if (parts.size() != 3) return std::nullopt;
  return parts;
}

bool node_runs_pi(const std::vector<int>& version) {
  for (std::size_t i = 0; i < 3 && i < version.size(); ++i) {
    if (version[i] != kMinimumNode[i]) return version[i] > kMinimumNode[i];
  }
  return true;
}

PiRuntime::PiRuntime(boost::asio::io_context& io, PiConfig config) : m_io(io), m_config(std::move(config)), m_deadline(io) {
  m_info.agent = "pi";
  m_info.capabilities = capabilities();
  m_info.modes = std::vector<std::string>(kModes.begin(), kModes.end());
}

// The ChildProcess kills a probe still running.
PiRuntime::~PiRuntime() = default;

void PiRuntime::locate() {
  auto found = process::find_executable(m_config.executable, executable_search_path(), {});
  if (!found) {
    m_info.installed = false;
    m_info.problem = "'" + m_config.executable + "' not found " + install_hint("pi");
    return finish(std::nullopt, *m_info.problem);
  }
  m_script = found->string();
  m_info.installed = true;
  m_info.path = m_script;
}

void PiRuntime::begin_discovery() {
  if (m_begun || m_done) return;
  m_begun = true;
  const std::string search_path = executable_search_path();
  if (m_config.node) {
    m_candidates.push_back(*m_config.node);
  } else {
    if (auto system = process::find_executable("node", search_path, {})) m_candidates.push_back(system->string());
    // Not the symlink's target: npm's .bin holds links to both, and the Node's link is what is beside Pi's.
    const auto beside = fs::path(m_script).parent_path() / "node";
    std::error_code error;
    if (fs::exists(beside, error) && (m_candidates.empty() || m_candidates.front() != beside.string())) {
      m_candidates.push_back(beside.string());
    }
  }
  try_node(0);
}

void PiRuntime::try_node(std::size_t index) {
  if (index >= m_candidates.size()) {
    std::string problem = "Pi needs Node >= 22.19 to run; ";
    if (m_rejected.empty()) problem += "none was found";
    for (std::size_t i = 0; i < m_rejected.size(); ++i) problem += (i == 0 ? "found " : ", ") + m_rejected[i];
    problem += " " + install_hint("pi") + ", or set agents.pi.node";
    m_info.installed = false;
    m_info.problem = problem;
    return finish(std::nullopt, problem);
  }
  const std::string node = m_candidates[index];
  probe({node, "--version"}, [this, index, node](bool ok, const std::string& output) {
    const auto version = node_version(output);
    if (ok && version && node_runs_pi(*version)) return probe_pi(node, trimmed(output));
    m_rejected.push_back(node + (version ? " " + trimmed(output) : " (no version)"));
    try_node(index + 1);
  });
}

void PiRuntime::probe_pi(const std::string& node, const std::string& node_version_text) {
  m_info.runtime = protocol::AgentRuntimeInfo{"node", node_version_text, node};
  probe({node, m_script, "--version"}, [this, node](bool ok, const std::string& output) {
    const std::string version = trimmed(output);
    if (!ok || version.empty() || version.find_first_not_of("0123456789.") != std::string::npos) {
      m_info.installed = false;
      m_info.problem = "'" + node + " " + m_script + " --version' failed";
      return finish(std::nullopt, *m_info.problem);
    }
    m_info.version = version;
    spdlog::info("pi: {} version {} on node {} ({})", m_script, version, m_info.runtime->version.value_or("?"), node);
    finish(PiLauncher{node, m_script}, {});
  });
}

void PiRuntime::probe(std::vector<std::string> argv, std::function<void(bool, const std::string&)> done) {
  if (m_stopped) return;  // a probe killed at shutdown must not lead to the next candidate's
  process::SpawnSpec spec;
  spec.program = argv.front();
  spec.args.assign(argv.begin() + 1, argv.end());
  spec.dies_with_daemon = true;
  m_output.clear();
  process::ChildProcess::Handlers handlers;
  std::weak_ptr<PiRuntime> weak = weak_from_this();
  handlers.on_stdout_line = [weak](std::string_view line) {
    if (auto self = weak.lock()) self->m_output.append(line).append("\n");
  };
  handlers.on_exit = [weak, done](const process::ExitStatus& status) {
    auto self = weak.lock();
    if (!self) return;
    self->m_deadline.cancel();
    // The ChildProcess is the caller: it finishes before it is destroyed.
    boost::asio::post(self->m_io, [probe = std::shared_ptr<process::ChildProcess>(std::move(self->m_probe))] {});
    // A copy: `done` may start the next probe, which reuses the buffer.
    const std::string output = self->m_output;
    done(status.success(), output);
  };
  auto spawned = process::ChildProcess::spawn(m_io, std::move(spec), std::move(handlers));
  if (!spawned) {
    // Reported like a probe that failed, off this call so the caller's state is settled first.
    return boost::asio::post(m_io, [weak, done] {
      if (weak.lock()) done(false, {});
    });
  }
  m_probe = std::move(*spawned);
  m_deadline.expires_after(kProbeTimeout);
  m_deadline.async_wait([weak](const boost::system::error_code& error) {
    auto self = weak.lock();
    if (!error && self && self->m_probe) self->m_probe->kill();
  });
}

void PiRuntime::finish(std::optional<PiLauncher> launcher, std::string problem) {
  // A Pi that is not installed is not news (agents.list says so); one that is there and cannot run is. A
  // discovery cut short (or never begun) at shutdown is neither, and a warning would land on a short run's stderr.
  if (!problem.empty() && m_info.path && !m_stopped) spdlog::warn("pi: {}", problem);
  m_done = true;
  m_launcher = std::move(launcher);
  m_problem = std::move(problem);
  auto waiting = std::exchange(m_waiting, {});
  for (auto& ready : waiting) ready(m_launcher, m_problem);
}

void PiRuntime::when_ready(Ready ready) {
  if (m_done) return ready(m_launcher, m_problem);
  m_waiting.push_back(std::move(ready));
  begin_discovery();
}

std::unique_ptr<AgentAdapter> PiRuntime::create(AdapterListener& listener) {
  return std::make_unique<PiAdapter>(m_io, listener, *this);
}

void PiRuntime::stop(std::function<void()> done) {
  m_stopped = true;
  if (m_probe) m_probe->kill();
  if (!m_done) finish(std::nullopt, "the daemon is shutting down");
  done();
}

}  // namespace switchboard::adapters::pi
