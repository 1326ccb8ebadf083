#include "store/Store.h"

#include <utility>

namespace switchboard::store {

Store::Store(std::unique_ptr<StoreWorker> worker, DatabaseInfo info)
    : m_worker(std::move(worker)), m_info(std::move(info)), m_sessions(*m_worker), m_rules(*m_worker) {}

StoreResult<std::unique_ptr<Store>> Store::open(boost::asio::io_context& io, const std::filesystem::path& path,
                                                StoreOptions options) {
  auto worker = std::make_unique<StoreWorker>(io);
  auto info = worker->open(path, options.database);
  if (!info) return info.error();
  std::unique_ptr<Store> store(new Store(std::move(worker), std::move(*info)));
  auto events = EventLog::open(io, *store->m_worker, options.event_log);
  if (!events) return events.error();
  store->m_events = std::move(*events);
  return store;
}

void Store::close() {
  if (m_events) m_events->close();
  m_worker->shutdown();
}

}  // namespace switchboard::store
