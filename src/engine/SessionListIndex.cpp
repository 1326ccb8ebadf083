#include "engine/SessionListIndex.h"

#include <charconv>

namespace switchboard::engine {

std::string SessionListIndex::cursor_for(const Position& position) {
  return std::to_string(position.created_at) + "/" + position.session_id;
}

std::optional<SessionListIndex::Position> SessionListIndex::parse_cursor(std::string_view cursor) {
  const auto slash = cursor.find('/');
  if (slash == std::string_view::npos || slash == 0 || slash + 1 == cursor.size()) return std::nullopt;
  Position position;
  const auto [end, error] = std::from_chars(cursor.data(), cursor.data() + slash, position.created_at);
  if (error != std::errc() || end != cursor.data() + slash) return std::nullopt;
  position.session_id = std::string(cursor.substr(slash + 1));
  return position;
}

}  // namespace switchboard::engine
