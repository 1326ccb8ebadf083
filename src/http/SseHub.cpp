#include "http/SseHub.h"

#include <algorithm>
#include <charconv>

#include "http/SseSubscriber.h"

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

  m_replay.push_back(shared);
  m_replay_bytes += shared->bytes.size();
  while (!m_replay.empty() &&
         (m_replay.size() > m_limits.replay_events || m_replay_bytes > m_limits.replay_bytes)) {
    m_evicted_through = m_replay.front()->seq;
    m_replay_bytes -= m_replay.front()->bytes.size();
    m_replay.pop_front();
  }
  // Index loop: a subscriber that overflows detaches itself while we iterate.
  for (std::size_t i = 0; i < m_subscribers.size();) {
    const auto* before = m_subscribers[i].get();
    m_subscribers[i]->push(shared);
    if (i < m_subscribers.size() && m_subscribers[i].get() == before) ++i;
  }
}

SseHub::Replay SseHub::replay_after(std::uint64_t last_seen) const {
  Replay replay;
  if (last_seen < m_evicted_through) replay.gap = std::make_pair(last_seen + 1, m_evicted_through);
  const auto first = std::lower_bound(m_replay.begin(), m_replay.end(), last_seen + 1,
                                      [](const SseFramePtr& frame, std::uint64_t seq) { return frame->seq < seq; });
  replay.frames.assign(first, m_replay.end());
  return replay;
}

void SseHub::attach(const std::shared_ptr<SseSubscriber>& subscriber) { m_subscribers.push_back(subscriber); }

void SseHub::detach(SseSubscriber* subscriber) {
  std::erase_if(m_subscribers, [subscriber](const std::shared_ptr<SseSubscriber>& s) { return s.get() == subscriber; });
  if (m_subscribers.empty() && m_on_empty) std::exchange(m_on_empty, nullptr)();
}

void SseHub::finish_all() {
  const auto subscribers = m_subscribers;  // finishing may detach
  for (const auto& subscriber : subscribers) subscriber->finish();
}

void SseHub::on_empty(std::function<void()> callback) {
  if (m_subscribers.empty()) return callback();
  m_on_empty = std::move(callback);
}

void SseHub::stop_all() {
  close_all("daemon shutting down");
  m_subscribers.clear();
}

void SseHub::close_all(std::string_view reason) {
  const auto subscribers = m_subscribers;  // close() detaches
  for (const auto& subscriber : subscribers) subscriber->close(reason);
}

}  // namespace switchboard::http
