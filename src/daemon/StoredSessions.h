#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <boost/asio/io_context.hpp>

#include "engine/SessionPersistence.h"
#include "store/Store.h"

namespace switchboard::daemon {

// The engine's persistence, backed by the SQLite store: sessions (with their MCP servers, chosen option values,
// fork origin, latest plan and usage as JSON in their row), their runs, their ended turns, the prompts a session still owes
// (the store's interrupted-turn row, holding the running prompt and the queue as JSON), and project/always rules.
// Storage failures are logged here with their details; callers get a StoreFailure with a short reason.
class StoredSessions : public engine::SessionPersistence {
 public:
  explicit StoredSessions(store::Store& store) : m_store(store) {}

  // Reads what the engine restores at startup (the sessions that owe prompts, not every stored one). Blocking (runs the io_context until the store answered):
  // call it before serving, when nothing else runs on the reactor.
  static store::StoreResult<engine::PersistedState> load(boost::asio::io_context& io, store::Store& store);

  void insert_session(const engine::StoredSession& session, const std::optional<engine::ConversationBinding>& binding,
                      Done done) override;
  void update_session(const engine::StoredSession& session, Done done) override;
  void delete_session(const std::string& session_id, Done done) override;
  void load_session(const std::string& session_id,
                    std::function<void(engine::Outcome<std::optional<engine::StoredSession>>)> done) override;
  void list_sessions(const engine::StoredSessionQuery& query,
                     std::function<void(engine::Outcome<engine::StoredSessionPage>)> done) override;
  void record_run(const std::string& session_id, const std::string& provider_session_id) override;
  void latest_run(const std::string& session_id, std::function<void(std::optional<engine::ConversationBinding>)> done) override;
  void session_continuing(const std::string& agent, const std::string& provider_session_id,
                          std::function<void(engine::Outcome<std::optional<std::string>>)> done) override;
  // A fork's exchanges begin with its source's through the fork's turn (followed back through forks of forks).
  void exchanges(const std::string& session_id, std::function<void(std::vector<engine::Exchange>)> done) override;
  void record_turn(const std::string& session_id, const engine::TurnRecord& turn) override;
  void turns(const std::string& session_id, std::function<void(std::vector<engine::TurnRecord>)> done) override;
  void mark_rewound(const std::string& session_id, const std::vector<std::string>& turn_ids, Done done) override;
  void save_outstanding(const std::string& session_id, const engine::OutstandingWork& work) override;
  void add_rule(const protocol::RememberedRule& rule, Done done) override;
  void remove_rule(const std::string& rule_id, Done done) override;

  // Where reading a session's exchanges stops: after the exchange of one turn (a fork's turn), or at the first
  // event after a time (a fork made without a turn holds what its source held when it was made); neither: the end.
  struct ExchangeEnd {
    std::optional<std::string> through_turn;
    std::optional<std::int64_t> until_ms;
  };

 private:
  // The exchanges of `session_id`'s conversation up to `end`: its fork source's first (`forks_left` deep), then
  // its own.
  void conversation_exchanges(const std::string& session_id, const ExchangeEnd& end, int forks_left,
                              std::function<void(std::vector<engine::Exchange>)> done);
  store::Store& m_store;
};

}  // namespace switchboard::daemon
