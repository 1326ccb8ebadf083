#pragma once

#include <stdlib.h>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <SQLiteCpp/Database.h>
#include <boost/asio/io_context.hpp>
#include <catch2/catch.hpp>

#include "store/Migrations.h"
#include "store/StoreError.h"
#include "switchboard/bus/EncodedEvent.h"
#include "switchboard/protocol/generated/Events.h"
#include "support/RunHandlersUntil.h"
#include "support/TempDir.h"

namespace switchboard::testing {

// A test's directory that also says where the store's database goes in it.
class StoreTempDir : public TempDir {
 public:
  StoreTempDir() : TempDir("store") {}
  std::filesystem::path db() const { return path() / "switchboard.db"; }
};

// An egress-shaped event: the same JSON layout Egress::encode writes, with data.turnId when `turn_id` is set.
inline bus::EncodedEventPtr make_store_event(std::uint64_t seq, std::string session_id = "s-1",
                                             protocol::EventKind kind = protocol::EventKind::MessageDelta,
                                             std::string turn_id = "t-1", std::string text = "hello") {
  auto event = std::make_shared<bus::EncodedEvent>();
  event->seq = seq;
  event->kind = kind;
  event->session_id = std::move(session_id);
  std::string json = "{\"seq\":" + std::to_string(seq) + ",\"type\":\"" + std::string(protocol::event_info(kind).type) +
                     "\",\"ts\":1700000000000";
  if (!event->session_id.empty()) json += ",\"sessionId\":\"" + event->session_id + "\"";
  json += ",\"data\":{";
  if (!turn_id.empty()) json += "\"turnId\":\"" + turn_id + "\",\"messageId\":\"m-1\",";
  json += "\"kind\":\"text\",\"text\":\"" + text + "\"}}";
  event->json = std::move(json);
  return event;
}

// Brings a new database file to schema version `version` and no further: the file as a daemon of that version left
// it, for a test of what a later migration makes of it.
inline void migrate_to_version(SQLite::Database& db, int version) {
  std::vector<store::Migration> older;
  for (const auto& migration : store::schema_migrations()) {
    if (migration.version <= version) older.push_back(migration);
  }
  REQUIRE(store::migrate(db, older));
  REQUIRE(db.execAndGet("PRAGMA user_version").getInt() == version);
}

// Starts an asynchronous store call with a callback that records its result, and runs `io` until it arrives.
template <class T, class Start>
store::StoreResult<T> await_store(boost::asio::io_context& io, Start start) {
  std::optional<store::StoreResult<T>> result;
  start([&result](store::StoreResult<T> value) { result.emplace(std::move(value)); });
  if (!run_handlers_until(io, [&result] { return result.has_value(); })) {
    return store::StoreError{store::StoreError::Code::Io, "test: timed out waiting for the store"};
  }
  return std::move(*result);
}

}  // namespace switchboard::testing

// REQUIRE(result) prints "ok" or the StoreError. Without this Catch would pick boost's operator<< for result,
// which needs an operator<< for every T.
namespace Catch {
template <class T>
struct StringMaker<boost::system::result<T, switchboard::store::StoreError>> {
  static std::string convert(const boost::system::result<T, switchboard::store::StoreError>& result) {
    if (result) return "ok";
    std::ostringstream text;
    text << "error: " << result.error();
    return text.str();
  }
};
}  // namespace Catch
