#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <thread>
#include <vector>

#include "switchboard/bus/BusEvent.h"

namespace switchboard::bus {

class EventBus;

// RAII handle of one subscription: destroying it unsubscribes, also from inside a notification.
class [[nodiscard]] Subscription {
 public:
  Subscription() = default;
  Subscription(EventBus* bus, std::uint64_t id) : m_bus(bus), m_id(id) {}
  Subscription(Subscription&& other) noexcept : m_bus(std::exchange(other.m_bus, nullptr)), m_id(other.m_id) {}
  Subscription& operator=(Subscription&& other) noexcept;
  Subscription(const Subscription&) = delete;
  Subscription& operator=(const Subscription&) = delete;
  ~Subscription() { reset(); }

  void reset();

 private:
  EventBus* m_bus = nullptr;
  std::uint64_t m_id = 0;
};

// The process-wide event bus. One instance is owned by the daemon (or a test) and installed for the lifetime
// of an Installation; the() reaches it from anywhere and asserts that one is installed.
//
// publish() notifies the subscribers of the event's kind, then the wildcard subscribers, synchronously and in
// subscription order. Events published by a subscriber while it is being notified are queued and delivered
// after the current event has reached everybody, so every subscriber sees events in publish order.
// Single-threaded: used only on the io_context thread.
class EventBus {
 public:
  using Listener = std::function<void(const BusEvent&)>;

  EventBus() = default;
  EventBus(const EventBus&) = delete;
  EventBus& operator=(const EventBus&) = delete;
  ~EventBus();

  class [[nodiscard]] Installation {
   public:
    explicit Installation(EventBus& bus);
    Installation(const Installation&) = delete;
    Installation& operator=(const Installation&) = delete;
    ~Installation();
  };

  static EventBus& the();
  static bool installed();

  Subscription subscribe(protocol::EventKind kind, Listener listener);
  Subscription subscribe_all(Listener listener);

  void publish(BusEvent event);
  template <class Data>
  void publish(std::string session_id, Data data) {
    static_assert(kind_of<Data>() == kind_of<Data>());  // Data must be a schema event payload
    publish(BusEvent{std::move(session_id), protocol::EventPayload(std::in_place_type<Data>, std::move(data))});
  }
  template <class Data>
  void publish_global(Data data) {
    publish(std::string(), std::move(data));
  }

 private:
  friend class Subscription;
  struct Slot {
    std::uint64_t id;
    Listener listener;
    bool active = true;
  };
  static constexpr std::size_t kWildcard = std::variant_size_v<protocol::EventPayload>;

  Subscription add(std::size_t list, Listener listener);
  void remove(std::uint64_t id);
  void deliver(const BusEvent& event);
  void compact();

  // One list per kind, plus the wildcard list last. unique_ptr keeps a Slot in place while the vector grows
  // under a subscriber that subscribes during notification.
  std::vector<std::unique_ptr<Slot>> m_lists[kWildcard + 1];
  std::deque<BusEvent> m_pending;
  bool m_delivering = false;
  bool m_needs_compaction = false;
  std::uint64_t m_next_id = 1;
};

}  // namespace switchboard::bus
