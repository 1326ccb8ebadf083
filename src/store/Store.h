#pragma once

#include <filesystem>
#include <memory>

#include <boost/asio/io_context.hpp>

#include "store/DatabaseOptions.h"
#include "store/EventLog.h"
#include "store/RuleStore.h"
#include "store/SessionStore.h"
#include "store/StoreError.h"
#include "store/StoreWorker.h"

namespace switchboard::store {

struct StoreOptions {
  DatabaseOptions database;
  EventLogOptions event_log;
};

// The daemon's persistence in one owner: the store thread with its SQLite connection, the durable event log,
// and the session and permission-rule tables. Owned by the daemon, which opens it at startup and closes it
// as the last step of shutdown:
//
//   auto store = store::Store::open(io, data_dir / store::Store::kFileName);   // before io.run()
//   if (!store) { spdlog::error("{}", store.error().message); return kExitFailure; }
//   egress.take_seqs_from((*store)->events());      // seqs continue after the stored ones, reserved durably
//   egress.add_sink((*store)->events());
//   ...
//   egress.remove_sink(store->events());   // after the last event (daemon.shutdown) went out
//   store->close();                        // hands over the tail, commits, closes the file, joins the thread
class Store {
 public:
  static constexpr const char* kFileName = "switchboard.db";

  // Starts the store thread, opens (creating and migrating as needed) the database at `path` and loads the
  // event log's state. Blocking, for startup: the reactor is not running yet. The io_context receives every
  // later result and must outlive the Store.
  static StoreResult<std::unique_ptr<Store>> open(boost::asio::io_context& io, const std::filesystem::path& path,
                                                  StoreOptions options = {});

  Store(const Store&) = delete;
  Store& operator=(const Store&) = delete;
  ~Store() { close(); }

  EventLog& events() { return *m_events; }
  SessionStore& sessions() { return m_sessions; }
  RuleStore& rules() { return m_rules; }
  StoreWorker& worker() { return *m_worker; }
  const DatabaseInfo& info() const { return m_info; }

  // Idempotent. Hands the event log's uncommitted tail to the store thread, runs every queued job, closes the
  // database and joins the thread. Blocks for as long as that takes (normally a few milliseconds: one
  // commit), so call it last in shutdown. Results of jobs that finish now are posted to the io_context; they
  // run only if it runs again.
  void close();

 private:
  Store(std::unique_ptr<StoreWorker> worker, DatabaseInfo info);

  std::unique_ptr<StoreWorker> m_worker;  // declared first: outlives everything that submits to it
  DatabaseInfo m_info;
  std::unique_ptr<EventLog> m_events;
  SessionStore m_sessions;
  RuleStore m_rules;
};

}  // namespace switchboard::store
