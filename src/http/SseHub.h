#pragma once

#include <chrono>
#include <cstdint>
#include <algorithm>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "switchboard/bus/EncodedEvent.h"

namespace switchboard::http {

class SseSubscriber;

// One event formatted as an SSE frame, once, shared by every client that receives it.
struct SseFrame {
  std::uint64_t seq = 0;  // 0 for frames that are not events (heartbeats, gap notices)
  std::string session_id;
  std::string bytes;
};
using SseFramePtr = std::shared_ptr<const SseFrame>;

struct SseLimits {
  std::size_t replay_events = 10000;             // retained for Last-Event-ID replay
  std::size_t replay_bytes = 64 * 1024 * 1024;
  std::size_t client_queue_frames = 4096;         // a client further behind than this is cut off
  std::size_t client_queue_bytes = 8 * 1024 * 1024;
  std::chrono::milliseconds heartbeat{15000};
  std::chrono::milliseconds write_timeout{30000};
  std::chrono::milliseconds retry_hint{2000};
};

// One read from the durable log: events, and the seq ranges above `after` whose events were lost in a crash
// (delivered once, never stored), each announced to the client as a gap where it falls.
struct ArchivePage {
  std::vector<bus::EncodedEventPtr> events;
  std::vector<std::pair<std::uint64_t, std::uint64_t>> lost;  // [from, to], in order
};

// Reads events older than the in-memory replay buffer from the durable log: at most `limit` events with seq >
// `after`, oldest first; `done` gets nullopt if the log could not be read. Answers on the io_context thread.
using EventArchive =
    std::function<void(std::uint64_t after, std::size_t limit, std::function<void(std::optional<ArchivePage>)> done)>;

// The egress sink for Server-Sent Events: formats each event into a frame, keeps a bounded replay buffer for
// reconnecting clients, and fans frames out to the connected SseSubscribers. Single-threaded (io_context).
// With an archive (the durable event log), a Last-Event-ID older than the replay buffer is served from the log,
// also across daemon restarts; without one, the client gets an explicit `gap` event for what is gone.
class SseHub : public bus::EventSink {
 public:
  explicit SseHub(SseLimits limits) : m_limits(limits) {}

  // Events up to `seq` were emitted before this hub existed (an earlier run of the daemon): they are not in
  // memory, so a replay that needs them asks the archive (or reports them as a gap).
  void set_floor(std::uint64_t seq) {
    m_evicted_through = std::max(m_evicted_through, seq);
    m_last_seq = std::max(m_last_seq, seq);
  }
  void set_archive(EventArchive archive) { m_archive = std::move(archive); }
  const EventArchive& archive() const { return m_archive; }

  void on_event(const bus::EncodedEventPtr& event) override;

  // What a client that has seen everything up to `last_seen` must receive before the live stream.
  struct Replay {
    std::optional<std::pair<std::uint64_t, std::uint64_t>> gap;  // [from, to] no longer retained
    std::vector<SseFramePtr> frames;
  };
  Replay replay_after(std::uint64_t last_seen) const;

  void attach(const std::shared_ptr<SseSubscriber>& subscriber);
  void detach(SseSubscriber* subscriber);
  // Shutdown, gently: each client is closed once its queue has drained.
  void finish_all();
  // Calls `callback` once no client is attached any more.
  void on_empty(std::function<void()> callback);
  // Shutdown, now: closes every client.
  void stop_all();
  // Closes every client now, for `reason` (a rotated token: their streams were opened with the old one).
  void close_all(std::string_view reason);

  const SseLimits& limits() const { return m_limits; }
  std::size_t client_count() const { return m_subscribers.size(); }
  std::uint64_t last_seq() const { return m_last_seq; }

  static std::string format_frame(std::uint64_t seq, std::string_view json);

 private:
  SseLimits m_limits;
  std::deque<SseFramePtr> m_replay;
  std::size_t m_replay_bytes = 0;
  std::uint64_t m_evicted_through = 0;  // highest seq dropped from the replay buffer
  std::uint64_t m_last_seq = 0;
  std::vector<std::shared_ptr<SseSubscriber>> m_subscribers;
  std::function<void()> m_on_empty;
  EventArchive m_archive;
};

}  // namespace switchboard::http
