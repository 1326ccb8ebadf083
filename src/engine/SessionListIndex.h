#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "switchboard/protocol/generated/Types.h"

namespace switchboard::engine {

// The order session.list pages through, kept as sessions come and go: newest first (createdAt), the session id
// breaking ties. A page starts at its cursor with one lookup and reads on from there, so its cost does not grow
// with the number of sessions (sorting them all on every call cost 29 ms at 20,000; see docs/performance.md).
// It holds no session data of its own, only where each session sits and where its info lives (in its Session);
// createdAt never changes once a session exists. The engine lists through it without persistence; with
// persistence the store serves session.list in the same order, with the same cursors.
class SessionListIndex {
 public:
  struct Position {
    std::int64_t created_at = 0;
    std::string session_id;
  };

  // Adds the session, or points its position at where its info lives now.
  void insert(Position position, const protocol::SessionInfo* info) { m_order.insert_or_assign(std::move(position), info); }
  void erase(const Position& position) { m_order.erase(position); }
  std::size_t size() const { return m_order.size(); }

  // Calls visit(position, info) for every session after `after` (all of them without it), in list order,
  // until visit returns false. `after` need not be in the index (its session may be gone since).
  template <class Visit>
  void visit_after(const std::optional<Position>& after, Visit visit) const {
    for (auto it = after ? m_order.upper_bound(*after) : m_order.begin(); it != m_order.end(); ++it) {
      if (!visit(it->first, *it->second)) return;
    }
  }

  // The cursor names a position, "<createdAt>/<sessionId>", so a page after a session deleted meanwhile still
  // starts where that session was. nullopt when `cursor` is not one (a bare session id, as cursors once were).
  static std::string cursor_for(const Position& position);
  static std::optional<Position> parse_cursor(std::string_view cursor);

 private:
  struct NewestFirst {
    bool operator()(const Position& a, const Position& b) const {
      return a.created_at != b.created_at ? a.created_at > b.created_at : a.session_id > b.session_id;
    }
  };
  std::map<Position, const protocol::SessionInfo*, NewestFirst> m_order;
};

}  // namespace switchboard::engine
