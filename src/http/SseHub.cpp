#include "http/SseHub.h"

#include <algorithm>
#include <charconv>

#include "http/SseSession.h"

namespace switchboard::http {

std::string SseHub::format_frame(std::uint64_t seq, std::string_view json) {
  // Compact JSON has no raw newline, so one data: line carries the whole event.
  std::string frame;
  frame.reserve(json.size() + 32);
  char digits[24];
  const auto end = std::to_chars(digits, digits + sizeof digits, seq).ptr;
  frame.append("id: ").append(digits, end).append("\ndata: ").append(json).append("\n\n");
  return frame;
}

void SseHub::on_event(const bus::EncodedEventPtr& event) {
  auto frame = std::make_shared<SseFrame>();
  frame->seq = event->seq;
  frame->session_id = event->session_id;
  frame->bytes = format_frame(event->seq, event->json);
  const SseFramePtr shared = std::move(frame);
  m_last_seq = event->seq;

  m_history.push_back(shared);
  m_history_bytes += shared->bytes.size();
  while (!m_history.empty() &&
         (m_history.size() > m_limits.history_events || m_history_bytes > m_limits.history_bytes)) {
    m_evicted_through = m_history.front()->seq;
    m_history_bytes -= m_history.front()->bytes.size();
    m_history.pop_front();
  }
  // Index loop: a session that overflows detaches itself while we iterate.
  for (std::size_t i = 0; i < m_sessions.size();) {
    const auto* before = m_sessions[i].get();
    m_sessions[i]->push(shared);
    if (i < m_sessions.size() && m_sessions[i].get() == before) ++i;
  }
}

SseHub::Replay SseHub::replay_after(std::uint64_t last_seen) const {
  Replay replay;
  if (last_seen < m_evicted_through) replay.gap = std::make_pair(last_seen + 1, m_evicted_through);
  const auto first = std::lower_bound(m_history.begin(), m_history.end(), last_seen + 1,
                                      [](const SseFramePtr& frame, std::uint64_t seq) { return frame->seq < seq; });
  replay.frames.assign(first, m_history.end());
  return replay;
}

void SseHub::attach(const std::shared_ptr<SseSession>& session) { m_sessions.push_back(session); }

void SseHub::detach(SseSession* session) {
  std::erase_if(m_sessions, [session](const std::shared_ptr<SseSession>& s) { return s.get() == session; });
  if (m_sessions.empty() && m_on_empty) std::exchange(m_on_empty, nullptr)();
}

void SseHub::finish_all() {
  const auto sessions = m_sessions;  // finishing may detach
  for (const auto& session : sessions) session->finish();
}

void SseHub::on_empty(std::function<void()> callback) {
  if (m_sessions.empty()) return callback();
  m_on_empty = std::move(callback);
}

void SseHub::stop_all() {
  const auto sessions = m_sessions;  // close() detaches
  for (const auto& session : sessions) session->close("daemon shutting down");
  m_sessions.clear();
}

}  // namespace switchboard::http
