#include "http/SseSubscriber.h"

#include <boost/asio/write.hpp>
#include <spdlog/spdlog.h>

#include "switchboard/bus/EventBus.h"
#include "switchboard/support/RandomId.h"

namespace switchboard::http {
namespace {

constexpr std::size_t kFramesPerWrite = 256;
// Events read from the archive per store round trip while a client catches up.
constexpr std::size_t kArchivePageEvents = 2048;

SseFramePtr make_frame(std::string bytes) {
  auto frame = std::make_shared<SseFrame>();
  frame->bytes = std::move(bytes);
  return frame;
}

// Events from..to cannot be replayed: the client should refetch state.
SseFramePtr gap_frame(std::uint64_t from, std::uint64_t to) {
  return make_frame("event: gap\ndata: {\"from\":" + std::to_string(from) + ",\"to\":" + std::to_string(to) +
                    "}\n\n");
}

}  // namespace

SseSubscriber::SseSubscriber(boost::beast::tcp_stream stream, SseHub& hub, std::optional<std::string> session_filter,
                       std::string remote)
    : m_stream(std::move(stream)),
      m_hub(hub),
      m_session_filter(std::move(session_filter)),
      m_remote(std::move(remote)),
      m_heartbeat(m_stream.get_executor()) {}

SseSubscriber::~SseSubscriber() = default;

bool SseSubscriber::wanted(const SseFrame& frame) const {
  if (!m_session_filter || frame.seq == 0 || frame.session_id.empty()) return true;  // global events go to all
  return frame.session_id == *m_session_filter;
}

void SseSubscriber::start(std::string head, std::optional<std::uint64_t> last_event_id) {
  enqueue(make_frame(std::move(head) + "retry: " + std::to_string(m_hub.limits().retry_hint.count()) + "\n\n"));
  if (last_event_id) {
    auto replay = m_hub.replay_after(*last_event_id);
    if (replay.gap && m_hub.archive()) {
      // Older than memory: the durable log has them. What memory has, and what is published meanwhile, is held
      // back and follows the archive's events, so the client sees every seq in order, once.
      m_catching_up = true;
      for (auto& frame : replay.frames) {
        if (wanted(*frame)) m_held.push_back(std::move(frame));
      }
      read_archive(*last_event_id, replay.gap->second);
    } else {
      if (replay.gap) {
        // Explicit, so the client knows to refetch state instead of silently missing events.
        enqueue(gap_frame(replay.gap->first, replay.gap->second));
      }
      for (auto& frame : replay.frames) {
        if (wanted(*frame)) enqueue(std::move(frame));
      }
    }
  }
  // Nothing can be published between the replay above and this attach (one thread), so no hole, no duplicate.
  m_hub.attach(shared_from_this());
  m_client_id = random_id("sse-", 6);
  if (bus::EventBus::installed()) {
    bus::EventBus::the().publish_global(protocol::ClientAttachedEvent{m_client_id, protocol::Transport::Http, true});
  }
  watch_for_close();
  schedule_heartbeat();
  write_next();
}

void SseSubscriber::push(const SseFramePtr& frame) {
  if (m_closed || !wanted(*frame)) return;
  if (accept(frame)) write_next();
}

bool SseSubscriber::accept(SseFramePtr frame) {
  const auto& limits = m_hub.limits();
  const std::size_t frames = m_queue.size() + m_held.size();
  const std::size_t bytes = m_queued_bytes + m_held_bytes;
  if (frames + 1 > limits.client_queue_frames || bytes + frame->bytes.size() > limits.client_queue_bytes) {
    spdlog::warn("sse: client {} fell behind ({} frames, {} bytes queued); disconnecting it", m_remote, frames, bytes);
    close("too slow");
    return false;
  }
  if (m_catching_up) {
    m_held_bytes += frame->bytes.size();
    m_held.push_back(std::move(frame));
  } else {
    enqueue(std::move(frame));
  }
  return true;
}

void SseSubscriber::read_archive(std::uint64_t after, std::uint64_t through) {
  m_hub.archive()(after, kArchivePageEvents,
                  [self = shared_from_this(), after, through](std::optional<ArchivePage> page) {
                    if (self->m_closed) return;
                    if (!page) {
                      spdlog::warn("sse: the event log could not be read for client {}; sending a gap", self->m_remote);
                      self->enqueue(gap_frame(after + 1, through));
                      return self->finish_catch_up();
                    }
                    // Lost ranges go out where they fall among the events, clipped to what memory does not hold.
                    std::size_t next_lost = 0;
                    const auto announce_lost_through = [&](std::uint64_t seq) {
                      for (; next_lost < page->lost.size() && page->lost[next_lost].first <= seq; ++next_lost) {
                        const auto [from, to] = page->lost[next_lost];
                        if (from <= through && to > after) {
                          self->enqueue(gap_frame(std::max(from, after + 1), std::min(to, through)));
                        }
                      }
                    };
                    const auto& events = page->events;
                    std::uint64_t reached = after;
                    for (const auto& event : events) {
                      if (event->seq > through) break;  // memory has it (held)
                      announce_lost_through(event->seq);
                      reached = event->seq;
                      auto frame = std::make_shared<SseFrame>();
                      frame->seq = event->seq;
                      frame->session_id = event->session_id;
                      frame->bytes = SseHub::format_frame(event->seq, event->json);
                      if (self->wanted(*frame)) self->enqueue(std::move(frame));
                    }
                    // A full page that stopped short of memory: there is more in the log.
                    if (events.size() == kArchivePageEvents && reached < through && reached > after) {
                      self->write_next();
                      return self->read_archive(reached, through);
                    }
                    announce_lost_through(through);
                    self->finish_catch_up();
                  });
}

void SseSubscriber::finish_catch_up() {
  m_catching_up = false;
  while (!m_held.empty()) {
    enqueue(std::move(m_held.front()));
    m_held.pop_front();
  }
  m_held_bytes = 0;
  write_next();
  if (m_finishing && !m_writing && m_queue.empty()) close("finished");
}

void SseSubscriber::enqueue(SseFramePtr frame) {
  m_queued_bytes += frame->bytes.size();
  m_queue.push_back(std::move(frame));
}

void SseSubscriber::write_next() {
  if (m_writing || m_closed || m_queue.empty()) return;
  m_writing = true;
  std::vector<boost::asio::const_buffer> buffers;
  while (!m_queue.empty() && m_in_flight.size() < kFramesPerWrite) {
    m_in_flight.push_back(std::move(m_queue.front()));
    m_queue.pop_front();
    buffers.emplace_back(m_in_flight.back()->bytes.data(), m_in_flight.back()->bytes.size());
  }
  m_stream.expires_after(m_hub.limits().write_timeout);
  boost::asio::async_write(m_stream, buffers, [self = shared_from_this()](const boost::system::error_code& error, std::size_t) {
    self->m_writing = false;
    for (const auto& frame : self->m_in_flight) self->m_queued_bytes -= frame->bytes.size();
    self->m_in_flight.clear();
    if (error) {
      self->close(error == boost::beast::error::timeout ? "write timed out" : "write failed");
      return;
    }
    self->m_sent_since_heartbeat = true;
    if (self->m_finishing && self->m_queue.empty() && !self->m_catching_up) return self->close("finished");
    self->write_next();
  });
}

void SseSubscriber::watch_for_close() {
  // An EventSource sends nothing after its request, so any completion here (EOF, reset, stray bytes) ends it.
  m_stream.socket().async_read_some(boost::asio::buffer(&m_probe, 1),
                                    [self = shared_from_this()](const boost::system::error_code&, std::size_t) {
                                      self->close("client went away");
                                    });
}

void SseSubscriber::schedule_heartbeat() {
  m_heartbeat.expires_after(m_hub.limits().heartbeat);
  m_heartbeat.async_wait([weak = weak_from_this()](const boost::system::error_code& error) {
    auto self = weak.lock();
    if (error || !self || self->m_closed) return;
    if (!self->m_sent_since_heartbeat && self->m_queue.empty()) {
      self->enqueue(make_frame(": ping\n\n"));
      self->write_next();
    }
    self->m_sent_since_heartbeat = false;
    self->schedule_heartbeat();
  });
}

void SseSubscriber::finish() {
  m_finishing = true;
  if (!m_writing && m_queue.empty() && !m_catching_up) close("finished");
}

void SseSubscriber::close(std::string_view reason) {
  if (m_closed) return;
  m_closed = true;
  spdlog::debug("sse: closing client {}: {}", m_remote, reason);
  m_heartbeat.cancel();
  m_queue.clear();
  m_held.clear();
  m_held_bytes = 0;
  boost::system::error_code ignored;
  m_stream.socket().shutdown(boost::asio::ip::tcp::socket::shutdown_both, ignored);
  m_stream.socket().close(ignored);
  if (!m_client_id.empty() && bus::EventBus::installed()) {
    bus::EventBus::the().publish_global(protocol::ClientDetachedEvent{m_client_id});
  }
  m_hub.detach(this);  // may release the hub's reference; the pending ops keep us alive until they finish
}

}  // namespace switchboard::http
