// The switches' actors: one daemon actor per switch, on its host, doing the switch's own work, the
// in-switch reduction and multicast of Transport::switch_reduce. A member chip contributes by starting
// its upload (a flow from its host to the switch host); the last member to contribute queues the
// reduction at the switch and wakes its actor. The actor serves its queue in order: it waits for the
// reduction's uploads, takes the switch's reduction engine (one reduction at a time, bytes added /
// switch_reduce_bandwidth; free if unset), sleeps until the sums are ready, then multicasts: one flow per
// member back to it with the slots that member wants, all published at once, and wakes the members.
// Ordinary traffic never involves a switch's actor (cut-through: a flow holds its whole path at once).
// All calls come from the actors of one simulation, one at a time: no locking beyond SimGrid's.
#pragma once

#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include <simgrid/s4u.hpp>

#include "collectives/transport.hpp"
#include "sim/engines/simgrid/chip_waits.hpp"
#include "sim/engines/simgrid/flows.hpp"
#include "sim/engines/simgrid/recorder.hpp"

namespace ultrasim {

class SwitchActors {
 public:
  // One reduction at a switch, shared by its members' requests and the switch's actor.
  struct Reduction {
    int sw = 0, step = 0;
    std::vector<int> members;
    std::vector<Message> contributions;  // in members order, filled as members contribute
    std::vector<std::vector<int>> wants;
    std::vector<Flow> uploads;
    int count = 0;  // members that have contributed
    // Set by the switch's actor once the sums are ready, all at once: per member, its download
    // (started) and the message it carries.
    std::vector<Flow> downloads;
    std::vector<Message> results;
    bool published() const { return !downloads.empty(); }
  };

  // `waits` wakes the members when a multicast starts; `recorder` keeps the uploads (downloads are
  // recorded when delivered, by the caller).
  SwitchActors(FlowStarter& flows, ChipWaits& waits, Recorder& recorder);

  // The rate of every switch's reduction engine (B/s; nullopt: free). Set before run().
  void set_reduce_bandwidth(std::optional<double> rate) { reduce_bandwidth_ = rate; }
  // One actor per switch, named after its host. Call once, before run().
  void start();

  // Member `self`'s contribution to the reduction (sw, step) of `members` (every member contributes once,
  // with the same members): starts its upload now; the last one queues the reduction at the switch.
  // Returns the reduction and the member's index in it. Throws std::logic_error if `self` is not a
  // member or the members differ from the first contributor's.
  std::pair<std::shared_ptr<Reduction>, int> contribute(int self, int sw, const std::vector<int>& members,
                                                        Message message, const std::vector<int>& wants,
                                                        int step);

 private:
  struct Switch {
    std::deque<std::shared_ptr<Reduction>> queue;  // complete: every member contributed
    simgrid::s4u::ConditionVariablePtr wake;
  };
  void serve(int sw);  // the switch actor's body
  // One reduction: waits for its uploads (recording them), takes the engine, sleeps until the sums
  // are ready, multicasts.
  void reduce(Reduction& r);
  // When the engine has added `r`, its uploads having arrived at `ready`; reserves the engine till then.
  double engine_done(const Reduction& r, double ready);
  // Sleeps until `until`, waking at the very instant a sleep_until(until) begun at `since` (<= now: when
  // the reduction's last upload ended) would end. Where a sleep begins changes the last bit of when
  // SimGrid ends it: so the multicast starts at the same instant whether the actor was free when the
  // uploads arrived or still busy with the reduction before.
  static void sleep_as_if_from(double since, double until);
  void multicast(Reduction& r);

  FlowStarter& flows_;
  ChipWaits& waits_;
  Recorder& recorder_;
  std::optional<double> reduce_bandwidth_;  // nullopt: reductions at the switch are free
  std::vector<Switch> switches_;
  std::vector<double> busy_until_;  // per switch: when its reduction engine is free
  std::map<std::pair<int, int>, std::shared_ptr<Reduction>> open_;  // (switch, step): not all contributed
};

}  // namespace ultrasim
