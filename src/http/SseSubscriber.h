#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <boost/asio/steady_timer.hpp>
#include <boost/beast/core/tcp_stream.hpp>

#include "http/SseHub.h"

namespace switchboard::http {

// One client of GET /events after the response head: a bounded queue of shared frames, one write in flight.
//
// A client that falls further behind than the hub's limits is disconnected (and logged) instead of growing
// memory or slowing anyone else; it reconnects with Last-Event-ID and catches up from the replay buffer. A client that
// vanishes is noticed by a pending one-byte read (EventSource never sends anything after its request) or by
// the write timeout. Heartbeat comments keep proxies and idle timers from closing a quiet stream.
class SseSubscriber : public std::enable_shared_from_this<SseSubscriber> {
 public:
  SseSubscriber(boost::beast::tcp_stream stream, SseHub& hub, std::optional<std::string> session_filter,
             std::string remote);
  ~SseSubscriber();

  // Sends `head` (the HTTP response head), the retry hint, then the replay after `last_event_id` (if any), then
  // live frames.
  void start(std::string head, std::optional<std::uint64_t> last_event_id);
  void push(const SseFramePtr& frame);
  void close(std::string_view reason);
  // Closes once everything queued so far has been written.
  void finish();

 private:
  void enqueue(SseFramePtr frame);
  void write_next();
  void watch_for_close();
  void schedule_heartbeat();
  bool wanted(const SseFrame& frame) const;
  // Catch-up from the archive: pages of events in (after, through], then the frames held meanwhile.
  void read_archive(std::uint64_t after, std::uint64_t through);
  void finish_catch_up();
  // Queues a frame for the client, or holds it while the catch-up runs; false if the client fell too far behind.
  bool accept(SseFramePtr frame);

  boost::beast::tcp_stream m_stream;
  SseHub& m_hub;
  std::optional<std::string> m_session_filter;
  std::string m_remote;
  boost::asio::steady_timer m_heartbeat;
  std::deque<SseFramePtr> m_queue;
  bool m_catching_up = false;
  std::deque<SseFramePtr> m_held;  // newer frames (replay buffer, live) waiting for the archive's older ones
  std::size_t m_held_bytes = 0;
  std::size_t m_queued_bytes = 0;
  std::vector<SseFramePtr> m_in_flight;
  bool m_writing = false;
  bool m_closed = false;
  bool m_finishing = false;
  bool m_sent_since_heartbeat = false;
  char m_probe = 0;
  std::string m_client_id;  // announced on the bus: a watching browser can answer permission requests
};

}  // namespace switchboard::http
