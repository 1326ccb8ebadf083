#include "engine/Session.h"

#include <algorithm>

#include <boost/asio/post.hpp>
#include <spdlog/spdlog.h>

#include "engine/AnsweredOnce.h"
#include "switchboard/support/Clock.h"
#include "switchboard/support/RandomId.h"

namespace switchboard::engine {
namespace {

using protocol::ErrorCode;

// A fresh agent conversation that continues a lost one starts with a transcript of the stored exchanges: the
// most recent ones, each side cut, within a total budget, so the first prompt stays a reasonable size.
constexpr std::size_t kSeedExchanges = 40;
constexpr std::size_t kSeedSideBytes = 4000;
constexpr std::size_t kSeedTotalBytes = 48000;

std::string cut(const std::string& text, std::size_t limit) {
  if (text.size() <= limit) return text;
  std::size_t end = limit;
  while (end > 0 && (static_cast<unsigned char>(text[end]) & 0xC0) == 0x80) --end;  // not inside a UTF-8 sequence
  return text.substr(0, end) + " […]";
}

std::optional<std::string> seed_from(const std::vector<Exchange>& exchanges) {
  if (exchanges.empty()) return std::nullopt;
  std::vector<std::string> parts;
  std::size_t total = 0;
  for (auto it = exchanges.rbegin(); it != exchanges.rend() && parts.size() < kSeedExchanges; ++it) {
    std::string part = "User: " + cut(it->prompt, kSeedSideBytes) + "\n\nAssistant: " + cut(it->answer, kSeedSideBytes) + "\n\n";
    if (total + part.size() > kSeedTotalBytes && !parts.empty()) break;
    total += part.size();
    parts.push_back(std::move(part));
  }
  std::string seed =
      "[This conversation continues an earlier one that is no longer available to you. The most recent earlier "
      "exchanges, oldest first:]\n\n";
  for (auto it = parts.rbegin(); it != parts.rend(); ++it) seed += *it;
  seed += "[End of the earlier exchanges. The user's new message follows.]\n\n";
  return seed;
}

// Marks `id` as the default of `models` and no other, when the list has it; otherwise leaves the list as offered.
void mark_default(std::vector<protocol::ModelInfo>& models, const std::string& id) {
  if (std::none_of(models.begin(), models.end(), [&](const auto& model) { return model.id == id; })) return;
  for (auto& model : models) model.is_default = model.id == id ? std::optional<bool>(true) : std::nullopt;
}

bool same_models(const std::optional<std::vector<protocol::ModelInfo>>& known, const std::vector<protocol::ModelInfo>& offered) {
  if (!known || known->size() != offered.size()) return false;
  for (std::size_t i = 0; i < offered.size(); ++i) {
    const auto& a = (*known)[i];
    const auto& b = offered[i];
    if (a.id != b.id || a.name != b.name || a.description != b.description || a.is_default != b.is_default) return false;
  }
  return true;
}

bool same_options(const std::optional<std::vector<protocol::SessionOption>>& known, const std::vector<protocol::SessionOption>& offered) {
  if (!known || known->size() != offered.size()) return false;
  for (std::size_t i = 0; i < offered.size(); ++i) {
    const auto& a = (*known)[i];
    const auto& b = offered[i];
    if (a.id != b.id || a.name != b.name || a.description != b.description || a.kind != b.kind || a.current_value != b.current_value ||
        a.values.size() != b.values.size()) {
      return false;
    }
    for (std::size_t v = 0; v < b.values.size(); ++v) {
      if (a.values[v].value != b.values[v].value || a.values[v].name != b.values[v].name || a.values[v].description != b.values[v].description) {
        return false;
      }
    }
  }
  return true;
}

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'; }

std::string trimmed(std::string_view text) {
  while (!text.empty() && is_space(text.front())) text.remove_prefix(1);
  while (!text.empty() && is_space(text.back())) text.remove_suffix(1);
  return std::string(text);
}

// A prompt `/name arguments` whose name is one of the commands the agent offers this session: the agent runs it
// with its own mechanism. Anything else (an unknown name, a path like `/tmp/x`, text before the slash) is a prompt.
std::optional<adapters::SlashCommand> slash_command(const std::string& text, const std::optional<std::vector<protocol::AgentCommand>>& commands) {
  if (!commands || text.size() < 2 || text[0] != '/') return std::nullopt;
  std::size_t end = 1;
  while (end < text.size() && !is_space(text[end])) ++end;
  const std::string name = text.substr(1, end - 1);
  if (std::none_of(commands->begin(), commands->end(), [&](const auto& command) { return command.name == name; })) return std::nullopt;
  return adapters::SlashCommand{name, trimmed(std::string_view(text).substr(end))};
}

}  // namespace

std::optional<std::string> resolve_model(const std::optional<std::string>& call_override,
                                         const std::optional<std::string>& session_choice,
                                         const std::optional<std::string>& configured) {
  if (call_override) return call_override;
  if (session_choice) return session_choice;
  return configured;
}

Session::Session(SessionServices& services, protocol::SessionInfo info, SessionSettings settings)
    : m_services(services), m_info(std::move(info)), m_settings(std::move(settings)) {}

bool Session::busy() const {
  return m_turn || !m_queue.empty() || m_interrupted || m_agent_life == AgentLife::Starting || m_held;
}

protocol::AgentCapabilities Session::capabilities() const {
  const auto* descriptor = m_services.agent(m_info.agent);
  return descriptor == nullptr ? protocol::AgentCapabilities{} : descriptor->discover().capabilities;
}

void Session::save_session() {
  auto* persistence = m_services.persistence();
  if (persistence == nullptr) return;
  persistence->update_session(stored(), [id = m_info.session_id](std::optional<EngineError> error) {
    if (error) spdlog::error("session {}: its plan, usage or options could not be saved: {}", id, error->message);
  });
}

Session::~Session() {
  // Destroying the session (delete) must not leave callers hanging; its open requests resolve as cancelled, and
  // answers its agent completes later no longer reach it.
  m_services.requests().forget(m_info.session_id);
  if (m_turn && m_turn->waiter) {
    (*m_turn->waiter)(EngineError{ErrorCode::UnknownSession, "the session was deleted"});
  }
  notify_stopped();  // a shutdown waiting for this session's agent must not wait for a session that is gone
}

void Session::notify_stopped() {
  auto waiters = std::exchange(m_stop_waiters, {});
  for (auto& waiter : waiters) waiter();
}

template <class Data>
void Session::publish(Data data) {
  // After daemon.shutdown nothing more of a session reaches clients: daemon.shutdown is their last event.
  m_services.publish(m_info.session_id, protocol::EventPayload(std::in_place_type<Data>, std::move(data)));
}

void Session::set_state(protocol::SessionState state, std::optional<std::string> reason) {
  if (m_info.state == state && !reason) return;
  m_info.state = state;
  m_info.updated_at = unix_millis_now();
  publish(protocol::SessionStateEvent{state, std::move(reason)});
}

void Session::set_agent_life(AgentLife life) {
  m_agent_life = life;
  m_info.live = life == AgentLife::Running;
}

void Session::refresh_running_state() {
  if (!m_turn) return;
  set_state(m_services.requests().has_open(m_info.session_id) ? protocol::SessionState::AwaitingInput
                                                               : protocol::SessionState::Running);
}

std::vector<protocol::QueuedPrompt> Session::queue() const {
  std::vector<protocol::QueuedPrompt> out;
  for (const auto& pending : m_queue) out.push_back(pending.prompt);
  return out;
}

void Session::ensure_started(std::function<void(std::optional<EngineError>)> ready) {
  if (m_agent_life == AgentLife::Running) return ready(std::nullopt);
  m_start_waiters.push_back(std::move(ready));
  if (m_agent_life == AgentLife::Starting) return;
  const auto* descriptor = m_services.agent(m_info.agent);
  if (descriptor == nullptr) {
    auto waiters = std::exchange(m_start_waiters, {});
    for (auto& waiter : waiters) waiter(EngineError{ErrorCode::UnknownAgent, "no agent named " + m_info.agent});
    return;
  }
  set_agent_life(AgentLife::Starting);
  // A session from an earlier run of the daemon resumes the agent's own session, so it has the history.
  with_conversation([weak = std::weak_ptr<Session*>(m_self)] {
    if (auto self = weak.lock()) (*self)->start_adapter();
  });
}

void Session::start_adapter() {
  if (m_shutting_down) {
    // A start that was waiting for the store when the shutdown began: no agent may start any more, and the
    // turn it was for stays stored (the session comes back interrupted).
    set_agent_life(AgentLife::None);
    m_keep_stored_outstanding = true;
    auto waiters = std::exchange(m_start_waiters, {});
    for (auto& waiter : waiters) waiter(EngineError{ErrorCode::ShuttingDown, "the daemon is shutting down"});
    return;
  }
  adapters::StartOptions options;
  options.session_id = m_info.session_id;
  options.cwd = m_info.cwd;
  options.model = m_info.model;
  options.mode = m_info.mode;
  options.resume_provider_session_id = m_provider_session_id;
  options.fork = m_fork_pending && m_provider_session_id.has_value();
  if (options.fork) options.fork_through_turn_ref = m_fork_through;
  options.stream_text = m_services.stream_text();
  options.mcp_servers = m_settings.mcp_servers;
  options.options.assign(m_settings.option_values.begin(), m_settings.option_values.end());
  m_adapter = m_services.take_prestarted(m_info.agent, options, *this);
  if (!m_adapter) m_adapter = m_services.agent(m_info.agent)->create(*this);
  // Wrapped: an adapter destroyed holding the start still completes it (AgentUnavailable), so the session never
  // waits for a start that cannot come.
  m_adapter->start(options, for_adapter([weak = std::weak_ptr<Session*>(m_self)](std::optional<adapters::AdapterError> error) {
    if (auto self = weak.lock()) (*self)->started(std::move(error));
  }));
}

void Session::started(std::optional<adapters::AdapterError> error) {
  if (error && error->code == ErrorCode::ConversationLost && m_provider_session_id && !m_shutting_down) {
    // The adapter may be the caller: destroy it after this call returns.
    boost::asio::post(m_services.io(), [adapter = std::shared_ptr<adapters::AgentAdapter>(std::move(m_adapter))] {});
    return continue_in_fresh_conversation(error->message);
  }
  if (error) {
    m_adapter.reset();
    set_agent_life(AgentLife::None);
    if (m_shutting_down) m_keep_stored_outstanding = true;  // stopped while starting: the turn was cut off
  } else {
    set_agent_life(AgentLife::Running);
  }
  auto waiters = std::exchange(m_start_waiters, {});
  for (auto& waiter : waiters) {
    waiter(error ? std::optional<EngineError>(EngineError{error->code, error->message}) : std::nullopt);
  }
  // Stopped while it was starting: a failed start is the end of that agent.
  if (error) notify_stopped();
}

void Session::continue_in_fresh_conversation(const std::string& why) {
  // Decision: automatic, so that no client has to know how to recover: the send that found the conversation gone
  // goes on in a new one, and every client is told once, with a typed code, what happened and what the new
  // conversation knows. The waiters of this start keep waiting (the agent stays Starting) for the fresh agent.
  const std::string lost = *m_provider_session_id;
  const bool fork_to_make = m_fork_pending;
  m_provider_session_id.reset();
  m_fork_pending = false;  // nothing left to fork: the fresh conversation is the session's own
  m_fork_through.reset();
  spdlog::warn("session {}: the agent's conversation {} is gone ({}); starting a fresh one", m_info.session_id, lost, why);
  auto seeded = [weak = std::weak_ptr<Session*>(m_self), lost, fork_to_make](std::vector<Exchange> exchanges) {
    auto self = weak.lock();
    if (!self) return;
    Session& session = **self;
    session.m_seed = seed_from(exchanges);
    std::string message = session.m_info.agent + " no longer has " +
                          (fork_to_make ? "the conversation this fork copies (" : "this session's conversation (") + lost +
                          "); it goes on in a new conversation";
    message += exchanges.empty() ? ", without earlier context (the daemon stored no exchange of it)"
                                 : ", seeded with the transcript of the " + std::to_string(exchanges.size()) +
                                       " earlier exchange(s) the daemon stored (the most recent, if it is long)";
    session.publish(protocol::AgentErrorEvent{std::move(message), true,
                                              session.m_turn ? std::optional<std::string>(session.m_turn->turn_id) : std::nullopt,
                                              static_cast<std::int64_t>(ErrorCode::ConversationLost)});
    session.start_adapter();
  };
  // The stored exchanges of the session's conversation: a fork's begin with its source's through the fork's turn.
  if (auto* persistence = m_services.persistence()) return persistence->exchanges(m_info.session_id, std::move(seeded));
  seeded({});
}

void Session::bind_provider_session(ConversationBinding binding) {
  m_provider_session_id = std::move(binding.provider_session_id);
  m_fork_pending = binding.fork;
  m_fork_through = binding.fork ? std::move(binding.fork_through_turn_ref) : std::nullopt;
}

void Session::restore(const std::optional<OutstandingWork>& work) {
  m_look_up_last_run = true;
  m_turns_known = false;  // its earlier turns are in the store
  if (!work || work->empty()) return;
  // The prompt whose turn was cut off (or, if the agent had stopped, the first one queued) is offered for
  // resumption; the rest stay queued behind it, in order.
  std::deque<protocol::QueuedPrompt> prompts(work->queued.begin(), work->queued.end());
  if (work->running) prompts.push_front(*work->running);
  m_interrupted = std::move(prompts.front());
  prompts.pop_front();
  for (auto& prompt : prompts) m_queue.push_back(Pending{std::move(prompt), std::nullopt});
  m_info.state = protocol::SessionState::Interrupted;
  m_saved_outstanding.reset();  // what the store holds is not known here: the next save writes
}

void Session::save_outstanding() {
  auto* persistence = m_services.persistence();
  if (persistence == nullptr || m_keep_stored_outstanding) return;
  OutstandingWork work;
  if (m_turn) {
    work.running = m_turn->prompt;
  } else if (m_interrupted) {
    work.running = m_interrupted;
  }
  for (const auto& pending : m_queue) work.queued.push_back(pending.prompt);
  std::string serialized;
  if (!work.empty()) {
    serialized = work.running ? work.running->queue_id : std::string("-");
    for (const auto& prompt : work.queued) serialized += "," + prompt.queue_id;
  }
  if (m_saved_outstanding == serialized) return;
  m_saved_outstanding = std::move(serialized);
  persistence->save_outstanding(m_info.session_id, work);
}

void Session::resume(bool wait, SendDone done) {
  if (!m_interrupted) {
    return done(EngineError{ErrorCode::NotInterrupted, "session " + m_info.session_id + " has no interrupted turn"});
  }
  if (m_turn || m_agent_life == AgentLife::Starting) {
    return done(EngineError{ErrorCode::NotInterrupted, "session " + m_info.session_id + " is already running a turn"});
  }
  run_interrupted(wait ? std::optional<SendDone>(done) : std::nullopt);
  if (!wait) {
    protocol::SessionSendResult result;
    result.queued = false;
    result.turn_id = m_turn ? std::optional<std::string>(m_turn->turn_id) : std::nullopt;
    done(result);
  }
}

void Session::run_interrupted(std::optional<SendDone> waiter) {
  protocol::QueuedPrompt prompt = std::move(*m_interrupted);
  m_interrupted.reset();
  start_turn(std::move(prompt.text), prompt.attachments.value_or(std::vector<protocol::Attachment>{}), std::nullopt,
             std::nullopt, std::move(waiter));
}

void Session::send(protocol::SessionSendParams params, SendDone done) {
  const bool wait = params.wait.value_or(true);
  std::vector<protocol::Attachment> attachments = params.attachments.value_or(std::vector<protocol::Attachment>{});
  if (busy()) {
    // Queued, not raced: FIFO behind the running turn; every client sees it queued.
    Pending pending;
    pending.prompt.queue_id = random_id("q-", 6);
    pending.prompt.text = std::move(params.text);
    if (!attachments.empty()) pending.prompt.attachments = std::move(attachments);
    pending.prompt.queued_at = unix_millis_now();
    pending.model = std::move(params.model);
    m_queue.push_back(pending);
    publish(protocol::TurnQueuedEvent{pending.prompt, static_cast<std::int64_t>(m_queue.size())});
    protocol::SessionSendResult result;
    result.queued = true;
    result.queue_id = pending.prompt.queue_id;
    done(result);
    save_outstanding();
    // Nothing running: prompts left waiting (an agent that died, an interrupted session after a restart) run
    // now, oldest first, and this one after them. Nothing is dropped and nothing overtakes.
    if (!m_turn && m_agent_life != AgentLife::Starting && !m_held) {
      if (m_interrupted) {
        run_interrupted(std::nullopt);
      } else {
        drain_queue(/*after_stop=*/true);
      }
    }
    return;
  }
  start_turn(std::move(params.text), std::move(attachments), std::move(params.model), std::nullopt,
             wait ? std::optional<SendDone>(done) : std::nullopt);
  if (!wait) {
    protocol::SessionSendResult result;
    result.queued = false;
    result.turn_id = m_turn ? std::optional<std::string>(m_turn->turn_id) : std::nullopt;
    done(result);
  }
}

void Session::start_turn(std::string text, std::vector<protocol::Attachment> attachments, std::optional<std::string> model,
                         std::optional<std::string> queue_id, std::optional<SendDone> waiter) {
  Turn turn;
  turn.turn_id = random_id("t-", 8);
  m_dropped_outside_turn = 0;
  turn.prompt.queue_id = turn.turn_id;
  turn.prompt.text = text;
  if (!attachments.empty()) turn.prompt.attachments = attachments;
  turn.prompt.queued_at = unix_millis_now();
  turn.waiter = std::move(waiter);
  m_turn = std::move(turn);
  const std::string turn_id = m_turn->turn_id;
  save_outstanding();
  const auto resolved_model = resolve_model(model, m_info.model, m_services.default_model(m_info.agent));
  // Running before the send call resolves: a client that sees the reply already knows the session is busy.
  set_state(protocol::SessionState::Running);
  protocol::TurnStartedEvent started;
  started.turn_id = turn_id;
  started.text = text;
  if (!attachments.empty()) started.attachments = attachments;
  started.queue_id = queue_id;
  started.model = resolved_model;
  publish(std::move(started));
  // The working tree is checkpointed before the prompt can reach the agent, so that everything the turn changes
  // (its edits and its shell commands alike) is after the checkpoint (TurnCheckpoints).
  auto to_agent = [weak = std::weak_ptr<Session*>(m_self), turn_id, text = std::move(text), attachments = std::move(attachments),
                   resolved_model]() mutable {
    auto self = weak.lock();
    if (!self) return;
    (*self)->ensure_started([weak, turn_id, text = std::move(text), attachments = std::move(attachments),
                             resolved_model](std::optional<EngineError> error) mutable {
      auto started_self = weak.lock();
      if (!started_self) return;
      (*started_self)->send_to_agent(turn_id, std::move(text), std::move(attachments), resolved_model, std::move(error));
    });
  };
  // A new worktree is set up before anything else: what its set-up command makes is then in the checkpoint, not
  // in the turn's changes.
  set_up_worktree(turn_id, [weak = std::weak_ptr<Session*>(m_self), turn_id, to_agent = std::move(to_agent)]() mutable {
    auto self = weak.lock();
    if (!self) return;
    Session& session = **self;
    session.m_services.checkpoints().turn_starting(session.m_info.session_id, session.m_info.cwd, turn_id, std::move(to_agent));
  });
}

void Session::set_up_worktree(const std::string& turn_id, std::function<void()> then) {
  const auto& worktree = m_info.worktree;
  if (!worktree || !worktree->setup || *worktree->setup == protocol::WorktreeSetup::Done) return then();
  // Decision: the command in force now, not the one configured when the worktree was made; none configured any
  // more: nothing runs (and the worktree stays marked, for a later configuration).
  auto setup = m_services.worktree_setup(worktree->repository);
  if (!setup) return then();
  m_setup_call_id = "setup-" + turn_id;
  protocol::ToolStartedEvent started;
  started.turn_id = turn_id;
  started.tool_call_id = m_setup_call_id;
  started.tool = "setup";
  started.input = nlohmann::json{{"command", setup->command}, {"cwd", worktree->path}};
  publish(std::move(started));
  const std::weak_ptr<Session*> weak(m_self);
  m_setup = worktree::SetupRun::start(
      m_services.io(), setup->command, worktree->path, setup->time_limit,
      [weak, turn_id](std::string_view text) {
        auto self = weak.lock();
        if (!self) return;
        (*self)->publish(protocol::ToolOutputEvent{turn_id, (*self)->m_setup_call_id, std::string(text)});
      },
      [weak, turn_id, then = std::move(then)](worktree::SetupOutcome outcome) {
        if (auto self = weak.lock()) (*self)->worktree_set_up(turn_id, std::move(outcome), then);
      });
}

void Session::worktree_set_up(const std::string& turn_id, worktree::SetupOutcome outcome, const std::function<void()>& then) {
  const bool succeeded = outcome.succeeded;
  const std::string failure = outcome.failure;
  record_setup(turn_id, std::move(outcome));
  if (!m_turn || m_turn->turn_id != turn_id) return;  // cancelled meanwhile
  if (succeeded) return then();
  // The prompt never reaches the agent; the worktree stays as the command left it, for the user to look at.
  const std::string message = "the worktree's set-up command " + failure + "; the prompt was not sent";
  publish(protocol::AgentErrorEvent{message, false, turn_id, static_cast<std::int64_t>(ErrorCode::SetupFailed)});
  adapters::TurnResult failed;
  failed.stop_reason = protocol::StopReason::Error;
  failed.error = message;
  on_turn_end(std::move(failed));
}

void Session::record_setup(const std::string& turn_id, worktree::SetupOutcome outcome) {
  m_setup.reset();
  std::string output = std::move(outcome.output);
  if (!outcome.succeeded) output += (output.empty() || output.back() == '\n' ? "" : "\n") + ("[" + outcome.failure + "]");
  publish(protocol::ToolCompletedEvent{turn_id, m_setup_call_id, std::move(output), !outcome.succeeded});
  if (m_info.worktree) {
    // Remembered with the worktree (stored with the session): a set-up that succeeded never runs again, one that
    // failed runs again at the next turn.
    m_info.worktree->setup = outcome.succeeded ? protocol::WorktreeSetup::Done : protocol::WorktreeSetup::Failed;
    m_info.updated_at = unix_millis_now();
    publish(protocol::SessionUpdatedEvent{m_info});
    save_session();
  }
}

void Session::cut_setup_short(const std::string& turn_id, const std::string& why) {
  if (auto ended = m_setup->outcome()) return record_setup(turn_id, std::move(*ended));
  m_setup.reset();  // kills it
  publish(protocol::ToolCompletedEvent{turn_id, m_setup_call_id, "[" + why + "]", true});
}

void Session::send_to_agent(const std::string& turn_id, std::string text, std::vector<protocol::Attachment> attachments,
                            const std::optional<std::string>& resolved_model, std::optional<EngineError> error) {
  if (!m_turn || m_turn->turn_id != turn_id) return;  // cancelled while starting
  if (error) {
    publish(protocol::AgentErrorEvent{error->message, false, turn_id});
    adapters::TurnResult failed;
    failed.stop_reason = protocol::StopReason::Error;
    failed.error = error->message;
    on_turn_end(std::move(failed));
    return;
  }
  // The first prompt of a conversation that replaces a lost one carries the stored transcript before it, so it
  // goes as text even when it names a command: an adapter sends a command as the command alone.
  auto command = m_seed ? std::nullopt : slash_command(text, m_info.commands);
  if (m_seed) text = *std::exchange(m_seed, std::nullopt) + text;
  m_adapter->send(adapters::TurnInput{turn_id, std::move(text), std::move(attachments), resolved_model, std::move(command)});
}

bool Session::cancel() {
  if (!m_turn && m_interrupted && m_agent_life != AgentLife::Starting) {
    // The interrupted prompt is the turn the user is cancelling: it is discarded, visibly.
    m_interrupted.reset();
    save_outstanding();
    set_state(protocol::SessionState::Idle, "the interrupted prompt was discarded");
    if (!m_queue.empty()) drain_queue(/*after_stop=*/true);
    return true;
  }
  if (!m_turn) return false;
  tear_down_requests();
  if (m_setup) {
    // The worktree's set-up command runs, and the agent has not been given the prompt: the turn ends here.
    cut_setup_short(m_turn->turn_id, "cancelled");
    adapters::TurnResult cancelled;
    cancelled.stop_reason = protocol::StopReason::Cancelled;
    on_turn_end(std::move(cancelled));
    return true;
  }
  if (m_agent_life == AgentLife::Running) {
    m_adapter->cancel();  // the adapter ends the turn with on_turn_end(Cancelled)
  } else {
    adapters::TurnResult cancelled;
    cancelled.stop_reason = protocol::StopReason::Cancelled;
    on_turn_end(std::move(cancelled));
  }
  return true;
}

adapters::Completion Session::for_adapter(std::function<void(std::optional<adapters::AdapterError>)> done) {
  return answered_once(m_services.io(), std::move(done),
                       adapters::AdapterError{ErrorCode::AgentUnavailable, "the agent stopped before it answered"});
}

void Session::set_model(const std::string& model, Done done) {
  auto taken = [weak = std::weak_ptr<Session*>(m_self), model, done = std::move(done)](std::optional<adapters::AdapterError> error) {
    if (error) return done(EngineError{error->code, error->message});
    if (auto self = weak.lock()) {
      (*self)->m_info.model = model;
      (*self)->m_info.updated_at = unix_millis_now();
    }
    done(std::nullopt);
  };
  if (m_agent_life == AgentLife::Running) return m_adapter->set_model(model, for_adapter(std::move(taken)));
  taken(std::nullopt);
}

void Session::set_mode(const std::string& mode, Done done) {
  auto taken = [weak = std::weak_ptr<Session*>(m_self), mode, done = std::move(done)](std::optional<adapters::AdapterError> error) {
    if (error) return done(EngineError{error->code, error->message});
    if (auto self = weak.lock()) {
      (*self)->m_info.mode = mode;
      (*self)->m_info.updated_at = unix_millis_now();
    }
    done(std::nullopt);
  };
  if (m_agent_life == AgentLife::Running) return m_adapter->set_mode(mode, for_adapter(std::move(taken)));
  taken(std::nullopt);
}

void Session::set_option(const std::string& option_id, const std::string& value, Done done) {
  if (!capabilities().options) {
    return done(EngineError{ErrorCode::Unsupported, m_info.agent + " has no options beyond model and mode"});
  }
  if (m_info.options) {
    // Once the agent said what it has, nothing else reaches it: the caller learns which field is wrong.
    const auto option = std::find_if(m_info.options->begin(), m_info.options->end(), [&](const auto& known) { return known.id == option_id; });
    if (option == m_info.options->end()) {
      std::string offered;
      for (const auto& known : *m_info.options) offered += (offered.empty() ? "" : ", ") + known.id;
      return done(EngineError{ErrorCode::InvalidParams,
                              "invalid params for session.setOption: /optionId: " + m_info.agent + " has no option '" +
                                  option_id.substr(0, 100) + "' (it has: " + (offered.empty() ? "none" : offered) + ")",
                              "/optionId"});
    }
    if (std::none_of(option->values.begin(), option->values.end(), [&](const auto& allowed) { return allowed.value == value; })) {
      std::string allowed;
      for (const auto& known : option->values) allowed += (allowed.empty() ? "" : ", ") + known.value;
      return done(EngineError{ErrorCode::InvalidParams,
                              "invalid params for session.setOption: /value: '" + value.substr(0, 100) + "' is not a value of " +
                                  option_id + " (it takes: " + allowed + ")",
                              "/value"});
    }
  }
  ++m_option_changes;
  auto taken = [weak = std::weak_ptr<Session*>(m_self), option_id, value, done = std::move(done)](std::optional<adapters::AdapterError> error) {
    auto self = weak.lock();
    if (self) {
      Session& session = **self;
      --session.m_option_changes;
      // On success the engine announces the session as it now is; a refused change announces what the agent
      // reported meanwhile itself.
      const bool unannounced = std::exchange(session.m_options_unannounced, false);
      if (error && unannounced) session.publish(protocol::SessionUpdatedEvent{session.m_info});
    }
    if (error) return done(EngineError{error->code, error->message});
    if (self) {
      Session& session = **self;
      session.m_settings.option_values[option_id] = value;
      if (session.m_info.options) {
        for (auto& option : *session.m_info.options) {
          if (option.id == option_id) option.current_value = value;
        }
      }
      session.m_info.updated_at = unix_millis_now();
    }
    done(std::nullopt);
  };
  if (m_agent_life == AgentLife::Running) return m_adapter->set_option(option_id, value, for_adapter(std::move(taken)));
  if (m_agent_life == AgentLife::Starting) {
    // Its start options are already on their way: the agent gets the change once it has started.
    return ensure_started([weak = std::weak_ptr<Session*>(m_self), option_id, value, taken = std::move(taken)](std::optional<EngineError> error) mutable {
      auto self = weak.lock();
      if (!self || error || (*self)->m_agent_life != AgentLife::Running) return taken(std::nullopt);  // for the next start
      (*self)->m_adapter->set_option(option_id, value, (*self)->for_adapter(std::move(taken)));
    });
  }
  taken(std::nullopt);  // kept for the next start (StartOptions::options)
}

void Session::with_turns(std::function<void()> then) {
  if (m_turns_known) return then();
  m_turn_waiters.push_back(std::move(then));
  if (m_turn_waiters.size() > 1) return;  // already reading
  auto* persistence = m_services.persistence();
  auto loaded = [weak = std::weak_ptr<Session*>(m_self)](std::vector<TurnRecord> stored) {
    auto self = weak.lock();
    if (!self) return;
    Session& session = **self;
    // Turns that ended while the store was read were written after the read was queued: they go after it.
    for (auto& recent : session.m_turns) {
      if (std::none_of(stored.begin(), stored.end(), [&](const auto& turn) { return turn.turn_id == recent.turn_id; })) {
        stored.push_back(std::move(recent));
      }
    }
    session.m_turns = std::move(stored);
    session.m_turns_known = true;
    auto waiters = std::exchange(session.m_turn_waiters, {});
    for (auto& waiter : waiters) waiter();
  };
  if (persistence == nullptr) return loaded({});
  persistence->turns(m_info.session_id, std::move(loaded));
}

void Session::with_conversation(std::function<void()> then) {
  // A look-up under way (for a fork point or a start): everyone waits for its answer, or a start would begin a
  // fresh conversation, and a fork point would name none, while the stored one is still being read.
  if (m_looking_up_conversation) return m_conversation_waiters.push_back(std::move(then));
  if (!m_look_up_last_run || m_provider_session_id || m_services.persistence() == nullptr) return then();
  m_look_up_last_run = false;
  m_looking_up_conversation = true;
  m_conversation_waiters.push_back(std::move(then));
  m_services.persistence()->latest_run(m_info.session_id, [weak = std::weak_ptr<Session*>(m_self)](std::optional<ConversationBinding> run) {
    auto self = weak.lock();
    if (!self) return;
    Session& session = **self;
    session.m_looking_up_conversation = false;
    if (run && !session.m_provider_session_id) session.bind_provider_session(std::move(*run));
    auto waiters = std::exchange(session.m_conversation_waiters, {});
    for (auto& waiter : waiters) waiter();
  });
}

void Session::fork_point(const std::optional<std::string>& turn_id, std::function<void(Outcome<ForkPoint>)> done) {
  // Answered even if the session is deleted while its turns or conversation are read.
  done = answered_or<Outcome<ForkPoint>>(m_services.io(), std::move(done), EngineError{ErrorCode::UnknownSession, "the session was deleted"});
  with_turns([this, weak = std::weak_ptr<Session*>(m_self), turn_id, done = std::move(done)]() mutable {
    with_conversation([this, weak, turn_id, done = std::move(done)] {
      if (weak.expired()) return;
      if (busy()) return done(EngineError{ErrorCode::SessionBusy, "session " + m_info.session_id + " is running a turn; fork it once the turn has ended"});
      // The fork point: the turn named, or the session's latest that no rewind undid.
      const TurnRecord* point = nullptr;
      const TurnRecord* latest = nullptr;
      for (const auto& turn : m_turns) {
        if (turn.rewound) continue;
        latest = &turn;
        if (turn_id && turn.turn_id == *turn_id) point = &turn;
      }
      if (turn_id && point == nullptr) {
        return done(EngineError{ErrorCode::UnknownTurn, "session " + m_info.session_id + " has no turn " + turn_id->substr(0, 100) +
                                                            " to fork from (or it was rewound)"});
      }
      if (!turn_id) point = latest;
      if (point != nullptr && point != latest && !point->native_ref) {
        return done(EngineError{ErrorCode::Unsupported, m_info.agent + " named no reference for turn " + point->turn_id +
                                                            ", so its conversation cannot be forked there"});
      }
      ForkPoint fork;
      if (point != nullptr) fork.turn_id = point->turn_id;
      if (m_provider_session_id) {
        ConversationBinding binding;
        binding.provider_session_id = *m_provider_session_id;
        binding.fork = true;
        // Through that turn: the copy is made at the fork's first start, and the source may have gone on by then.
        // A source that is itself still to fork its origin has no turn of its own: the same point of the origin.
        binding.fork_through_turn_ref = point != nullptr ? point->native_ref : m_fork_pending ? m_fork_through : std::nullopt;
        fork.conversation = std::move(binding);
      }
      done(std::move(fork));
    });
  });
}

void Session::check_turn(const std::string& turn_id, std::function<void(bool)> known) {
  known = answered_or<bool>(m_services.io(), std::move(known), false);
  with_turns([this, weak = std::weak_ptr<Session*>(m_self), turn_id, known]() {
    if (weak.expired()) return;
    if (m_turn && m_turn->turn_id == turn_id) return known(true);
    // A rewound turn stays known: what it changed is still worth seeing (its checkpoints are kept).
    known(std::any_of(m_turns.begin(), m_turns.end(), [&](const TurnRecord& turn) { return turn.turn_id == turn_id; }));
  });
}

void Session::hold_for(std::function<void(Done)> work, Done done) {
  m_held = true;
  with_agent(std::move(work), [weak = std::weak_ptr<Session*>(m_self), done = std::move(done)](std::optional<EngineError> error) {
    done(std::move(error));
    // Looked up after the answer: whoever was answered may have deleted the session.
    if (auto self = weak.lock()) (*self)->release_hold();
  });
}

void Session::with_agent(std::function<void(Done)> work, Done done) {
  ensure_started([weak = std::weak_ptr<Session*>(m_self), work = std::move(work), done = std::move(done)](std::optional<EngineError> error) mutable {
    if (error) return done(std::move(error));
    if (weak.expired()) return done(EngineError{ErrorCode::UnknownSession, "the session was deleted"});
    work(std::move(done));
  });
}

void Session::release_hold() {
  m_held = false;
  if (!m_turn && !m_queue.empty()) drain_queue(/*after_stop=*/true);
}

void Session::rewind(const std::string& turn_id, bool conversation, bool files, RewindDone done) {
  if (busy()) {
    return done(EngineError{ErrorCode::SessionBusy, "session " + m_info.session_id + " has a turn running or prompts waiting; rewind once it is idle"});
  }
  // Held from here until answered, the checks included (the stored turns and the checkpoint log may be read
  // first): a prompt sent meanwhile queues behind the rewind, another fork, rewind or compaction is SessionBusy,
  // so nothing changes between the checks and the rewind.
  m_held = true;
  const auto weak = std::weak_ptr<Session*>(m_self);
  // Every way out goes through here: the answer (after session.rewound, when something changed), then the hold
  // ends and the prompts sent meanwhile run. Answered even if the session is deleted meanwhile.
  RewindDone answer = [weak, done = std::move(done)](Outcome<RewindOutcome> outcome) {
    done(std::move(outcome));
    if (auto self = weak.lock()) (*self)->release_hold();
  };
  answer = answered_or<Outcome<RewindOutcome>>(m_services.io(), std::move(answer), EngineError{ErrorCode::UnknownSession, "the session was deleted"});
  with_turns([this, weak, turn_id, conversation, files, answer]() {
    if (weak.expired()) return;
    std::vector<std::string> rewound;
    std::optional<std::string> native_ref;
    bool found = false;
    for (const auto& turn : m_turns) {
      if (turn.rewound) continue;
      if (turn.turn_id == turn_id) {
        found = true;
        native_ref = turn.native_ref;
      }
      if (found) rewound.push_back(turn.turn_id);
    }
    if (!found) {
      return answer(EngineError{ErrorCode::UnknownTurn, "session " + m_info.session_id + " has no turn " + turn_id.substr(0, 100) +
                                                            " to rewind to (or it was rewound already)"});
    }
    if (conversation && !capabilities().rewind) {
      return answer(EngineError{ErrorCode::Unsupported, m_info.agent + " cannot rewind its conversation"});
    }
    if (conversation && !native_ref) {
      return answer(EngineError{ErrorCode::Unsupported, m_info.agent + " named no reference for turn " + turn_id + ", so its conversation cannot be rewound there"});
    }
    // What was done is recorded, whatever the answer: the turns are marked rewound (in memory and in the store)
    // and every client hears session.rewound saying which parts were rewound.
    auto record = [weak, turn_id, rewound](bool conversation_rewound, const std::optional<checkpoint::Restored>& restored) {
      auto self = weak.lock();
      if (!self) return;
      Session& session = **self;
      for (auto& turn : session.m_turns) {
        if (std::find(rewound.begin(), rewound.end(), turn.turn_id) != rewound.end()) turn.rewound = true;
      }
      if (auto* persistence = session.m_services.persistence()) {
        persistence->mark_rewound(session.m_info.session_id, rewound, [id = session.m_info.session_id](std::optional<EngineError> failed) {
          if (failed) spdlog::error("session {}: the rewound turns could not be marked in the store: {}", id, failed->message);
        });
      }
      protocol::SessionRewoundEvent event;
      event.turn_id = turn_id;
      event.rewound_turn_ids = rewound;
      event.conversation = conversation_rewound;
      event.files = restored.has_value();
      if (restored) event.checkpoint_id = restored->before_id;
      session.publish(std::move(event));
    };
    // Files, after the conversation step: the tree goes back to the checkpoint `turn_id` started from.
    auto restore_files = [weak, turn_id, files, rewound, record, answer](bool conversation_rewound) {
      if (!files) {
        record(conversation_rewound, std::nullopt);
        return answer(RewindOutcome{rewound, std::nullopt});
      }
      auto self = weak.lock();
      if (!self) return;
      Session& session = **self;
      session.m_services.checkpoints().restore(
          session.m_info.session_id, session.m_info.cwd, turn_id,
          [rewound, record, answer, conversation_rewound](Outcome<checkpoint::Restored> restored) {
            if (const auto* failed = std::get_if<EngineError>(&restored)) {
              // The conversation is rewound already and stays so: that much is recorded, and the answer says why
              // the files are not (naming the checkpoint that undoes a partial restore, if there was one).
              if (conversation_rewound) record(true, std::nullopt);
              return answer(*failed);
            }
            auto files_restored = std::get<checkpoint::Restored>(std::move(restored));
            record(conversation_rewound, files_restored);
            answer(RewindOutcome{rewound, std::move(files_restored)});
          });
    };
    auto rewind_conversation = [weak, conversation, native_ref, restore_files, answer]() {
      if (!conversation) return restore_files(false);
      auto self = weak.lock();
      if (!self) return;
      (*self)->with_agent(
          [weak, ref = *native_ref](Done finished) {
            auto session = weak.lock();
            if (!session) return finished(EngineError{ErrorCode::UnknownSession, "the session was deleted"});
            (*session)->m_adapter->rewind(ref, (*session)->for_adapter([finished](std::optional<adapters::AdapterError> error) {
              finished(error ? std::optional<EngineError>(EngineError{error->code, error->message}) : std::nullopt);
            }));
          },
          [restore_files, answer](std::optional<EngineError> error) {
            if (error) return answer(*error);  // the agent refused or is gone: nothing changed
            restore_files(true);
          });
    };
    if (!files) return rewind_conversation();
    // A checkpoint to go back to is checked before anything changes.
    m_services.checkpoints().check_restorable(m_info.session_id, turn_id, [weak, rewind_conversation, answer](std::optional<EngineError> error) {
      if (error) return answer(*error);
      if (weak.expired()) return;
      rewind_conversation();
    });
  });
}

void Session::compact(Done done) {
  done = answered_or<std::optional<EngineError>>(m_services.io(), std::move(done), EngineError{ErrorCode::UnknownSession, "the session was deleted"});
  if (busy()) {
    return done(EngineError{ErrorCode::SessionBusy, "session " + m_info.session_id + " has a turn running or prompts waiting; compact once it is idle"});
  }
  if (!capabilities().compact) return done(EngineError{ErrorCode::Unsupported, m_info.agent + " cannot compact its conversation on request"});
  hold_for(
      [weak = std::weak_ptr<Session*>(m_self)](Done finished) {
        auto self = weak.lock();
        if (!self) return finished(EngineError{ErrorCode::UnknownSession, "the session was deleted"});
        (*self)->m_adapter->compact((*self)->for_adapter([finished](std::optional<adapters::AdapterError> error) {
          finished(error ? std::optional<EngineError>(EngineError{error->code, error->message}) : std::nullopt);
        }));
      },
      std::move(done));
}

void Session::stop_agent() {
  if (m_adapter) m_adapter->stop();
}

void Session::stop_for_shutdown(std::function<void()> stopped) {
  m_shutting_down = true;
  if (m_setup) {
    // Cut off while setting the worktree up, before any agent had the prompt: as for a turn an agent was running
    // (on_unavailable), the prompt stays stored (the session comes back interrupted, and the set-up runs again
    // before it unless it had succeeded), and the turn ends now for clients and for a send waiting for it.
    m_keep_stored_outstanding = true;  // first: ending the turn must not store the prompt as done
    if (m_turn) {
      const std::string turn_id = m_turn->turn_id;
      cut_setup_short(turn_id, "the daemon shut down");
      adapters::TurnResult failed;
      failed.stop_reason = protocol::StopReason::Error;
      failed.error = "the daemon shut down before the turn ended";
      on_turn_end(std::move(failed));
    } else {
      m_setup.reset();
    }
  }
  if (!m_adapter) return stopped();
  m_stop_waiters.push_back(std::move(stopped));
  m_adapter->stop();
}

void Session::drain_queue(bool after_stop) {
  if (m_turn || m_queue.empty() || m_shutting_down || m_held) return;  // the queue stays stored for after the restart
  if (m_agent_life == AgentLife::Died && !after_stop) return;  // no automatic restart loops
  Pending next = std::move(m_queue.front());
  m_queue.pop_front();
  start_turn(std::move(next.prompt.text), next.prompt.attachments.value_or(std::vector<protocol::Attachment>{}),
             std::move(next.model), next.prompt.queue_id, std::nullopt);
}

// ---- permission and question round trips: the broker's, answered through the agent --------------------------

void Session::on_permission_request(adapters::PermissionAsk ask) {
  if (outside_turn("a permission request")) {
    // Nobody can be asked about a turn that does not exist; the agent is told no rather than left waiting.
    if (!m_adapter) return;
    return m_adapter->answer_permission(ask.native_id, adapters::PermissionAnswer{false, std::string("no turn is running")},
                                        [](std::optional<adapters::AdapterError>) {});
  }
  m_services.requests().ask_permission(*this, m_info.session_id, m_info.cwd, m_turn->turn_id, std::move(ask));
}

void Session::on_question(adapters::QuestionAsk ask) {
  if (outside_turn("a question")) {
    if (!m_adapter) return;
    return m_adapter->answer_question(ask.native_id, adapters::QuestionAnswer{true, {}}, [](std::optional<adapters::AdapterError>) {});
  }
  m_services.requests().ask_question(*this, m_info.session_id, m_turn->turn_id, std::move(ask));
}

void Session::on_request_withdrawn(adapters::RequestWithdrawn event) {
  m_services.requests().withdraw(m_info.session_id, event.native_id);
}

void Session::deliver(const std::string& native_id, adapters::PermissionAnswer answer, adapters::Completion done) {
  // No agent any more (it stopped while the request was open): there is nobody to tell.
  if (!m_adapter) return done(std::nullopt);
  m_adapter->answer_permission(native_id, std::move(answer), for_adapter(std::move(done)));
}

void Session::deliver(const std::string& native_id, adapters::QuestionAnswer answer, adapters::Completion done) {
  if (!m_adapter) return done(std::nullopt);
  m_adapter->answer_question(native_id, std::move(answer), for_adapter(std::move(done)));
}

void Session::tear_down_requests() { m_services.requests().cancel_all(m_info.session_id); }

// ---- what the adapter reports ------------------------------------------------------------------------------

void Session::on_provider_session(adapters::ProviderSession event) {
  std::string& provider_session_id = event.provider_session_id;
  if (m_provider_session_id == provider_session_id) return;
  // A new id after a fork is the fork's: the session continues it, and resumes it from now on.
  m_fork_pending = false;
  m_fork_through.reset();
  m_provider_session_id = std::move(provider_session_id);
  // Recorded as a run, so that after a restart the session resumes the agent's own conversation.
  if (auto* persistence = m_services.persistence()) persistence->record_run(m_info.session_id, *m_provider_session_id);
}

bool Session::outside_turn(std::string_view what) {
  if (m_turn) return false;
  // Activity belongs to a turn, and every client shows it under one: what an agent reports between turns (late,
  // or meant for another conversation) is dropped, and said so in the log once per gap between turns.
  if (m_dropped_outside_turn++ == 0) {
    spdlog::warn("session {}: the agent reported {} while no turn was running; dropped", m_info.session_id, what);
  }
  return true;
}

std::string Session::message_id(const std::string& agent_message_id) const {
  // Agents number their messages in ways that repeat (per process, per turn, per API call); the turn id, which
  // never repeats within a session, makes the id one no other message of the session has, across agent and
  // daemon restarts alike. An agent's ids need only be unique within one turn.
  return m_turn->turn_id + "/" + agent_message_id;
}

void Session::on_delta(adapters::TextDelta event) {
  if (outside_turn("a message delta")) return;
  publish(protocol::MessageDeltaEvent{m_turn->turn_id, message_id(event.message_id), event.kind, std::move(event.text),
                                      std::move(event.parent_tool_call_id)});
}

void Session::on_message(adapters::MessageCompleted event) {
  if (outside_turn("a message")) return;
  // A sub-agent's text is not the answer to the user's prompt.
  if (event.kind == protocol::DeltaKind::Text && !event.parent_tool_call_id) m_turn->last_text = event.text;
  publish(protocol::MessageCompletedEvent{m_turn->turn_id, message_id(event.message_id), protocol::MessageCompletedEventRole::Assistant,
                                          event.kind, std::move(event.text), std::move(event.parent_tool_call_id)});
}

void Session::on_status(adapters::AgentStatus status) {
  publish(protocol::AgentStatusEvent{current_turn_id(), status.status,
                                     std::move(status.message), status.attempt, status.max_attempts,
                                     status.retry_delay_ms});
}

void Session::on_models(adapters::ModelsOffered event) {
  // A default model set in our configuration is what a session runs when it chose none, whatever the agent
  // itself would pick: when the agent offers that model, it is the one marked default.
  if (const auto configured = m_services.default_model(m_info.agent)) mark_default(event.models, *configured);
  m_services.models_reported(m_info.agent, event.models);
  if (same_models(m_info.models, event.models)) return;
  m_info.models = std::move(event.models);
  publish(protocol::SessionUpdatedEvent{m_info});
}

std::optional<std::string> Session::current_turn_id() const {
  if (!m_turn) return std::nullopt;
  return m_turn->turn_id;
}

// What the agent reports about the session as a whole: session info keeps the latest, so a client that
// attaches late sees it, and every client hears the change.
// The latest plan and usage are stored too, so session info has them after a restart: a plan at once (plans change
// a few times per turn), usage when the turn ends (it may change with every model request).
void Session::on_plan(adapters::PlanUpdate event) {
  m_info.plan = event.entries;
  publish(protocol::PlanUpdatedEvent{current_turn_id(), std::move(event.entries)});
  save_session();
}

void Session::on_usage(adapters::UsageUpdate event) {
  m_info.usage = event.usage;
  publish(protocol::UsageUpdatedEvent{current_turn_id(), std::move(event.usage)});
  if (m_turn) {
    m_usage_unsaved = true;
  } else {
    save_session();
  }
}

void Session::on_commands(adapters::CommandsOffered event) {
  m_info.commands = event.commands;
  publish(protocol::CommandsUpdatedEvent{std::move(event.commands)});
}

void Session::on_options(adapters::OptionsOffered event) {
  if (same_options(m_info.options, event.options)) return;
  m_info.options = std::move(event.options);
  // A change a session.setOption under way caused is announced once, by the engine, when the agent has taken it.
  if (m_option_changes > 0) {
    m_options_unannounced = true;
    return;
  }
  publish(protocol::SessionUpdatedEvent{m_info});
}

void Session::on_mcp_status(adapters::McpStatusReport event) {
  m_info.mcp_servers = event.servers;
  publish(protocol::McpStatusEvent{std::move(event.servers)});
}

void Session::on_tool_started(adapters::ToolStarted event) {
  if (outside_turn("a tool call")) return;
  std::optional<std::vector<protocol::FileDiff>> diffs;
  if (!event.diffs.empty()) diffs = std::move(event.diffs);
  publish(protocol::ToolStartedEvent{m_turn->turn_id, std::move(event.tool_call_id), std::move(event.tool), std::move(event.input),
                                     std::move(event.parent_tool_call_id), std::move(diffs)});
}

void Session::on_tool_output(adapters::ToolOutput event) {
  if (outside_turn("a tool's output")) return;
  publish(protocol::ToolOutputEvent{m_turn->turn_id, std::move(event.tool_call_id), std::move(event.text)});
}

void Session::on_tool_completed(adapters::ToolCompleted event) {
  if (outside_turn("a tool's result")) return;
  publish(protocol::ToolCompletedEvent{m_turn->turn_id, std::move(event.tool_call_id), std::move(event.output), event.is_error});
}

void Session::on_error(adapters::AgentErrorReport error) {
  publish(protocol::AgentErrorEvent{std::move(error.message), error.recoverable,
                                    m_turn ? std::optional<std::string>(m_turn->turn_id) : std::nullopt});
}

void Session::on_turn_end(adapters::TurnResult result) {
  if (!m_turn) return;
  tear_down_requests();
  Turn turn = std::move(*m_turn);
  m_turn.reset();
  if (result.text.empty()) result.text = turn.last_text;
  // The turn, with the agent's reference for it: what fork and rewind hand back to the agent later.
  m_turns.push_back(TurnRecord{turn.turn_id, result.native_turn_ref, false});
  if (auto* persistence = m_services.persistence()) {
    persistence->record_turn(m_info.session_id, m_turns.back());
    if (std::exchange(m_usage_unsaved, false)) save_session();
  }
  protocol::TurnStoppedEvent stopped;
  stopped.turn_id = turn.turn_id;
  stopped.stop_reason = result.stop_reason;
  if (!result.text.empty()) stopped.text = result.text;
  stopped.usage = result.usage;
  stopped.error = result.error;
  publish(stopped);
  // An agent that died ends its turn with `stopped` (on_unavailable), not idle.
  if (m_agent_life != AgentLife::Died) set_state(protocol::SessionState::Idle);
  if (turn.waiter) {
    protocol::SessionSendResult summary;
    summary.queued = false;
    summary.turn_id = turn.turn_id;
    summary.stop_reason = result.stop_reason;
    if (!result.text.empty()) summary.text = result.text;
    summary.usage = result.usage;
    (*turn.waiter)(summary);
  }
  drain_queue();
  save_outstanding();
}

void Session::on_unavailable(adapters::Unavailable event) {
  std::string& reason = event.reason;
  // The agent is gone for good: end the running turn as an error, then report stopped. Queued prompts stay
  // queued (never dropped): the next send restarts the agent and they run after it.
  set_agent_life(AgentLife::Died);
  if (m_turn) {
    adapters::TurnResult failed;
    failed.stop_reason = protocol::StopReason::Error;
    failed.error = m_shutting_down ? "the daemon shut down before the turn ended" : "the agent stopped: " + reason;
    // A turn cut off by the shutdown is not over for the user: its prompt stays stored and the session comes
    // back interrupted after the restart (session.resume runs it again).
    if (m_shutting_down) m_keep_stored_outstanding = true;
    on_turn_end(std::move(failed));
  }
  // The adapter may be the caller: destroy it after this call returns.
  boost::asio::post(m_services.io(), [adapter = std::shared_ptr<adapters::AgentAdapter>(std::move(m_adapter))] {});
  set_state(protocol::SessionState::Stopped, std::move(reason));  // with its reason: announced even if stopped already
  notify_stopped();
}

}  // namespace switchboard::engine
