#include "common/VersionProbe.h"

#include <boost/asio/post.hpp>
#include <spdlog/spdlog.h>

#include "common/EnvironmentVariable.h"
#include "switchboard/process/ChildProcess.h"
#include "switchboard/process/ExecutableLookup.h"

namespace switchboard::adapters {

std::vector<std::string> version_command(const std::string& executable, const std::vector<std::string>& leading_arguments) {
  std::vector<std::string> argv{executable};
  argv.insert(argv.end(), leading_arguments.begin(), leading_arguments.end());
  argv.push_back("--version");
  return argv;
}

std::string install_hint(std::string_view agent) {
  const std::string name(agent);
  std::string upper;
  for (const char c : agent) upper.push_back(c >= 'a' && c <= 'z' ? static_cast<char>(c - 'a' + 'A') : c);
  return "(install it with scripts/install-agents " + name + ", or configure agents." + name + ".bin: --" + name +
         "-bin, SWITCHBOARD_" + upper + "_BIN or the config file)";
}

std::shared_ptr<VersionProbe> VersionProbe::locate(boost::asio::io_context& io, VersionProbeSpec spec) {
  auto probe = std::make_shared<VersionProbe>(io, std::move(spec));
  probe->find();
  return probe;
}

std::shared_ptr<VersionProbe> VersionProbe::start(boost::asio::io_context& io, VersionProbeSpec spec) {
  auto probe = locate(io, std::move(spec));
  probe->run();
  return probe;
}

VersionProbe::VersionProbe(boost::asio::io_context& io, VersionProbeSpec spec)
    : m_io(io), m_spec(std::move(spec)), m_executable(m_spec.executable), m_deadline(io) {
  m_info.agent = m_spec.agent;
  m_info.capabilities = m_spec.capabilities;
  if (!m_spec.modes.empty()) m_info.modes = m_spec.modes;
}

// The ChildProcess kills a probe still running.
VersionProbe::~VersionProbe() = default;

void VersionProbe::find() {
  auto found = process::find_executable(m_spec.executable, executable_search_path(), {});
  if (!found) {
    m_info.installed = false;
    m_info.problem = "'" + m_spec.executable + "' not found " + m_spec.install_hint;
    return;
  }
  // Installed as far as the file system can tell; `--version` (a second or two) tells more, once it runs.
  m_executable = found->string();
  m_info.installed = true;
  m_info.path = m_executable;
}

void VersionProbe::run() {
  if (m_ran || m_stopped || !m_info.installed) return;
  m_ran = true;
  process::SpawnSpec spec;
  const auto argv = version_command(m_executable, m_spec.leading_arguments);
  spec.program = argv.front();
  spec.args.assign(argv.begin() + 1, argv.end());
  spec.dies_with_daemon = true;
  process::ChildProcess::Handlers handlers;
  handlers.on_stdout_line = [weak = weak_from_this()](std::string_view line) {
    if (auto self = weak.lock()) self->m_output.append(line).append("\n");
  };
  handlers.on_exit = [weak = weak_from_this()](const process::ExitStatus& status) {
    if (auto self = weak.lock()) self->on_exit(process::to_string(status), status.success());
  };
  auto probe = process::ChildProcess::spawn(m_io, std::move(spec), std::move(handlers));
  if (!probe) {
    m_info.installed = false;
    m_info.problem = "cannot run '" + m_executable + " --version': " + probe.error().message;
    return;
  }
  m_probe = std::move(*probe);
  m_deadline.expires_after(m_spec.timeout);
  m_deadline.async_wait([weak = weak_from_this()](const boost::system::error_code& error) {
    auto self = weak.lock();
    if (!error && self && self->m_probe) self->m_probe->kill();
  });
}

void VersionProbe::on_exit(const std::string& status, bool success) {
  if (auto version = m_spec.parse_version(m_output); version && success) {
    m_info.version = *version;
    spdlog::info("{}: {} version {}", m_spec.agent, m_executable, *version);
  } else if (m_stopped) {
    // Killed by stop() at the daemon's shutdown (a short run ends before the probe does): nothing went wrong,
    // and a warning would land on the stderr of a script's `switchboard run`.
    m_info.installed = false;
    m_info.problem = "'" + m_executable + " --version' was stopped before it answered";
    spdlog::debug("{}: {}", m_spec.agent, *m_info.problem);
  } else {
    m_info.installed = false;
    m_info.problem = "'" + m_executable + " --version' failed (" + status + ")";
    spdlog::warn("{}: {}", m_spec.agent, *m_info.problem);
  }
  m_deadline.cancel();
  // The ChildProcess is the caller: it finishes before it is destroyed.
  boost::asio::post(m_io, [probe = std::shared_ptr<process::ChildProcess>(std::move(m_probe))] {});
}

void VersionProbe::stop() {
  m_stopped = true;
  if (m_probe) m_probe->kill();
}

}  // namespace switchboard::adapters
