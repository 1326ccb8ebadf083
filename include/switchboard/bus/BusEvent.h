#pragma once

#include <string>
#include <type_traits>
#include <variant>

#include "switchboard/protocol/generated/Events.h"

namespace switchboard::bus {

// An event as the daemon's parts exchange it: a payload generated from schema/events/ plus, for
// session-scoped events, the session it belongs to. The kind is the variant index, so it cannot disagree
// with the payload.
struct BusEvent {
  std::string session_id;  // empty for global events
  protocol::EventPayload payload;

  protocol::EventKind kind() const { return static_cast<protocol::EventKind>(payload.index()); }
};

namespace detail {
template <class T, class Variant> struct VariantIndex;
template <class T, class... Ts>
struct VariantIndex<T, std::variant<Ts...>> {
  static constexpr std::size_t value = [] {
    constexpr bool matches[] = {std::is_same_v<T, Ts>...};
    for (std::size_t i = 0; i < sizeof...(Ts); ++i) {
      if (matches[i]) return i;
    }
    return sizeof...(Ts);
  }();
};
}  // namespace detail

// The EventKind of a payload type, at compile time; a type that is not an event payload does not compile.
template <class Data>
constexpr protocol::EventKind kind_of() {
  constexpr std::size_t index = detail::VariantIndex<Data, protocol::EventPayload>::value;
  static_assert(index < std::variant_size_v<protocol::EventPayload>, "not an event payload declared in schema/events/");
  return static_cast<protocol::EventKind>(index);
}

}  // namespace switchboard::bus
