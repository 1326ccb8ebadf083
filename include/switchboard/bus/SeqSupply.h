#pragma once

#include <cstddef>
#include <cstdint>

namespace switchboard::bus {

// The seqs the egress may hand out: every one through `through`. Once it numbers `ask_at` it asks for more (once
// per grant), early enough that the next grant usually arrives before this one is used up.
struct SeqGrant {
  std::uint64_t through = 0;
  std::uint64_t ask_at = 0;
};

// The egress as a seq supply sees it (Egress implements it): the one that numbers events and takes grants.
class SeqConsumer {
 public:
  virtual ~SeqConsumer() = default;
  // Replaces the grant in force: the held events it covers go out, in order.
  virtual void grant_seqs(SeqGrant grant) = 0;
  // The supply is closing and answers no more requests; the last grant stays in force.
  virtual void end_supply() = 0;
  // The highest seq numbered: delivered, or held for want of a grant.
  virtual std::uint64_t numbered_seq() const = 0;
  // The highest seq delivered to the sinks.
  virtual std::uint64_t last_seq() const = 0;
  // Events numbered past the grant, waiting for a larger one.
  virtual std::size_t held_count() const = 0;
};

// Where the egress's seqs come from when a seq must never name two events, across crashes too: the durable event
// log, which reserves seqs in the store before it grants them (docs/persistence.md, "Seq reservation"). Without
// a supply (an ephemeral daemon, most tests) the egress hands out every seq at once. Neither side sees more of the
// other than these two interfaces.
class SeqSupply {
 public:
  virtual ~SeqSupply() = default;
  // The seq the numbering continues after: at least the highest one an earlier run may have handed out.
  virtual std::uint64_t last_seq() const = 0;
  // Starts supplying `consumer`: its first grant now, the next ones as it asks. Once; the consumer must outlive
  // the supply's end (SeqConsumer::end_supply).
  virtual void start_supplying(SeqConsumer& consumer) = 0;
  // The consumer numbered its grant's ask_at: grant more as soon as that can be done (it may be later).
  virtual void on_running_low() = 0;
};

}  // namespace switchboard::bus
