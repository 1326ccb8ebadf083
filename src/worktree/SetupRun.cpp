#include "worktree/SetupRun.h"

#include <utility>

#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>

#include "switchboard/process/ChildProcess.h"
#include "switchboard/process/Environment.h"

namespace switchboard::worktree {

namespace {

// "90 s", "250 ms": the time limit as a user configured it, roughly.
std::string duration_text(std::chrono::milliseconds limit) {
  if (limit.count() % 1000 == 0) return std::to_string(limit.count() / 1000) + " s";
  return std::to_string(limit.count()) + " ms";
}

constexpr std::size_t kLongestLine = 64 * 1024;

}  // namespace

class SetupRun::State : public std::enable_shared_from_this<SetupRun::State> {
 public:
  State(boost::asio::io_context& io, Output output, Finished finished)
      : m_io(io), m_timer(io), m_output(std::move(output)), m_finished(std::move(finished)) {}

  void start(const std::string& command, const std::filesystem::path& directory, std::chrono::milliseconds limit) {
    process::SpawnSpec spec;
    spec.program = "/bin/sh";
    // stderr joins stdout, so that the output reads in the order it was written, as in a terminal.
    spec.args = {"-c", "exec 2>&1\n" + command};
    spec.working_directory = directory;
    spec.environment = process::Environment::from_daemon();
    spec.max_stdout_line_bytes = kLongestLine;
    spec.stderr_options.log_name = "worktree setup";
    spec.dies_with_daemon = true;
    process::ChildProcess::Handlers handlers;
    const std::weak_ptr<State> weak = weak_from_this();
    handlers.on_stdout_line = [weak](std::string_view line) {
      if (auto self = weak.lock()) self->wrote(std::string(line) + "\n");
    };
    handlers.on_stdout_overlong = [weak](std::size_t longest) {
      if (auto self = weak.lock()) self->wrote("[a line longer than " + std::to_string(longest) + " bytes is not shown]\n");
    };
    handlers.on_exit = [weak](const process::ExitStatus& status) {
      if (auto self = weak.lock()) self->exited(status);
    };
    auto spawned = process::ChildProcess::spawn(m_io, std::move(spec), std::move(handlers));
    if (!spawned) return finish(SetupOutcome{false, "could not start: " + spawned.error().message, {}});
    m_child = std::move(*spawned);
    m_child->close_stdin();
    m_limit = limit;
    m_timer.expires_after(limit);
    m_timer.async_wait([weak](const boost::system::error_code& error) {
      auto self = weak.lock();
      if (error || !self || !self->m_child) return;
      self->m_timed_out = true;
      self->m_child->kill();
    });
  }

  const std::optional<SetupOutcome>& outcome() const { return m_outcome; }

  void cancel() {
    if (!m_child || m_outcome) return;
    m_cancelled = true;
    m_child->kill();
  }

 private:
  void wrote(std::string text) {
    if (m_streamed < kStreamedBytes) {
      m_streamed += text.size();
      if (m_streamed >= kStreamedBytes) text += "[further output is not shown while it runs]\n";
      m_output(text);
    }
    m_kept += text;
    if (m_kept.size() > 2 * kKeptBytes) {
      m_kept.erase(0, m_kept.size() - kKeptBytes);
      m_cut = true;
    }
  }

  void exited(const process::ExitStatus& status) {
    m_timer.cancel();
    SetupOutcome outcome;
    outcome.succeeded = status.success() && !m_timed_out && !m_cancelled;
    if (m_timed_out) {
      outcome.failure = "ran past its time limit of " + duration_text(m_limit) + " and was killed";
    } else if (m_cancelled) {
      outcome.failure = "was cancelled";
    } else if (!outcome.succeeded) {
      outcome.failure = process::to_string(status);
    }
    if (m_kept.size() > kKeptBytes) {
      m_kept.erase(0, m_kept.size() - kKeptBytes);
      m_cut = true;
    }
    outcome.output = m_cut ? "[earlier output cut]\n" + m_kept : m_kept;
    finish(std::move(outcome));
  }

  // Posted: the caller may destroy the SetupRun from `finished`, which must not happen inside the child's callback.
  void finish(SetupOutcome outcome) {
    if (m_outcome) return;
    m_outcome = outcome;
    boost::asio::post(m_io, [weak = weak_from_this(), outcome = std::move(outcome)]() mutable {
      if (auto self = weak.lock()) self->m_finished(std::move(outcome));
    });
  }

  boost::asio::io_context& m_io;
  boost::asio::steady_timer m_timer;
  Output m_output;
  Finished m_finished;
  std::unique_ptr<process::ChildProcess> m_child;
  std::chrono::milliseconds m_limit{0};
  std::size_t m_streamed = 0;
  std::string m_kept;
  bool m_cut = false;
  bool m_timed_out = false;
  bool m_cancelled = false;
  std::optional<SetupOutcome> m_outcome;  // set when it ended, before `finished` runs
};

std::unique_ptr<SetupRun> SetupRun::start(boost::asio::io_context& io, const std::string& command,
                                          const std::filesystem::path& directory, std::chrono::milliseconds time_limit,
                                          Output output, Finished finished) {
  auto state = std::make_shared<State>(io, std::move(output), std::move(finished));
  state->start(command, directory, time_limit);
  return std::unique_ptr<SetupRun>(new SetupRun(std::move(state)));
}

SetupRun::SetupRun(std::shared_ptr<State> state) : m_state(std::move(state)) {}

SetupRun::~SetupRun() = default;

void SetupRun::cancel() { m_state->cancel(); }

std::optional<SetupOutcome> SetupRun::outcome() const { return m_state->outcome(); }

}  // namespace switchboard::worktree
