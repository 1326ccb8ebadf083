#include "daemon/EventLogMethods.h"

#include <algorithm>

#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include "switchboard/json/DecodeContext.h"
#include "switchboard/protocol/generated/Methods.h"

namespace switchboard::daemon {
namespace {

namespace p = protocol;
constexpr std::int64_t kDefaultPageSize = 200;

void fail(rpc::Reply<p::SessionEventsResult>& reply, const store::StoreError& error) {
  spdlog::error("store: reading session events failed: {}", error);
  reply(rpc::RpcError{p::ErrorCode::StoreFailure, "reading the session's events failed", nullptr});
}

// The stored bytes are exactly what the egress sent; they decode as the schema's envelope.
p::SessionEventsResult decoded(const store::EventLog::Events& events) {
  p::SessionEventsResult result;
  result.events.reserve(events.size());
  for (const auto& event : events) {
    p::EventEnvelope envelope;
    json::DecodeContext context;
    if (!p::decode(nlohmann::json::parse(event->json, nullptr, false), envelope, context)) {
      spdlog::error("store: event {} does not decode as an envelope at {}; skipped", event->seq, context.error().pointer);
      continue;
    }
    result.events.push_back(std::move(envelope));
  }
  return result;
}

// session.events of a session the engine knows.
void read_events(const p::SessionEventsParams& params, rpc::Reply<p::SessionEventsResult> reply, EventLogAccess& event_log) {
  if (event_log.log == nullptr) {
    return reply(rpc::RpcError{p::ErrorCode::Unsupported, "this daemon keeps no event log (it runs --ephemeral)", nullptr});
  }
  const auto after = static_cast<std::uint64_t>(params.after_seq.value_or(0));
  const auto limit = static_cast<std::size_t>(params.limit.value_or(kDefaultPageSize));
  auto shared = std::make_shared<rpc::Reply<p::SessionEventsResult>>(std::move(reply));
  // Fixed at open, so read now: the callback then needs nothing from the log.
  auto lost = event_log.log->lost_after(after);
  if (params.before_seq) {
    const auto before = static_cast<std::uint64_t>(*params.before_seq);
    event_log.log->session_events_before(
        params.session_id, after, before, limit,
        [shared, after, before, limit, lost = std::move(lost)](store::StoreResult<store::EventLog::Events> events) {
          if (!events) return fail(*shared, events.error());
          p::SessionEventsResult result = decoded(*events);
          const bool full = events->size() == limit && !events->empty();
          if (full) result.next_before_seq = static_cast<std::int64_t>(events->front()->seq);
          // This page spans the seqs below `before` down to its first event when it is full (the rest is the
          // next page's), else down to afterSeq. A lost range never straddles an event's seq.
          const std::uint64_t floor = full ? events->front()->seq : after;
          for (const auto& range : lost) {
            if (range.first >= before || range.last <= floor) continue;
            if (!result.gaps) result.gaps.emplace();
            result.gaps->push_back(p::SeqGap{static_cast<std::int64_t>(range.first),
                                             static_cast<std::int64_t>(std::min(range.last, before - 1))});
          }
          (*shared)(std::move(result));
        });
    return;
  }
  event_log.log->session_events(params.session_id, after, limit, [shared, limit, lost = std::move(lost)](store::StoreResult<store::EventLog::Events> events) {
    if (!events) return fail(*shared, events.error());
    p::SessionEventsResult result = decoded(*events);
    const bool full = events->size() == limit && !events->empty();
    if (full) result.next_after_seq = static_cast<std::int64_t>(events->back()->seq);
    // Seqs lost in a crash are global: any of them within this page's span may have been this session's.
    for (const auto& range : lost) {
      if (full && range.first > events->back()->seq) break;  // the next page's
      if (!result.gaps) result.gaps.emplace();
      result.gaps->push_back(p::SeqGap{static_cast<std::int64_t>(range.first), static_cast<std::int64_t>(range.last)});
    }
    (*shared)(std::move(result));
  });
}

}  // namespace

void bind_event_log_methods(rpc::Dispatcher& dispatcher, engine::Engine& engine, EventLogAccess& event_log) {
  dispatcher.bind<p::SessionEventsMethod>([&engine, &event_log](const p::SessionEventsParams& params,
                                                              rpc::Reply<p::SessionEventsResult> reply,
                                                              const rpc::CallContext&) {
    auto waiting = std::make_shared<rpc::Reply<p::SessionEventsResult>>(std::move(reply));
    engine.get_session(params.session_id, [params, waiting, &event_log](const engine::Outcome<p::SessionInfo>& session) {
      if (const auto* error = std::get_if<engine::EngineError>(&session)) {
        return (*waiting)(rpc::RpcError{error->code, error->message, nullptr});
      }
      read_events(params, std::move(*waiting), event_log);
    });
  });
}

}  // namespace switchboard::daemon
