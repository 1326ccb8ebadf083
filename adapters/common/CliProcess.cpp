#include "common/CliProcess.h"

#include <boost/asio/post.hpp>
#include <spdlog/spdlog.h>

#include "common/NativeJson.h"
#include "switchboard/process/ChildProcess.h"

namespace switchboard::adapters {

std::string last_line(std::string text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) text.pop_back();
  const auto newline = text.rfind('\n');
  return newline == std::string::npos ? text : text.substr(newline + 1);
}

CliProcess::CliProcess(boost::asio::io_context& io, CliIdentity identity, CliTimeouts timeouts, Handlers handlers)
    : m_io(io),
      m_identity(std::move(identity)),
      m_timeouts(timeouts),
      m_handlers(std::move(handlers)),
      m_start_timer(io),
      m_cancel_timer(io),
      m_self(std::make_shared<CliProcess*>(this)) {}

// The ChildProcess kills the process group if it still runs: an adapter never leaves a CLI behind.
CliProcess::~CliProcess() = default;

std::optional<AdapterError> CliProcess::spawn(CliLaunch launch) {
  const std::string executable = launch.argv.front();
  process::SpawnSpec spec;
  spec.program = executable;
  spec.args.assign(launch.argv.begin() + 1, launch.argv.end());
  spec.working_directory = std::move(launch.cwd);
  spec.environment = std::move(launch.environment);
  spec.dies_with_daemon = true;  // an agent never outlives the daemon, however it ends
  spec.stderr_options.log_name = std::move(launch.log_name);

  process::ChildProcess::Handlers handlers;
  handlers.on_stdout_line = [this](std::string_view line) { m_handlers.on_line(line); };
  handlers.on_stdout_overlong = [this](std::size_t limit) {
    m_handlers.on_error(AgentErrorReport{m_identity.name + " wrote a line longer than " + std::to_string(limit) + " bytes; it was skipped", true});
  };
  handlers.on_exit = [this](const process::ExitStatus& status) { on_child_exit(process::to_string(status)); };
  auto spawned = process::ChildProcess::spawn(m_io, std::move(spec), std::move(handlers));
  if (!spawned) {
    const bool missing = spawned.error().code == process::ProcessError::Code::ExecutableNotFound;
    return AdapterError{protocol::ErrorCode::AgentUnavailable,
                        missing ? m_identity.name + " is not installed (no '" + executable + "' found)"
                                : m_identity.name + " could not be started: " + spawned.error().message};
  }
  m_child = std::move(*spawned);
  return std::nullopt;
}

void CliProcess::write_line(const nlohmann::json& message) { write_encoded(native::dump(message)); }

bool CliProcess::write_encoded(std::string line) {
  if (!m_child) return false;
  line += '\n';
  if (auto written = m_child->write_stdin(std::move(line)); !written) {
    // The queue is bounded (MiBs): a CLI that stopped reading is broken; say so rather than grow.
    spdlog::warn("{}: cannot write to the CLI: {}", m_identity.log_prefix, written.error().message);
    m_handlers.on_error(AgentErrorReport{"could not write to " + m_identity.name + ": " + written.error().message, false});
    return false;
  }
  return true;
}

void CliProcess::kill() {
  if (m_child) m_child->kill();
}

void CliProcess::stop() {
  if (!m_child || m_stop_requested) return;
  m_stop_requested = true;
  process::StopPolicy policy;
  policy.graceful = [](process::ChildProcess& child) { child.close_stdin(); };
  policy.graceful_timeout = m_timeouts.stop_grace;
  policy.terminate_timeout = m_timeouts.stop_grace;
  m_child->stop(std::move(policy));
}

void CliProcess::begin_start(std::function<void(std::optional<AdapterError>)> done) {
  m_start_done = std::move(done);
  m_start_timer.expires_after(m_timeouts.start);
  m_start_timer.async_wait([this, self = std::weak_ptr<CliProcess*>(m_self)](const boost::system::error_code& error) {
    if (error || self.expired() || !m_start_done) return;
    finish_start(AdapterError{protocol::ErrorCode::AgentUnavailable,
                              m_identity.name + " did not start within " + std::to_string(m_timeouts.start.count()) + " ms"});
    kill();
  });
}

void CliProcess::finish_start(std::optional<AdapterError> error) {
  if (!m_start_done) return;
  m_start_timer.cancel();
  auto done = std::exchange(m_start_done, nullptr);
  done(std::move(error));
}

void CliProcess::arm_cancel_deadline(std::function<bool()> still_running, std::string awaited, std::string what) {
  m_cancel_timer.expires_after(m_timeouts.cancel);
  m_cancel_timer.async_wait([this, self = std::weak_ptr<CliProcess*>(m_self), still_running = std::move(still_running),
                             awaited = std::move(awaited), what = std::move(what)](const boost::system::error_code& error) {
    if (error || self.expired() || !m_child || !still_running()) return;
    spdlog::warn("{}: no {} {} ms after an interrupt; killing the {}", m_identity.log_prefix, awaited, m_timeouts.cancel.count(), what);
    m_child->kill();
  });
}

void CliProcess::disarm_cancel_deadline() { m_cancel_timer.cancel(); }

void CliProcess::on_child_exit(const std::string& status) {
  std::string reason = m_stop_requested ? "stopped" : m_identity.name + " exited (" + status + ")";
  const std::string stderr_tail = m_child->stderr_tail();
  if (!m_stop_requested) {
    if (const auto why = last_line(stderr_tail); !why.empty()) reason += ": " + why.substr(0, 500);
  }
  // The ChildProcess is the caller: let it finish before it is destroyed.
  boost::asio::post(m_io, [child = std::shared_ptr<process::ChildProcess>(std::move(m_child))] {});
  m_cancel_timer.cancel();
  m_handlers.on_exit(reason, stderr_tail);
}

}  // namespace switchboard::adapters
