#include "daemon/SearchMethods.h"

#include <charconv>
#include <memory>

#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include "daemon/SessionMarkdown.h"
#include "switchboard/json/DecodeContext.h"
#include "switchboard/json/JsonWriter.h"
#include "switchboard/protocol/generated/Methods.h"

namespace switchboard::daemon {
namespace {

namespace p = protocol;
constexpr std::size_t kDefaultHits = 20;
// Pages of the ranked list are offsets into it; this many hits deep is as far as anyone reads.
constexpr std::size_t kMaxOffset = 100'000;
// session.export reads the session's events in pages of this many.
constexpr std::size_t kExportPage = 1000;
constexpr std::string_view kCursorPrefix = "s1.";

rpc::RpcError invalid_param(std::string pointer, std::string message) {
  return rpc::RpcError{p::ErrorCode::InvalidParams, std::move(message), nlohmann::json{{"pointer", std::move(pointer)}}};
}

rpc::RpcError no_event_log() {
  return rpc::RpcError{p::ErrorCode::Unsupported, "this daemon keeps no event log (it runs --ephemeral)", nullptr};
}

// The cursor is opaque to clients: a version prefix and the offset of the next hit in the ranked list.
std::string encode_cursor(std::size_t offset) { return std::string(kCursorPrefix) + std::to_string(offset); }

std::optional<std::size_t> decode_cursor(std::string_view cursor) {
  if (!cursor.starts_with(kCursorPrefix)) return std::nullopt;
  cursor.remove_prefix(kCursorPrefix.size());
  std::size_t offset = 0;
  const auto [end, error] = std::from_chars(cursor.data(), cursor.data() + cursor.size(), offset);
  if (error != std::errc() || end != cursor.data() + cursor.size() || offset > kMaxOffset) return std::nullopt;
  return offset;
}

void search(const p::SessionSearchParams& params, rpc::Reply<p::SessionSearchResult> reply, EventLogAccess& event_log) {
  if (event_log.log == nullptr) return reply(no_event_log());
  if (!store::fts_match_expression(params.query)) return reply(invalid_param("/query", "the query has no word to search for"));
  store::SearchQuery query;
  query.text = params.query;
  query.agent = params.agent;
  query.cwd = params.cwd;
  query.since = params.since;
  query.limit = params.limit ? static_cast<std::size_t>(*params.limit) : kDefaultHits;
  if (params.cursor) {
    const auto offset = decode_cursor(*params.cursor);
    if (!offset) return reply(invalid_param("/cursor", "not a cursor session.search gave"));
    query.offset = *offset;
  }
  const std::size_t next_offset = query.offset + query.limit;
  auto shared = std::make_shared<rpc::Reply<p::SessionSearchResult>>(std::move(reply));
  event_log.log->search(std::move(query), [shared, next_offset](store::StoreResult<store::SearchPage> page) {
    if (!page) {
      spdlog::error("store: search failed: {}", page.error());
      return (*shared)(rpc::RpcError{p::ErrorCode::StoreFailure, "searching the event log failed", nullptr});
    }
    p::SessionSearchResult result;
    result.hits.reserve(page->hits.size());
    for (auto& hit : page->hits) {
      result.hits.push_back(p::SearchHit{std::move(hit.session_id), std::move(hit.turn_id), static_cast<std::int64_t>(hit.seq),
                                         std::move(hit.type), std::move(hit.snippet)});
    }
    if (page->more && next_offset <= kMaxOffset) result.next_cursor = encode_cursor(next_offset);
    (*shared)(std::move(result));
  });
}

// Reads every stored event of one session, page after page on the store thread, then answers with the
// document. Holds itself alive through the callbacks it hands the log.
class SessionExportJob : public std::enable_shared_from_this<SessionExportJob> {
 public:
  SessionExportJob(store::EventLog& log, p::SessionInfo session, p::SessionExportParamsFormat format,
                   rpc::Reply<p::SessionExportResult> reply)
      : m_log(log), m_session(std::move(session)), m_format(format), m_reply(std::move(reply)) {}

  void read_after(std::uint64_t after_seq) {
    m_log.session_events(m_session.session_id, after_seq, kExportPage,
                         [self = shared_from_this()](store::StoreResult<store::EventLog::Events> page) { self->on_page(std::move(page)); });
  }

 private:
  void on_page(store::StoreResult<store::EventLog::Events> page) {
    if (!page) {
      spdlog::error("store: reading session events for export failed: {}", page.error());
      return m_reply(rpc::RpcError{p::ErrorCode::StoreFailure, "reading the session's events failed", nullptr});
    }
    for (const auto& event : *page) {
      // The same decoding session.events does: the export holds what its pages hold.
      p::EventEnvelope envelope;
      json::DecodeContext context;
      if (!p::decode(nlohmann::json::parse(event->json, nullptr, false), envelope, context)) {
        spdlog::error("store: event {} does not decode as an envelope at {}; left out of the export", event->seq,
                      context.error().pointer);
        continue;
      }
      m_events.push_back(std::move(envelope));
    }
    if (page->size() == kExportPage) return read_after(page->back()->seq);
    finish();
  }

  void finish() {
    p::SessionExportResult result;
    if (m_format == p::SessionExportParamsFormat::Markdown) {
      result.content = render_session_markdown(m_session, m_events);
      return m_reply(std::move(result));
    }
    p::SessionExport document;
    document.format = p::SessionExportFormat::SwitchboardSessionExport;
    document.version = 1;
    document.session = std::move(m_session);
    document.events = std::move(m_events);
    for (const auto& range : m_log.lost_after(0)) {
      if (!document.gaps) document.gaps.emplace();
      document.gaps->push_back(p::SeqGap{static_cast<std::int64_t>(range.first), static_cast<std::int64_t>(range.last)});
    }
    {
      json::JsonWriter writer(result.content);
      p::encode(writer, document);
    }
    m_reply(std::move(result));
  }

  store::EventLog& m_log;
  p::SessionInfo m_session;
  p::SessionExportParamsFormat m_format;
  rpc::Reply<p::SessionExportResult> m_reply;
  std::vector<p::EventEnvelope> m_events;
};

void export_session(const p::SessionExportParams& params, rpc::Reply<p::SessionExportResult> reply,
                    engine::Engine& engine, EventLogAccess& event_log) {
  auto shared = std::make_shared<rpc::Reply<p::SessionExportResult>>(std::move(reply));
  engine.get_session(params.session_id, [shared, format = params.format, &event_log](engine::Outcome<p::SessionInfo> session) {
    if (const auto* error = std::get_if<engine::EngineError>(&session)) {
      return (*shared)(rpc::RpcError{error->code, error->message, nullptr});
    }
    if (event_log.log == nullptr) return (*shared)(no_event_log());
    std::make_shared<SessionExportJob>(*event_log.log, std::move(std::get<p::SessionInfo>(session)), format, std::move(*shared))
        ->read_after(0);
  });
}

}  // namespace

void bind_search_methods(rpc::Dispatcher& dispatcher, engine::Engine& engine, EventLogAccess& event_log) {
  dispatcher.bind<p::SessionSearchMethod>(
      [&event_log](const p::SessionSearchParams& params, rpc::Reply<p::SessionSearchResult> reply, const rpc::CallContext&) {
        search(params, std::move(reply), event_log);
      });
  dispatcher.bind<p::SessionExportMethod>(
      [&engine, &event_log](const p::SessionExportParams& params, rpc::Reply<p::SessionExportResult> reply, const rpc::CallContext&) {
        export_session(params, std::move(reply), engine, event_log);
      });
}

}  // namespace switchboard::daemon
