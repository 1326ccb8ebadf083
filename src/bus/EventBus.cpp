#include "switchboard/bus/EventBus.h"

#include <algorithm>

#include "switchboard/support/Bug.h"

namespace switchboard::bus {
namespace {

EventBus* g_installed = nullptr;

}  // namespace

Subscription& Subscription::operator=(Subscription&& other) noexcept {
  if (this != &other) {
    reset();
    m_bus = std::exchange(other.m_bus, nullptr);
    m_id = other.m_id;
  }
  return *this;
}

void Subscription::reset() {
  if (m_bus != nullptr) std::exchange(m_bus, nullptr)->remove(m_id);
}

EventBus::~EventBus() {
  SWITCHBOARD_ASSERT(g_installed != this, "event bus destroyed while installed");
}

EventBus::Installation::Installation(EventBus& bus) {
  SWITCHBOARD_ASSERT(g_installed == nullptr, "a second event bus installed");
  g_installed = &bus;
}

EventBus::Installation::~Installation() { g_installed = nullptr; }

EventBus& EventBus::the() {
  SWITCHBOARD_ASSERT(g_installed != nullptr, "no event bus installed");
  return *g_installed;
}

bool EventBus::installed() { return g_installed != nullptr; }

Subscription EventBus::subscribe(protocol::EventKind kind, Listener listener) {
  return add(static_cast<std::size_t>(kind), std::move(listener));
}

Subscription EventBus::subscribe_all(Listener listener) { return add(kWildcard, std::move(listener)); }

Subscription EventBus::add(std::size_t list, Listener listener) {
  const std::uint64_t id = m_next_id++;
  m_lists[list].push_back(std::make_unique<Slot>(Slot{id, std::move(listener)}));
  return Subscription(this, id);
}

void EventBus::remove(std::uint64_t id) {
  for (auto& list : m_lists) {
    for (auto& slot : list) {
      if (slot->id == id) slot->active = false;
    }
  }
  m_needs_compaction = true;
  if (!m_delivering) compact();
}

void EventBus::compact() {
  for (auto& list : m_lists) {
    std::erase_if(list, [](const std::unique_ptr<Slot>& slot) { return !slot->active; });
  }
  m_needs_compaction = false;
}

void EventBus::publish(BusEvent event) {
  SWITCHBOARD_ASSERT(
      protocol::event_info(event.kind()).scope == protocol::EventScope::Global || !event.session_id.empty(),
      "session-scoped event published without a session id");
  if (m_delivering) {
    m_pending.push_back(std::move(event));
    return;
  }
  m_delivering = true;
  struct Reset {
    EventBus& bus;
    ~Reset() {
      bus.m_delivering = false;
      if (bus.m_needs_compaction) bus.compact();
    }
  } reset{*this};
  deliver(event);
  while (!m_pending.empty()) {
    const BusEvent next = std::move(m_pending.front());
    m_pending.pop_front();
    deliver(next);
  }
}

void EventBus::deliver(const BusEvent& event) {
  for (const std::size_t list : {static_cast<std::size_t>(event.kind()), kWildcard}) {
    // Index loop: a listener may subscribe (growing the vector) while we iterate; new slots see the next event.
    const std::size_t count = m_lists[list].size();
    for (std::size_t i = 0; i < count; ++i) {
      Slot* slot = m_lists[list][i].get();
      if (slot->active) slot->listener(event);
    }
  }
}

}  // namespace switchboard::bus
